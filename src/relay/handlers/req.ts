// REQ: stored events newest first, EOSE, then live events. The subscription is live from the
// moment the REQ arrives; events that arrive during the scan wait in `pending` and are sent after
// EOSE unless the scan already returned them, so nothing is missed or sent twice.
import { closedMessage, eoseMessage, eventMessage } from '../../nostr/messages.js';
import { isEmptyFilter } from '../../nostr/filter.js';
import type { RelayContext } from '../context.js';
import type { Connection, Subscription } from '../connection.js';
import { admitFilters, QUEUE_FULL, refuse } from './filters.js';
import { closeSubscription } from './close.js';

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
  const scan = filters.filter((f) => f.limit !== 0 && !isEmptyFilter(f));
  let results: string[] = [];
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
      results = await h.queries.query(scan, { defaultLimit: h.config.limits.defaultLimit, maxLimit: h.config.limits.maxLimit, signal: guard.signal, seen });
      sub.seen = seen;
      results = h.access.visibleResults(scan, conn.authed, results);
      let bytes = 0;
      for (const r of results) bytes += r.length;
      h.access.querySlots.charge(conn, bytes);
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
  if (sub.abort.aborted) return;
  if (guard.tripped) {
    const why = guard.tripped === 'budget' ? 'the query read more index entries than this relay allows for one REQ' : 'the query ran too long';
    closeSubscription(h, conn, subId);
    h.metrics.refusals.inc({ reason: 'error' });
    h.access.refused('REQ', `error: ${why}`, conn.ip);
    if (sendEach(conn, subId, results)) conn.send(closedMessage(subId, `error: ${why}; the newest matches found were sent, narrow the filter (authors, kinds, since/until) for more`));
    return;
  }
  const pending = sub.pending ?? [];
  sub.pending = null;
  if (sendEach(conn, subId, results) && conn.send(eoseMessage(subId))) {
    sendEach(conn, subId, pending.filter((p) => !covered(sub, p.id, p.serial)).map((p) => p.json));
  }
  h.metrics.queryLatency.observe((performance.now() - t0) / 1000);
}

/** Sends events to a subscription; false when the connection went away on the way. */
function sendEach(conn: Connection, subId: string, jsons: string[]): boolean {
  for (const json of jsons) if (!conn.send(eventMessage(subId, json))) return false;
  return true;
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
