// NIP-77 negentropy syncing, relay side: NEG-OPEN collects the (created_at, id) records of the
// filter's matches from the store's indexes (in a query worker when there are any) and answers the
// client's first message; NEG-MSG continues; NEG-CLOSE (or the connection closing) drops the
// session. Limits, all answered with NEG-ERR and a NIP-01 prefix: records per NEG-OPEN
// (negentropy.maxRecords, "blocked:", with the maximum as 4th element like strfry), records held by
// all sessions (maxTotalRecords, "rate-limited:"), sessions per connection (maxSessions,
// "blocked:"), index entries read (scanBudget) and time (read.queryTimeout) per NEG-OPEN, idle
// sessions (idleTimeout, "closed:"). Reads are admitted like a REQ: its rate limit, the read
// policies (auth to read, DMs), one of the connection's query slots.
import { negErrMessage, negMsgMessage } from '../../nostr/messages.js';
import { Negentropy, NegentropyError, NegentropyStorage } from '../../nostr/negentropy.js';
import { bytesToHex, hexToBytes, RECORD_BYTES } from '../../nostr/negentropy-storage.js';
import type { Filter } from '../../nostr/filter.js';
import type { RelayContext } from '../context.js';
import type { Connection } from '../connection.js';
import { readFilters } from './filters.js';
import type { HiddenKinds } from './neg-items.js';

interface Session {
  subId: string;
  /** set when the session ends (NEG-CLOSE, replaced, connection gone): stops its scan */
  abort: { aborted: boolean };
  /** null while the records are being collected */
  neg: Negentropy | null;
  /** records held, counted in the relay-wide total */
  records: number;
  idle: NodeJS.Timeout | null;
}

interface NegState {
  conns: WeakMap<Connection, Map<string, Session>>;
  /** records held by every open session */
  held: number;
  /** open sessions (collecting or answering) */
  open: number;
}

const states = new WeakMap<RelayContext, NegState>();

function stateOf(h: RelayContext): NegState {
  let s = states.get(h);
  if (!s) states.set(h, (s = { conns: new WeakMap(), held: 0, open: 0 }));
  return s;
}

function sessionsOf(h: RelayContext, conn: Connection): Map<string, Session> {
  const st = stateOf(h);
  let m = st.conns.get(conn);
  if (!m) st.conns.set(conn, (m = new Map()));
  return m;
}

/** Open sessions and the records they hold (/metrics). */
export const negentropyFigures = (h: RelayContext): { sessions: number; records: number } => ({ sessions: stateOf(h).open, records: stateOf(h).held });

function drop(h: RelayContext, conn: Connection, s: Session): void {
  s.abort.aborted = true;
  if (s.idle) clearTimeout(s.idle);
  s.idle = null;
  stateOf(h).held -= s.records;
  s.records = 0;
  s.neg = null;
  const m = sessionsOf(h, conn);
  if (m.get(s.subId) === s) {
    m.delete(s.subId);
    stateOf(h).open--;
  }
}

function refuse(h: RelayContext, conn: Connection, subId: string, reason: string, max?: number): void {
  h.access.refused('NEG-OPEN', reason, conn.ip);
  h.metrics.refusals.inc({ reason: reason.slice(0, reason.indexOf(':')) });
  h.access.beforeRefusal(conn, reason); // auth-required: the challenge goes first (on-demand mode)
  conn.send(negErrMessage(subId, reason, max));
}

function touch(h: RelayContext, conn: Connection, s: Session): void {
  if (s.idle) clearTimeout(s.idle);
  const ms = h.config.negentropy.idleTimeout;
  s.idle = setTimeout(() => {
    drop(h, conn, s);
    conn.send(negErrMessage(s.subId, `closed: no NEG-MSG for ${Math.round(ms / 1000)} s; the session was dropped`));
  }, ms);
  s.idle.unref();
}

/** The filters of a NEG-OPEN: one filter object (NIP-77), or a list of them (strfry's `sync --filter '[..]'`), unioned. */
function negFilters(h: RelayContext, conn: Connection, raw: unknown): Filter[] | string {
  const list = Array.isArray(raw) ? raw : [raw];
  const filters = readFilters(h, conn, list, 'REQ');
  if (typeof filters === 'string') return filters;
  // A limit is taken as given (REQ clamps it to limits.maxLimit): the initiator computed its own
  // set with it, and maxRecords bounds the work anyway.
  filters.forEach((f, i) => {
    const lim = (list[i] as { limit?: unknown }).limit;
    if (typeof lim === 'number') f.limit = lim;
  });
  return filters;
}

export async function handleNegOpen(h: RelayContext, conn: Connection, subId: string, rawFilter: unknown, hex: string): Promise<void> {
  const cfg = h.config.negentropy;
  const sessions = sessionsOf(h, conn);
  const old = sessions.get(subId);
  if (old) drop(h, conn, old); // NIP-77: a NEG-OPEN for an open id closes that session first
  if (!cfg.enabled) return refuse(h, conn, subId, 'blocked: negentropy syncing (NIP-77) is disabled on this relay');
  const limited = h.access.rateLimit('REQ', conn);
  if (limited) return refuse(h, conn, subId, limited);
  if (sessions.size >= cfg.maxSessions) return refuse(h, conn, subId, `blocked: too many open negentropy sessions on this connection (at most ${cfg.maxSessions})`);
  let query: Uint8Array;
  try {
    query = hexToBytes(hex);
  } catch {
    return refuse(h, conn, subId, 'invalid: the negentropy message is not hex');
  }
  const filters = negFilters(h, conn, rawFilter);
  if (typeof filters === 'string') return refuse(h, conn, subId, filters);

  const s: Session = { subId, abort: { aborted: false }, neg: null, records: 0, idle: null };
  sessions.set(subId, s);
  const st = stateOf(h);
  st.open++;
  const guard = h.queries.scanGuard(s.abort, cfg.scanBudget);
  const hidden: HiddenKinds | undefined = h.access.dms.needsFiltering(filters, conn.authed) ? { kinds: [...h.access.dms.kinds], authed: [...conn.authed] } : undefined;
  let release: (() => void) | null = null;
  conn.busy++;
  try {
    release = await h.access.querySlot(conn);
    if (!release) {
      drop(h, conn, s);
      return refuse(h, conn, subId, 'rate-limited: too many queries waiting on this connection');
    }
    if (s.abort.aborted) return;
    const parts = [];
    for (const f of filters) {
      const r = await h.queries.negentropyItems(f, { maxItems: cfg.maxRecords, hidden }, { signal: guard.signal });
      if (s.abort.aborted) return;
      if (r.overLimit) {
        drop(h, conn, s);
        return refuse(h, conn, subId, `blocked: the filter matches more than ${cfg.maxRecords} events; narrow it (since/until, kinds, authors) and sync the parts`, cfg.maxRecords);
      }
      if (guard.tripped || !r.complete) {
        drop(h, conn, s);
        const why = guard.tripped === 'timeout' ? 'collecting the events took too long' : 'the filter reads more index entries than this relay allows for one sync';
        return refuse(h, conn, subId, `blocked: ${why}; narrow it (since/until, kinds, authors) and sync the parts`);
      }
      parts.push(r.records);
    }
    const records = parts.length === 1 ? parts[0] : unionRecords(parts);
    const count = records.length / RECORD_BYTES;
    if (count > cfg.maxRecords) {
      drop(h, conn, s);
      return refuse(h, conn, subId, `blocked: the filters match more than ${cfg.maxRecords} events; narrow them and sync the parts`, cfg.maxRecords);
    }
    if (st.held + count > cfg.maxTotalRecords) {
      drop(h, conn, s);
      return refuse(h, conn, subId, 'rate-limited: the relay is busy with other negentropy syncs; try again later');
    }
    s.records = count;
    st.held += count;
    s.neg = new Negentropy(NegentropyStorage.fromRecords(records), cfg.frameSizeLimit);
  } catch (e) {
    if (!s.abort.aborted) {
      h.logger.error({ err: e, subId }, 'negentropy item scan failed');
      drop(h, conn, s);
      conn.send(negErrMessage(subId, 'error: collecting the events failed'));
    }
    return;
  } finally {
    release?.();
    conn.busy--;
  }
  answer(h, conn, s, query);
}

export function handleNegMsg(h: RelayContext, conn: Connection, subId: string, hex: string): void {
  const s = sessionsOf(h, conn).get(subId);
  if (!s) {
    conn.send(negErrMessage(subId, 'closed: no open negentropy session with this id'));
    return;
  }
  if (!s.neg) {
    drop(h, conn, s);
    conn.send(negErrMessage(subId, 'invalid: NEG-MSG before the answer to NEG-OPEN; the session was dropped'));
    return;
  }
  let query: Uint8Array;
  try {
    query = hexToBytes(hex);
  } catch {
    drop(h, conn, s);
    conn.send(negErrMessage(subId, 'invalid: the negentropy message is not hex'));
    return;
  }
  answer(h, conn, s, query);
}

export function handleNegClose(h: RelayContext, conn: Connection, subId: string): void {
  const s = sessionsOf(h, conn).get(subId);
  if (s) drop(h, conn, s);
}

/** Ends every session of a connection (it closed, or the relay is stopping). */
export function closeNegSessions(h: RelayContext, conn: Connection): void {
  for (const s of [...sessionsOf(h, conn).values()]) drop(h, conn, s);
}

function answer(h: RelayContext, conn: Connection, s: Session, query: Uint8Array): void {
  let out: Uint8Array;
  try {
    out = s.neg!.reconcile(query);
  } catch (e) {
    drop(h, conn, s);
    const why = e instanceof NegentropyError ? e.message : 'could not process it';
    if (!(e instanceof NegentropyError)) h.logger.error({ err: e, subId: s.subId }, 'negentropy reconcile failed');
    conn.send(negErrMessage(s.subId, `invalid: negentropy message: ${why}`));
    return;
  }
  touch(h, conn, s);
  conn.send(negMsgMessage(s.subId, bytesToHex(out)));
}

/** The sorted union of several sorted record lists (a NEG-OPEN with several filters). */
function unionRecords(parts: Uint8Array[]): Uint8Array {
  const total = parts.reduce((n, p) => n + p.length, 0);
  const out = new Uint8Array(total);
  let w = 0;
  const pos = parts.map(() => 0);
  for (;;) {
    let best = -1;
    for (let i = 0; i < parts.length; i++) {
      if (pos[i] >= parts[i].length) continue;
      if (best < 0 || compareRecords(parts[i], pos[i], parts[best], pos[best]) < 0) best = i;
    }
    if (best < 0) break;
    const rec = parts[best].subarray(pos[best], pos[best] + RECORD_BYTES);
    // equal records are adjacent in this order: keep one
    if (w === 0 || compareRecords(out, w - RECORD_BYTES, rec, 0) !== 0) {
      out.set(rec, w);
      w += RECORD_BYTES;
    }
    pos[best] += RECORD_BYTES;
  }
  return out.subarray(0, w);
}

/** Record order: created_at (uint32 LE), then id bytes. */
function compareRecords(a: Uint8Array, ia: number, b: Uint8Array, ib: number): number {
  for (let k = 3; k >= 0; k--) if (a[ia + k] !== b[ib + k]) return a[ia + k] - b[ib + k];
  for (let k = 4; k < RECORD_BYTES; k++) if (a[ia + k] !== b[ib + k]) return a[ia + k] - b[ib + k];
  return 0;
}
