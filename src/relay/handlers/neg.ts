// NIP-77 negentropy syncing, relay side: NEG-OPEN collects the (created_at, id) records of the
// filters' matches from the store's indexes (in a query worker when there are any: the union of
// several filters is merged there too, capped while collecting, duplicate filters read once) and
// answers the client's first message; NEG-MSG continues; NEG-CLOSE (or the connection closing)
// drops the session. Limits, all answered with NEG-ERR and a NIP-01 prefix: records per NEG-OPEN
// (negentropy.maxRecords, "blocked:", with the maximum as 4th element like strfry), records held by
// the sessions of one address (maxRecordsPerIp, "rate-limited:") and of all (maxTotalRecords,
// "rate-limited:"), sessions per connection (maxSessions, "blocked:"), index entries read
// (scanBudget) and time (read.queryTimeout) per NEG-OPEN, idle sessions (idleTimeout, "closed:").
// Every NEG-OPEN and NEG-MSG is admitted like a REQ: its rate limit, the read policies (auth to
// read, DMs), one of the query slots of the connection and of its address, and the bytes of each
// answer are charged to the address's result bytes (read.resultBytesPerIp) like REQ results, so an
// address asking for large answers again and again waits in its own queue while others are served.
import { negErrMessage, negMsgMessage } from '../../nostr/messages.js';
import { Negentropy, NegentropyError, NegentropyStorage } from '../../nostr/negentropy.js';
import { bytesToHex, hexToBytes } from '../../nostr/negentropy-storage.js';
import type { Filter } from '../../nostr/filter.js';
import type { RelayContext } from '../context.js';
import type { Connection } from '../connection.js';
import { readFilters } from './filters.js';
import { distinctFilters, type HiddenKinds } from './neg-items.js';
import { Tally } from '../policy/budgets.js';

interface Session {
  subId: string;
  /** set when the session ends (NEG-CLOSE, replaced, connection gone): stops its scan */
  abort: { aborted: boolean };
  /** null while the records are being collected */
  neg: Negentropy | null;
  /** records held, counted in the relay-wide and the address's totals */
  records: number;
  idle: NodeJS.Timeout | null;
  /** NEG-MSGs received and not yet answered (waiting for a query slot) */
  pending: number;
}

interface NegState {
  conns: WeakMap<Connection, Map<string, Session>>;
  /** records held by every open session */
  held: number;
  /** records held by the sessions of each address key */
  heldIp: Tally<string>;
  /** open sessions (collecting or answering) */
  open: number;
}

const states = new WeakMap<RelayContext, NegState>();

function stateOf(h: RelayContext): NegState {
  let s = states.get(h);
  if (!s) states.set(h, (s = { conns: new WeakMap(), held: 0, heldIp: new Tally(), open: 0 }));
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
  stateOf(h).heldIp.add(conn.key, -s.records);
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
  // A limit is taken as given (a REQ's answer clamps it, NEG does not): the initiator computed its
  // own set with it, and maxRecords bounds the work anyway.
  return distinctFilters(filters);
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
  const st = stateOf(h);
  // refused before any work when the address or the relay already holds its share
  const busy = overShare(h, conn, 1);
  if (busy) return refuse(h, conn, subId, busy);

  const s: Session = { subId, abort: { aborted: false }, neg: null, records: 0, idle: null, pending: 0 };
  sessions.set(subId, s);
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
    // collecting stops as soon as the union passes what this session may hold: the per-NEG-OPEN
    // cap, or what is left of the address's and the relay's shares when that is less
    const room = Math.min(cfg.maxRecords, cfg.maxRecordsPerIp - st.heldIp.get(conn.key), cfg.maxTotalRecords - st.held);
    const r = await h.queries.negentropyItems(filters, { maxItems: Math.max(0, room), hidden }, { signal: guard.signal });
    if (s.abort.aborted) return;
    if (r.overLimit) {
      drop(h, conn, s);
      if (room >= cfg.maxRecords) return refuse(h, conn, subId, `blocked: the filters match more than ${cfg.maxRecords} events; narrow them (since/until, kinds, authors) and sync the parts`, cfg.maxRecords);
      return refuse(h, conn, subId, overShare(h, conn, cfg.maxRecords) ?? 'rate-limited: the relay is busy with other negentropy syncs; try again later');
    }
    if (guard.tripped || !r.complete) {
      drop(h, conn, s);
      const why = guard.tripped === 'timeout' ? 'collecting the events took too long' : 'the filter reads more index entries than this relay allows for one sync';
      return refuse(h, conn, subId, `blocked: ${why}; narrow it (since/until, kinds, authors) and sync the parts`);
    }
    // other sessions may have taken records while this one collected
    const over = overShare(h, conn, r.count);
    if (over) {
      drop(h, conn, s);
      return refuse(h, conn, subId, over);
    }
    s.records = r.count;
    st.held += r.count;
    st.heldIp.add(conn.key, r.count);
    s.neg = new Negentropy(NegentropyStorage.fromRecords(r.records), cfg.frameSizeLimit);
    answer(h, conn, s, query);
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
}

/** The refusal when `count` more records would pass the address's or the relay's share, else null. */
function overShare(h: RelayContext, conn: Connection, count: number): string | null {
  const cfg = h.config.negentropy;
  const st = stateOf(h);
  const ipHeld = st.heldIp.get(conn.key);
  if (ipHeld + count > cfg.maxRecordsPerIp) return `rate-limited: your IP address holds ${ipHeld} records in open negentropy sessions (at most ${cfg.maxRecordsPerIp}); close some sessions first`;
  if (st.held + count > cfg.maxTotalRecords) return 'rate-limited: the relay is busy with other negentropy syncs; try again later';
  return null;
}

/**
 * What a byte of a NIP-77 answer costs in read.resultBytesPerIp, against one byte of REQ results.
 * REQ results are framed by the query threads and copied out; a negentropy answer is reconciled,
 * hex-encoded and framed on the main thread (~14 ms of it per 1 MB answer, measured), so at the
 * REQ rate one address could take ~40% of the main thread with 37-byte NEG-MSGs. Weighted 4, an
 * address still gets ~8 MB/s of answers: ~125,000 ids a second.
 */
const NEG_BYTE_WEIGHT = 4;

/** NEG-MSGs of one session waiting for a query slot, at most (more: the session is dropped). */
const MAX_PENDING_MSGS = 4;

export async function handleNegMsg(h: RelayContext, conn: Connection, subId: string, hex: string): Promise<void> {
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
  const endWith = (reason: string, logged = false) => {
    drop(h, conn, s);
    if (!logged) h.access.refused('NEG-MSG', reason, conn.ip);
    h.metrics.refusals.inc({ reason: reason.slice(0, reason.indexOf(':')) });
    conn.send(negErrMessage(subId, reason));
  };
  const limited = h.access.rateLimit('REQ', conn); // logs the refusal itself
  if (limited) return endWith(limited, true);
  if (s.pending >= MAX_PENDING_MSGS) return endWith(`rate-limited: more than ${MAX_PENDING_MSGS} NEG-MSGs of this session wait for an answer; the session was dropped`);
  // an answer is work and output like a REQ's: it waits for a query slot of the connection and of
  // its address, and its bytes are charged to the address (answered in order: the queue is FIFO)
  s.pending++;
  conn.busy++;
  let release: (() => void) | null = null;
  try {
    release = await h.access.querySlot(conn);
    if (!release) return endWith('rate-limited: too many queries waiting on this connection');
    // one answer per turn of the event loop: slots granted together resume in one run of
    // microtasks, and a queue of ~15 ms answers would otherwise keep other clients' I/O waiting
    await new Promise((r) => setImmediate(r));
    if (s.abort.aborted || !s.neg) return;
    answer(h, conn, s, query);
  } finally {
    s.pending--;
    release?.();
    conn.busy--;
  }
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
  h.access.querySlots.charge(conn, out.length * 2 * NEG_BYTE_WEIGHT); // hex: two bytes sent per byte

  conn.send(negMsgMessage(s.subId, bytesToHex(out)));
}
