// REQ: stored events newest first, EOSE, then live events. The subscription is live from the
// moment the REQ arrives; events that arrive during the scan wait in `pending` and are sent after
// EOSE unless the scan already returned them, so nothing is missed or sent twice.
import { closedMessage, eoseMessage, eventFraming, eventMessage } from '../../nostr/messages.js';
import { isEmptyFilter, type Filter } from '../../nostr/filter.js';
import { answerLimits, maxAnswerEvents } from '../../nostr/lookups.js';
import { frameCount, frameJson, framesJsonBytes, type EventFrames } from '../../nostr/frames.js';
import type { RelayContext } from '../context.js';
import type { Connection, Subscription } from '../connection.js';
import { admitFilters, QUEUE_FULL, refuse } from './filters.js';
import { closeSubscription } from './close.js';
import { boundedWait, lookupAfterScan } from '../lookup.js';

/** Live events held per subscription while its scan runs; beyond this the oldest are dropped. */
const MAX_PENDING = 5000;

export async function handleReq(h: RelayContext, conn: Connection, subId: string, raw: unknown[]): Promise<void> {
  const filters = admitFilters(h, conn, subId, raw, 'REQ');
  if (!filters) return;
  if (conn.subs.has(subId)) closeSubscription(h, conn, subId);
  else if (conn.subs.size >= h.config.limits.maxSubscriptions) {
    return refuse(h, conn, subId, 'REQ', `rate-limited: too many open subscriptions on this connection (at most ${h.config.limits.maxSubscriptions}); close one first`);
  }
  // what the subscription holds in the live index is charged to the connection and its address
  const held = h.access.budgets.holdFilters(conn, filters, true);
  if (typeof held === 'string') return refuse(h, conn, subId, 'REQ', held);
  const sub: Subscription = { conn, subId, filters, abort: { aborted: false }, pending: [], seen: null, release: held };
  conn.subs.set(subId, sub);
  h.live.add(sub);
  h.metrics.reqs.inc();

  const t0 = performance.now();
  const { limits } = h.config;
  const scan = answerLimits(
    filters.filter((f) => f.limit !== 0 && !isEmptyFilter(f)),
    { defaultLimit: limits.defaultLimit, maxLimit: limits.maxLimit, maxEvents: maxAnswerEvents(limits) },
  );
  let results: EventFrames | null = null;
  const framing = eventFraming(subId);
  const seen = { upTo: 0, newer: new Set<string>() };
  const guard = h.queries.scanGuard(sub.abort);
  let release: (() => void) | null = null;
  conn.busy++;
  try {
    if (scan.length > 0) {
      release = await h.access.querySlot(conn);
      if (!release) {
        closeSubscription(h, conn, subId);
        refuse(h, conn, subId, 'REQ', QUEUE_FULL);
        return;
      }
      if (sub.abort.aborted) return;
      // every filter has its limit now (answerLimits): the store's clamp is the REQ's bound
      results = await h.queries.query(scan, { defaultLimit: limits.defaultLimit, maxLimit: maxAnswerEvents(limits), signal: guard.signal, seen, lend: true }, framing);
      sub.seen = seen;
      h.access.querySlots.charge(conn, framesJsonBytes(results)); // as read.resultBytesPerIp counts them
    }
  } catch (e) {
    if (!sub.abort.aborted) {
      h.logger.error({ err: e, subId }, 'query failed');
      closeSubscription(h, conn, subId);
      conn.send(closedMessage(subId, 'error: the query failed'));
    }
    return;
  } finally {
    release?.();
    conn.busy--;
  }
  if (sub.abort.aborted) {
    if (results) h.queries.release(results);
    return;
  }
  if (guard.tripped) {
    const why = guard.tripped === 'budget' ? 'the query read more index entries than this relay allows for one REQ' : 'the query ran too long';
    closeSubscription(h, conn, subId);
    h.metrics.refusals.inc({ reason: 'error' });
    h.access.refused('REQ', `error: ${why}`, conn.ip);
    if (sendFrames(h, conn, scan, results, framing.prefix)) conn.send(closedMessage(subId, `error: ${why}; the newest matches found were sent, narrow the filter (authors, kinds, since/until) for more`));
    done(h, conn, results);
    return;
  }
  // lookup on a miss (lookup.ts): what it finds comes as live events, during the wait or after EOSE
  const lookup = h.lookup ? lookupAfterScan(h.lookup, conn.key, scan, results, maxAnswerEvents(limits)) : null;
  const wait = lookup && h.lookup!.waitMs > 0 ? lookup : null;
  const pending = sub.pending ?? [];
  sub.pending = null;
  if (wait) {
    // the stored answer and what arrived during the scan now, EOSE once the lookup is done or the bound passed
    if (sendFrames(h, conn, scan, results, framing.prefix)) for (const p of pending) if (!covered(sub, p.id, p.serial) && !conn.send(eventMessage(subId, p.json))) break;
    done(h, conn, results);
    h.metrics.queryLatency.observe((performance.now() - t0) / 1000);
    await boundedWait(wait, h.lookup!.waitMs);
    if (!sub.abort.aborted) conn.send(eoseMessage(subId));
    return;
  }
  if (sendFrames(h, conn, scan, results, framing.prefix) && conn.send(eoseMessage(subId))) {
    for (const p of pending) if (!covered(sub, p.id, p.serial) && !conn.send(eventMessage(subId, p.json))) break;
  }
  done(h, conn, results);
  h.metrics.queryLatency.observe((performance.now() - t0) / 1000);
}

/** Writes what was queued for the connection now (uWS copies it), then the answer's buffer is free. */
function done(h: RelayContext, conn: Connection, frames: EventFrames | null): void {
  if (!frames) return;
  conn.flush();
  h.queries.release(frames);
}

/**
 * Sends a scan's results (ready EVENT frames) to the connection, without the events of protected
 * kinds this reader may not see (policy/read.ts: DMs only to their author or recipient). False
 * when the connection went away on the way.
 */
function sendFrames(h: RelayContext, conn: Connection, filters: Filter[], frames: EventFrames | null, prefix: Uint8Array): boolean {
  if (!frames) return true;
  const n = frameCount(frames);
  if (n === 0) return true;
  const dms = h.access.dms;
  let skip: Uint8Array | null = null;
  if (dms.needsFiltering(filters, conn.authed)) {
    for (let i = 0; i < n; i++) {
      if (dms.kinds.has(frames.kinds[i]!) && !dms.canSeeJson(frameJson(frames, i), conn.authed)) (skip ??= new Uint8Array(n))[i] = 1;
    }
  }
  return conn.sendAnswer(frames, prefix, skip);
}

/** Whether the subscription's scan already returned (or could see) this event. */
function covered(sub: Subscription, id: string, serial: number | undefined): boolean {
  const seen = sub.seen;
  if (!seen || serial === undefined) return false;
  if (serial <= seen.upTo) return true;
  return seen.newer.delete(id); // each such id is fanned out once: forget it then
}

/** Queue or send one live event to a subscription. */
export function deliver(h: RelayContext, sub: Subscription, id: string, json: string, serial?: number): void {
  if (sub.pending) {
    if (sub.pending.length >= MAX_PENDING) sub.pending.shift();
    sub.pending.push({ id, json, serial });
    return;
  }
  if (covered(sub, id, serial)) return;
  h.metrics.deliveries.inc();
  sub.conn.send(eventMessage(sub.subId, json));
}
