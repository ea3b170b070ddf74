// One page: a REQ sent on an open connection, read through the one bounded remote read
// (remote/read.ts: events up to `limit`, bytes up to `maxBytes`, a deadline besides the idle timeout,
// unchecked events held only a window at a time). Every event is checked here before anyone sees
// it: shape, size and the filter we asked for (with our own inclusive bounds), repeats within the
// page dropped. An event of the right kind and authors dated outside since/until is dropped too, but
// counted apart (`outside`): relays with sloppy bounds send them, and they take a place in the page. Each window of such events then goes to `admit` (admit.ts, socket paused): what the
// home already holds is not checked again, the rest has its id and signature checked, and only the
// valid ones stay in the page. Most copies on the network are duplicates, so the known-check comes
// first.
import type { RelayClient } from '../../remote/client.js';
import { Dropped, readEvents, type ReadResult } from '../../remote/read.js';
import { structureError, canonical, type NostrEvent } from '../../nostr/event.js';
import { matchFilter, toWire, type Filter, type WireFilter } from '../../nostr/filter.js';

export interface PageRequest {
  /** the filter as we mean it: since/until inclusive; its limit bounds the events the page takes */
  filter: Filter;
  /** relay's since/until are exclusive: widen by one second on the wire */
  exclusive: boolean;
  idleTimeout: number;
  maxEventBytes: number;
  /** bytes of frames the page may bring (refused ones included) before it is cut */
  maxBytes: number;
  /** ms from the REQ: the page is cut then, whatever arrives */
  deadline: number;
  signal?: AbortSignal;
  /**
   * Admits a window of page-checked events (ids and signatures: admit.ts); returns the valid ones.
   * The events it leaves out count as forged (towards a hostile page).
   */
  admit(evs: NostrEvent[]): Promise<NostrEvent[]>;
  /** keep the valid events in the result (paging reads them); false: only counted (the lookup hands them on and forgets) */
  keep?: boolean;
}

export interface PageResult {
  /** the request was widened for exclusive bounds */
  exclusive: boolean;
  /** valid events (known to the home, or signature-checked), in arrival order, repeats removed; empty with keep: false */
  events: NostrEvent[];
  /** events admitted as valid (events.length when kept) */
  valid: number;
  eose: boolean;
  /** NIP-67: the EOSE said every stored match was sent (no page after this one) */
  finish: boolean;
  /** the relay's CLOSED reason (or 'connection: ...' when the connection went away) */
  closed?: string;
  /** no event accepted for idleTimeout, without EOSE */
  timedOut: boolean;
  /** more events than `limit` arrived; the excess was dropped and the subscription closed */
  flooded: boolean;
  /** cut by its bytes or its deadline before EOSE: more may follow (paging goes on) */
  cut?: 'bytes' | 'deadline';
  /** most of what the relay sent was forged, malformed or outside the filter: it is cut off */
  hostile: boolean;
  /** bytes of the page's frames */
  bytes: number;
  /** dropped by the page checks (signature failures are counted by the admission) */
  invalid: { shape: number; mismatch: number; oversized: number; flood: number };
  /**
   * events that matched the filter but for its since/until (dropped): the relay spent places of the
   * page on them, so a page is full when they and the valid events reach its limit
   */
  outside: number;
}

/**
 * The wire filter for an inclusive filter, widened for relays with exclusive bounds. `since` 0 asks
 * for nothing and is left out (an exclusive relay would read it as "after 0" and leave out events
 * dated 0). `until` is never below 1 on the wire: relays read `until <= 0` as no until at all and
 * answer with their newest page again; paging never asks for it (second 0 ends a window, paging.ts),
 * and if a filter did, second 1 would come along and be dropped as outside it.
 */
export function wireFilter(f: Filter, exclusive: boolean): WireFilter {
  const w = toWire(f);
  if (w.since !== undefined && w.since <= 0) delete w.since;
  if (w.until !== undefined && w.until < 1) w.until = 1;
  if (exclusive) {
    if (w.since !== undefined) w.since -= 1;
    if (w.until !== undefined) w.until += 1;
  }
  return w;
}

/** The filter without its time window: what an event outside since/until would otherwise match. */
const unbounded = (f: Filter): Filter => ({ ...f, since: undefined, until: undefined });

/** A NOTICE that refuses the REQ (relays that answer a REQ with NOTICE instead of CLOSED). */
const NOTICE_REFUSAL = /rate|limit|auth|restricted|too many|slow down|error|invalid/i;

export async function runPage(client: RelayClient, req: PageRequest): Promise<PageResult> {
  const ids = new Set<string>();
  const keep = req.keep !== false;
  let valid = 0;
  let whole: Filter | undefined;
  const r: ReadResult<NostrEvent> = await readEvents<NostrEvent, NostrEvent>(client, {
    filters: [wireFilter(req.filter, req.exclusive)],
    maxEvents: req.filter.limit ?? Infinity,
    maxBytes: req.maxBytes,
    deadline: req.deadline,
    idleTimeout: req.idleTimeout,
    signal: req.signal,
    noticeRefusal: NOTICE_REFUSAL,
    check: (raw, bytes) => {
      if (bytes > req.maxEventBytes + 200) return Dropped.of.oversized;
      if (structureError(raw) !== null) return Dropped.of.shape;
      const ev = canonical(raw as NostrEvent);
      if (!matchFilter(req.filter, ev)) return matchFilter(whole ??= unbounded(req.filter), ev) ? Dropped.of.outside : Dropped.of.mismatch;
      if (ids.has(ev.id)) return Dropped.of.repeat;
      ids.add(ev.id);
      return ev;
    },
    admit: async (evs) => {
      const ok = await req.admit(evs);
      valid += ok.length;
      return { kept: keep ? ok : [], invalid: evs.length - ok.length };
    },
  });
  const cut = r.end === 'bytes' || r.end === 'deadline' ? r.end : undefined;
  return {
    exclusive: req.exclusive,
    events: r.kept,
    valid,
    eose: r.end === 'eose',
    finish: r.end === 'eose' && r.finish === true,
    closed: r.end === 'closed' || r.end === 'aborted' ? r.reason ?? 'closed' : undefined,
    timedOut: r.end === 'idle',
    flooded: r.end === 'flood',
    ...(cut ? { cut } : {}),
    hostile: r.end === 'hostile',
    bytes: r.bytes,
    invalid: { shape: r.dropped.shape, mismatch: r.dropped.mismatch, oversized: r.dropped.oversized, flood: r.end === 'flood' ? 1 : 0 },
    outside: r.dropped.outside,
  };
}
