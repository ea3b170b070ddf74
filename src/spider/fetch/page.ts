// One page: a REQ sent on an open connection, read until EOSE, CLOSED, the idle timeout, or more
// events than asked for. Every event is checked here before anyone sees it: shape, size and the
// filter we asked for (with our own inclusive bounds). Its id and signature are checked later, and
// only when the home does not hold it yet (admit.ts): most copies on the network are duplicates.
import type { RelayClient } from '../../remote/client.js';
import { structureError, canonical, type NostrEvent } from '../../nostr/event.js';
import { matchFilter, toWire, type Filter, type WireFilter } from '../../nostr/filter.js';

export interface PageRequest {
  /** the filter as we mean it: since/until inclusive */
  filter: Filter;
  /** relay's since/until are exclusive: widen by one second on the wire */
  exclusive: boolean;
  idleTimeout: number;
  maxEventBytes: number;
  signal?: AbortSignal;
}

export interface PageResult {
  /** the request was widened for exclusive bounds */
  exclusive: boolean;
  /** well-formed, matching events, in arrival order (duplicates within the page removed); id and signature not checked yet */
  events: NostrEvent[];
  eose: boolean;
  /** the relay's CLOSED reason (or 'connection: ...' when the connection went away) */
  closed?: string;
  /** no message for idleTimeout, without EOSE */
  timedOut: boolean;
  /** more events than `limit` arrived; the excess was dropped and the subscription closed */
  flooded: boolean;
  invalid: { shape: number; mismatch: number; oversized: number; flood: number };
}

/** The wire filter for an inclusive filter, widened for relays with exclusive bounds. */
export function wireFilter(f: Filter, exclusive: boolean): WireFilter {
  const w = toWire(f);
  if (exclusive) {
    if (w.since !== undefined && w.since > 0) w.since -= 1;
    if (w.until !== undefined) w.until += 1;
  }
  return w;
}

export function runPage(client: RelayClient, req: PageRequest): Promise<PageResult> {
  const limit = req.filter.limit ?? Infinity;
  const result: PageResult = { exclusive: req.exclusive, events: [], eose: false, timedOut: false, flooded: false, invalid: { shape: 0, mismatch: 0, oversized: 0, flood: 0 } };
  const ids = new Set<string>();
  let received = 0;
  return new Promise((resolve) => {
    let done = false;
    let idle: NodeJS.Timeout;
    const finish = (unsubscribe: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(idle);
      req.signal?.removeEventListener('abort', onAbort);
      removeNotice();
      if (unsubscribe) client.unsubscribe(subId);
      resolve(result);
    };
    const arm = () => {
      clearTimeout(idle);
      idle = setTimeout(() => { result.timedOut = true; finish(true); }, req.idleTimeout);
    };
    const onAbort = () => { result.closed = 'connection: aborted'; finish(true); };
    req.signal?.addEventListener('abort', onAbort, { once: true });
    // Relays that refuse a REQ with a NOTICE instead of CLOSED: take the text as the refusal
    // when nothing else has come for this page yet.
    const removeNotice = client.addNoticeListener((text) => {
      if (received === 0 && !result.eose && /rate|limit|auth|restricted|too many|slow down|error|invalid/i.test(text)) {
        result.closed = text;
        finish(true);
      }
    });
    const subId = client.subscribe([wireFilter(req.filter, req.exclusive)], {
      event: (raw, bytes) => {
        if (done) return;
        arm();
        received++;
        if (received > limit) {
          // A relay never owes us more than limit events before EOSE: stop reading this one.
          result.flooded = true;
          result.invalid.flood++;
          finish(true);
          return;
        }
        if (raw === undefined || bytes > req.maxEventBytes + 200) { result.invalid.oversized++; return; }
        if (structureError(raw) !== null) { result.invalid.shape++; return; }
        const ev = canonical(raw as NostrEvent);
        if (!matchFilter(req.filter, ev)) { result.invalid.mismatch++; return; }
        if (ids.has(ev.id)) return;
        ids.add(ev.id);
        result.events.push(ev);
      },
      eose: () => { result.eose = true; finish(true); },
      closed: (reason) => { result.closed = reason || 'closed'; finish(false); },
    });
    arm();
  });
}
