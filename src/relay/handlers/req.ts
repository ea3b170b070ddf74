// REQ: stored events newest first, EOSE, then live events. The subscription is live from the
// moment the REQ arrives; events that arrive during the scan wait in `pending` and are sent after
// EOSE unless the scan already returned them, so nothing is missed or sent twice.
//
// The stored answer is read in pieces of at most read.answerPieceBytes (answer-room.ts), each read
// once the connection has room for it: most answers are one piece, as before; a larger one stops
// at the piece's bytes (QueryOptions.maxBytes) and the store says where the rest begins
// (EventFrames.cut), so the next piece reads exactly the rest. Pieces after the first skip what
// an earlier one sent (several filters may match one event), and so do live events.
import { closedMessage, eoseMessage, eventFraming, eventMessage } from '../../nostr/messages.js';
import { isEmptyFilter, type Filter } from '../../nostr/filter.js';
import { answerLimits, maxAnswerEvents } from '../../nostr/lookups.js';
import { frameCount, frameJson, framesJsonBytes, type EventFrames } from '../../nostr/frames.js';
import { frameHeads, frameId } from '../../nostr/frame-heads.js';
import { lookupWants, type HeldEvent } from '../../nostr/lookup-miss.js';
import type { SeenSerials } from '../../store/types.js';
import type { RelayContext } from '../context.js';
import type { Connection, Subscription } from '../connection.js';
import { admitFilters, QUEUE_FULL, refuse } from './filters.js';
import { closeSubscription } from './close.js';
import { pieceRoom } from './answer-room.js';
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
  const sub: Subscription = { conn, subId, filters, abort: { aborted: false }, pending: [], seen: null, sent: null, release: held };
  conn.subs.set(subId, sub);
  h.live.add(sub);
  h.metrics.reqs.inc();

  const t0 = performance.now();
  const { limits } = h.config;
  const asked = filters.filter((f) => f.limit !== 0 && !isEmptyFilter(f));
  const scan = answerLimits(
    asked,
    { defaultLimit: limits.defaultLimit, maxLimit: limits.maxLimit, maxEvents: maxAnswerEvents(limits) },
  );
  // a search ranked as seen from one reader: its trust is attached to the filters first (context.ts)
  if (h.searchTrust && scan.some((f) => f.search !== undefined)) {
    await h.searchTrust(scan, conn.authed);
    if (sub.abort.aborted) return;
  }
  const answer = scan.length > 0 ? await sendStoredAnswer(h, conn, sub, scan, asked.map((f) => f.limit)) : { sent: 0, heads: null, lookupKinds: null, exhausted: true, more: false };
  if (!answer) return; // ended: closed, replaced, refused or failed (answered there)
  // lookup on a miss (lookup.ts): what it finds comes as live events, during the wait or after EOSE
  const lookup = h.lookup ? lookupAfterScan(h.lookup, conn.key, scan, answer.heads, answer.sent, maxAnswerEvents(limits)) : null;
  const wait = lookup && h.lookup!.waitMs > 0 ? lookup : null;
  const pending = sub.pending ?? [];
  sub.pending = null;
  // NIP-67: every stored match was sent (a filter with limit 0 asked for none of its matches)
  const finish = h.config.nip67 && answer.exhausted && filters.every((f) => f.limit !== 0 || isEmptyFilter(f));
  // NIP-67: the relay's own limit left matches out (never a guess: a match beyond it was read)
  const hint = finish ? 'finish' : h.config.nip67 && answer.more ? 'more' : false;
  if (wait) {
    // what arrived during the scan now, EOSE once the lookup is done or the bound passed
    for (const p of pending) if (!covered(sub, p.id, p.serial) && !conn.send(eventMessage(subId, p.json))) break;
    h.metrics.queryLatency.observe((performance.now() - t0) / 1000);
    await boundedWait(wait, h.lookup!.waitMs);
    if (!sub.abort.aborted) conn.send(eoseMessage(subId, hint));
    return;
  }
  if (conn.send(eoseMessage(subId, hint))) {
    for (const p of pending) if (!covered(sub, p.id, p.serial) && !conn.send(eventMessage(subId, p.json))) break;
  }
  h.metrics.queryLatency.observe((performance.now() - t0) / 1000);
}

/** What a REQ's stored answer sent: frames, and whose lists they were when a lookup on a miss may follow. */
interface StoredAnswer {
  sent: number;
  /** the kinds a lookup on a miss would look for, and the answer's events of those kinds */
  heads: HeldEvent[] | null;
  lookupKinds: Set<number> | null;
  /** every piece read its filters to the end with matches to spare (EventFrames.exhausted): NIP-67 `finish` */
  exhausted: boolean;
  /** a filter the relay's own limit bounded (none asked, or a larger one) left matches out (EventFrames.limited): NIP-67 `more` */
  more: boolean;
}

/**
 * Reads and sends the stored answer of `scan` (the filters with their limits) piece by piece; null
 * when the REQ ended on the way (closed or replaced, refused, failed or cut short: the CLOSED went
 * out here). `asked`: each filter's limit as the client asked it (undefined: none), to tell the
 * relay's own limits from the client's (NIP-67 `more`).
 */
async function sendStoredAnswer(h: RelayContext, conn: Connection, sub: Subscription, scan: Filter[], asked: Array<number | undefined>): Promise<StoredAnswer | null> {
  const { limits, read } = h.config;
  const framing = eventFraming(sub.subId);
  const kinds = h.lookup ? new Set(lookupWants(scan).flatMap((w) => w.kinds)) : null;
  const lookupKinds = kinds && kinds.size > 0 ? kinds : null;
  const answer: StoredAnswer = { sent: 0, heads: lookupKinds ? [] : null, lookupKinds, exhausted: true, more: false };
  let filters = scan;
  // which filters' limits are the relay's own: none was asked, or a larger one than answerLimits gave
  let ownLimit = scan.map((f, i) => asked[i] === undefined || asked[i]! > (f.limit ?? 0));
  for (let first = true; ; first = false) {
    const room = await pieceRoom(conn, sub.abort, read.answerPieceBytes);
    if (!room) return null;
    const seen: SeenSerials | undefined = first ? { upTo: 0, newer: new Set<string>() } : undefined;
    const guard = h.queries.scanGuard(sub.abort);
    let results: EventFrames | null = null;
    let release: (() => void) | null = null;
    conn.busy++;
    try {
      release = await h.access.querySlot(conn);
      if (!release) {
        closeSubscription(h, conn, sub.subId);
        refuse(h, conn, sub.subId, 'REQ', QUEUE_FULL);
        return null;
      }
      if (sub.abort.aborted) return null;
      // every filter has its limit now (answerLimits): the store's clamp is the REQ's bound
      results = await h.queries.query(filters, { defaultLimit: limits.defaultLimit, maxLimit: maxAnswerEvents(limits), signal: guard.signal, seen, lend: true, maxBytes: room.bytes, peekMore: h.config.nip67 }, framing);
      if (seen) sub.seen = seen;
      h.access.querySlots.charge(conn, framesJsonBytes(results)); // as read.resultBytesPerIp counts them
    } catch (e) {
      if (!sub.abort.aborted) {
        h.logger.error({ err: e, subId: sub.subId }, 'query failed');
        closeSubscription(h, conn, sub.subId);
        conn.send(closedMessage(sub.subId, 'error: the query failed'));
      }
      return null;
    } finally {
      release?.();
      conn.busy--;
      if (!results) room.release();
    }
    if (sub.abort.aborted) {
      h.queries.release(results);
      room.release();
      return null;
    }
    const cut = results.cut;
    answer.exhausted &&= results.exhausted === true;
    if (results.limited?.some((i) => ownLimit[i])) answer.more = true;
    // a cut piece: from now on every piece skips what was sent (the live events too)
    if (cut && !sub.sent) sub.sent = new Set();
    const open = sendPiece(h, conn, scan, results, framing.prefix, sub.sent, answer);
    // queued now: the output budget counts the piece as unsent, the reservation is done
    done(h, conn, results);
    room.release();
    if (guard.tripped) {
      const why = guard.tripped === 'budget' ? 'the query read more index entries than this relay allows for one REQ' : 'the query ran too long';
      closeSubscription(h, conn, sub.subId);
      h.metrics.refusals.inc({ reason: 'error' });
      h.access.refused('REQ', `error: ${why}`, conn.ip);
      if (open) conn.send(closedMessage(sub.subId, `error: ${why}; the newest matches found were sent, narrow the filter (authors, kinds, since/until) for more`));
      return null;
    }
    if (!open || sub.abort.aborted) return null;
    if (!cut) return answer;
    filters = [cut.rest, ...filters.slice(cut.filter + 1)];
    ownLimit = [ownLimit[cut.filter]!, ...ownLimit.slice(cut.filter + 1)];
  }
}

/** Writes what was queued for the connection now (uWS copies it), then the answer's buffer is free. */
function done(h: RelayContext, conn: Connection, frames: EventFrames): void {
  conn.flush();
  h.queries.release(frames);
}

/**
 * Queues a piece of a REQ's stored answer (ready EVENT frames), without the events of protected
 * kinds this reader may not see (policy/read.ts: DMs only to their author or recipient) and, once
 * the answer runs in pieces (`sent`), without what an earlier piece sent; notes what it sent in
 * `answer`. False when the connection went away on the way.
 */
function sendPiece(h: RelayContext, conn: Connection, filters: Filter[], frames: EventFrames, prefix: Uint8Array, sent: Set<string> | null, answer: StoredAnswer): boolean {
  const n = frameCount(frames);
  if (n === 0) return true;
  const dms = h.access.dms;
  let skip: Uint8Array | null = null;
  let again = 0;
  const hideDms = dms.needsFiltering(filters, conn.authed);
  for (let i = 0; i < n && (hideDms || sent); i++) {
    if (hideDms && dms.kinds.has(frames.kinds[i]!) && !dms.canSeeJson(frameJson(frames, i), conn.authed)) (skip ??= new Uint8Array(n))[i] = 1;
    else if (sent) {
      const id = frameId(frames, i);
      if (!sent.has(id)) sent.add(id);
      else {
        (skip ??= new Uint8Array(n))[i] = 1;
        again++;
      }
    }
  }
  answer.sent += n - again;
  if (answer.heads) for (const e of frameHeads(frames, answer.lookupKinds!)) answer.heads.push(e);
  return conn.sendAnswer(frames, prefix, skip);
}

/** Whether the subscription's scan already returned (or could see) this event. */
function covered(sub: Subscription, id: string, serial: number | undefined): boolean {
  if (sub.sent?.has(id)) return true;
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
