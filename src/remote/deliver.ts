// How a worker's (and `orbweaver spider --once`'s) events reach the home store: NIP-01 EVENT to the home relay, after NIP-42 AUTH
// with the worker's key (spider.workerKey; the relay lists the pubkey in spider.workerPubkeys, which
// exempts it from rate limits). The events take the relay's one ingest path like any client's.
// The AUTH comes before the first EVENT whether the relay challenges on connect or on demand: the
// worker asks for the challenge by sending AUTH first (Conn.requestChallenge).
//
// put() resolves only with the relay's OK for that event. A connection that drops (the home relay
// restarting), an OK that does not come, or an answer that is not a decision about the event
// (`rate-limited:`, `error:`, `auth-required:`) is retried on a new connection with backoff, for up
// to spider.deliveryTimeout; then put() throws a DeliveryError, crawlRelay throws, and the worker
// fails the attempt instead of acking it. So nothing is acked that the home relay has not taken.
import WebSocket from 'ws';
import { getPublicKey } from 'nostr-tools/pure';
import { signEvent } from '../nostr/sign.js';
import type { Logger } from 'pino';
import type { NostrEvent } from '../nostr/event.js';
import type { IngestStatus } from '../ingest/types.js';
import { statusFromOk, type EventSink } from '../ingest/sink.js';
import { isReplaceable } from '../nostr/kinds.js';
import { incomingWins } from '../store/rules.js';
import { randomUUID } from 'node:crypto';
import { RECORD_VERB } from '../nostr/messages.js';

export class DeliveryError extends Error {}

export interface HomeSinkOptions {
  url: string;
  /** the relay tag of the AUTH event (the home relay's publicUrl; default: url) */
  authUrl?: string;
  secretKey?: Uint8Array;
  connectTimeout: number;
  /** wait this long for one OK before sending the event again */
  okTimeout: number;
  /** events in flight at once */
  window: number;
  deliveryTimeout: number;
  log: Logger;
}


export const pubkeyOf = (sk: Uint8Array): string => getPublicKey(sk);

type Ok = { ok: boolean; message: string };
/** The answer to a record write: its result, or the refusal's text. */
type RecordAnswer = { ok: boolean; payload: unknown };

/** One connection to the home relay, authenticated when we have a key. */
/** A REQ on the home connection: the events it returns, until EOSE. */
interface Query { events: unknown[]; done(ok: boolean): void }

class Conn {
  readonly ws: WebSocket;
  private waiters = new Map<string, Array<(r: Ok | null) => void>>();
  private queries = new Map<string, Query>();
  private records = new Map<string, (r: RecordAnswer | null) => void>();
  private nextSub = 0;
  private challengeWaiter: ((c: string) => void) | null = null;
  challenge: string | null = null;
  closed = false;

  constructor(url: string, connectTimeout: number) {
    // 16 MiB: a record write's answer is a whole relay record (its links to thousands of relays)
    this.ws = new WebSocket(url, { perMessageDeflate: false, handshakeTimeout: connectTimeout, maxPayload: 16 << 20 });
    this.ws.on('message', (data) => {
      let m: unknown;
      try { m = JSON.parse(data.toString()); } catch { return; }
      if (!Array.isArray(m)) return;
      if (m[0] === 'AUTH' && typeof m[1] === 'string') { this.challenge = m[1]; this.challengeWaiter?.(m[1]); return; }
      if ((m[0] === 'EVENT' || m[0] === 'EOSE' || m[0] === 'CLOSED') && typeof m[1] === 'string') {
        const q = this.queries.get(m[1]);
        if (!q) return;
        if (m[0] === 'EVENT') q.events.push(m[2]);
        else q.done(m[0] === 'EOSE');
        return;
      }
      if (m[0] === RECORD_VERB && typeof m[1] === 'string') { this.records.get(m[1])?.({ ok: m[2] === true, payload: m[3] }); return; }
      // a relay of an earlier version does not know record writes: say so instead of waiting for an answer
      if (m[0] === 'NOTICE' && typeof m[1] === 'string' && m[1].includes(`unknown message type "${RECORD_VERB}"`)) {
        for (const r of [...this.records.values()]) r({ ok: false, payload: `unsupported: the relay does not take record writes (${m[1]}); run the same orbweaver version as the relay` });
        return;
      }
      if (m[0] !== 'OK' || typeof m[1] !== 'string') return;
      const list = this.waiters.get(m[1]);
      const w = list?.shift();
      if (list && list.length === 0) this.waiters.delete(m[1]);
      w?.({ ok: m[2] === true, message: typeof m[3] === 'string' ? m[3] : '' });
    });
    const down = () => {
      this.closed = true;
      for (const list of this.waiters.values()) for (const w of list) w(null);
      this.waiters.clear();
      for (const q of [...this.queries.values()]) q.done(false);
      for (const r of [...this.records.values()]) r(null);
    };
    this.ws.on('close', down);
    this.ws.on('error', down);
  }

  opened(): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.ws.readyState === WebSocket.OPEN) return resolve();
      this.ws.once('open', () => resolve());
      this.ws.once('error', (e) => reject(e));
      this.ws.once('close', () => reject(new Error('closed before open')));
    });
  }

  /**
   * The relay's NIP-42 challenge for this connection. A relay that challenges on connect has sent
   * it (or is sending it); one that challenges on demand sends it in answer to an AUTH that comes
   * before any challenge (an orbweaver relay does: policy/access.ts), so such an AUTH is sent at
   * once, carrying no challenge and so granting nothing. Its OK (refused either way) is not waited
   * for: whichever way the challenge comes, it is the first one we take. Null after `ms`.
   */
  requestChallenge(secretKey: Uint8Array, relayTag: string, ms: number): Promise<string | null> {
    if (this.challenge) return Promise.resolve(this.challenge);
    const ask = signEvent({ kind: 22242, created_at: Math.floor(Date.now() / 1000), tags: [['relay', relayTag]], content: '' }, secretKey);
    const got = new Promise<string | null>((resolve) => {
      const t = setTimeout(() => { this.challengeWaiter = null; resolve(null); }, ms);
      this.challengeWaiter = (c) => { clearTimeout(t); this.challengeWaiter = null; resolve(c); };
    });
    this.ws.send(JSON.stringify(['AUTH', ask]), () => { /* a failed send shows as no challenge */ });
    return got;
  }

  /** Sends ["EVENT"|"AUTH", ev] and waits for its OK; null when the connection went or no OK came. */
  send(verb: 'EVENT' | 'AUTH', ev: NostrEvent, timeout: number): Promise<Ok | null> {
    if (this.closed || this.ws.readyState !== WebSocket.OPEN) return Promise.resolve(null);
    return new Promise((resolve) => {
      const done = (r: Ok | null) => { clearTimeout(timer); resolve(r); };
      const timer = setTimeout(() => {
        const list = this.waiters.get(ev.id);
        if (list) { const i = list.indexOf(done); if (i >= 0) list.splice(i, 1); if (list.length === 0) this.waiters.delete(ev.id); }
        resolve(null);
      }, timeout);
      const list = this.waiters.get(ev.id) ?? [];
      list.push(done);
      this.waiters.set(ev.id, list);
      this.ws.send(JSON.stringify([verb, ev]), (err) => { if (err) done(null); });
    });
  }

  /** Sends a record write (src/app/record-ops.ts) and waits for its answer; null when the connection went or none came. */
  record(reqId: string, op: string, args: unknown[], timeout: number): Promise<RecordAnswer | null> {
    if (this.closed || this.ws.readyState !== WebSocket.OPEN) return Promise.resolve(null);
    return new Promise((resolve) => {
      const done = (r: RecordAnswer | null) => { clearTimeout(timer); this.records.delete(reqId); resolve(r); };
      const timer = setTimeout(() => done(null), timeout);
      this.records.set(reqId, done);
      this.ws.send(JSON.stringify([RECORD_VERB, reqId, op, args]), (err) => { if (err) done(null); });
    });
  }

  /** The stored events matching `filters` (until EOSE); null when refused, lost or not answered in time. */
  query(filters: object[], timeout: number): Promise<unknown[] | null> {
    if (this.closed || this.ws.readyState !== WebSocket.OPEN) return Promise.resolve(null);
    const id = `known${++this.nextSub}`;
    return new Promise((resolve) => {
      const q: Query = {
        events: [],
        done: (ok) => {
          clearTimeout(timer);
          this.queries.delete(id);
          if (ok && !this.closed) this.ws.send(JSON.stringify(['CLOSE', id]));
          resolve(ok ? q.events : null);
        },
      };
      const timer = setTimeout(() => q.done(false), timeout);
      this.queries.set(id, q);
      this.ws.send(JSON.stringify(['REQ', id, ...filters]), (err) => { if (err) q.done(false); });
    });
  }

  close(): void {
    try { this.ws.close(1000); } catch { /* already gone */ }
  }
}

/** Values per filter list in one lookup: well under the relay's maxFilterValues and maxLimit. */
const LOOKUP_BATCH = 250;

/**
 * Which of `evs` the home relay already holds, asked with REQs before anything is sent: by author
 * and kind for replaceable kinds (the answer is the home's version: the same id is a duplicate, a
 * newer one makes ours 'replaced'), by id for the rest. Deletions are not looked up (rare; the relay
 * refuses those events itself). Any failure answers "unknown": the events are then sent as before.
 */
async function lookup(c: Conn, evs: NostrEvent[], timeout: number): Promise<Array<IngestStatus | null>> {
  const out: Array<IngestStatus | null> = evs.map(() => null);
  const byAddr = new Map<string, number[]>(); // kind:pubkey -> indexes
  const byId: number[] = [];
  evs.forEach((e, i) => {
    if (!isReplaceable(e.kind)) { byId.push(i); return; }
    const a = `${e.kind}:${e.pubkey}`;
    const l = byAddr.get(a);
    if (l) l.push(i); else byAddr.set(a, [i]);
  });
  const jobs: Array<Promise<void>> = [];
  for (let j = 0; j < byId.length; j += LOOKUP_BATCH) {
    const idx = byId.slice(j, j + LOOKUP_BATCH);
    jobs.push(c.query([{ ids: idx.map((i) => evs[i]!.id), limit: idx.length }], timeout).then((got) => {
      const have = new Set((got ?? []).map((e) => (e as NostrEvent)?.id));
      for (const i of idx) if (have.has(evs[i]!.id)) out[i] = 'duplicate';
    }));
  }
  const kinds = new Map<number, string[]>();
  for (const a of byAddr.keys()) {
    const [k, pk] = a.split(':') as [string, string];
    const l = kinds.get(Number(k));
    if (l) l.push(pk); else kinds.set(Number(k), [pk]);
  }
  for (const [kind, pks] of kinds) {
    for (let j = 0; j < pks.length; j += LOOKUP_BATCH) {
      const batch = pks.slice(j, j + LOOKUP_BATCH);
      jobs.push(c.query([{ kinds: [kind], authors: batch, limit: batch.length }], timeout).then((got) => {
        for (const raw of got ?? []) {
          const h = raw as NostrEvent;
          if (typeof h?.id !== 'string' || typeof h.pubkey !== 'string' || h.kind !== kind || !Number.isSafeInteger(h.created_at)) continue;
          for (const i of byAddr.get(`${kind}:${h.pubkey}`) ?? []) {
            const e = evs[i]!;
            if (e.id === h.id) out[i] = 'duplicate';
            else if (!incomingWins(h, e)) out[i] = 'replaced';
          }
        }
      }));
    }
  }
  await Promise.all(jobs);
  return out;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Answers that say nothing about the event itself: send it again later. */
const retryable = (msg: string) => /^(rate-limited|error|auth-required):/.test(msg);

export interface HomeSink extends EventSink {
  /** events the home relay answered with OK true (stored or duplicate) */
  readonly delivered: number;
  /**
   * A write of the directory's records, applied by the home relay that owns our data directory
   * (src/app/record-ops.ts); resolves with its result once the relay committed it. Sent again
   * (same request id, which the relay answers once) until spider.deliveryTimeout; a refusal throws.
   */
  record(op: string, args: unknown[]): Promise<unknown>;
  /** Connects (and authenticates) now, once; throws when the home relay does not answer. */
  ready(): Promise<void>;
}

export function homeSink(o: HomeSinkOptions): HomeSink {
  let conn: Conn | null = null;
  let connecting: Promise<Conn> | null = null;
  let closed = false;
  let inFlight = 0;
  const slots: Array<() => void> = [];
  let delivered = 0;
  let lastProblem = '';
  let reportedDown = 0;

  async function open(): Promise<Conn> {
    const c = new Conn(o.url, o.connectTimeout);
    try {
      await c.opened();
    } catch (e) {
      c.close();
      throw e;
    }
    if (o.secretKey) {
      // authenticated before the first EVENT, so no event of ours meets the public limits
      const relayTag = o.authUrl ?? o.url;
      const challenge = await c.requestChallenge(o.secretKey, relayTag, o.connectTimeout);
      if (!challenge) { c.close(); throw new Error('no AUTH challenge from the home relay'); }
      const auth = signEvent({ kind: 22242, created_at: Math.floor(Date.now() / 1000), tags: [['relay', relayTag], ['challenge', challenge]], content: '' }, o.secretKey);
      const r = await c.send('AUTH', auth, o.okTimeout);
      if (!r?.ok) { c.close(); throw new Error(`AUTH refused by the home relay: ${r?.message ?? 'no answer'}`); }
    }
    if (reportedDown) o.log.info({ relay: o.url }, 'spider: home relay reachable again');
    reportedDown = 0;
    return c;
  }

  /** The open connection, opening one (with backoff) until `deadline`. */
  async function get(deadline: number): Promise<Conn> {
    for (let wait = 200; ; wait = Math.min(wait * 2, 5000)) {
      if (closed) throw new DeliveryError('sink closed');
      if (conn && !conn.closed) return conn;
      if (!connecting) {
        connecting = open().finally(() => { connecting = null; });
      }
      try {
        conn = await connecting;
        return conn;
      } catch (e) {
        lastProblem = `connect: ${(e as Error).message}`;
        if (Date.now() - reportedDown > 10_000) {
          o.log.warn({ relay: o.url, err: lastProblem }, 'spider: home relay unreachable; retrying delivery');
          reportedDown = Date.now();
        }
      }
      if (Date.now() + wait > deadline) throw new DeliveryError(`could not deliver to ${o.url} within ${o.deliveryTimeout} ms (${lastProblem})`);
      await sleep(wait);
    }
  }

  return {
    kind: 'remote',
    get delivered() { return delivered; },
    async ready() {
      await get(Date.now());
    },
    async known(evs) {
      // Asked on the delivery connection; when it is down, nothing is known and put() retries.
      let c: Conn;
      try { c = await get(Date.now() + o.connectTimeout); } catch { return evs.map(() => null); }
      return lookup(c, evs, o.okTimeout);
    },
    async put(ev): Promise<IngestStatus> {
      while (inFlight >= o.window && !closed) await new Promise<void>((r) => slots.push(r));
      inFlight++;
      try {
        const deadline = Date.now() + o.deliveryTimeout;
        for (let wait = 200; ; wait = Math.min(wait * 2, 5000)) {
          const c = await get(deadline);
          const r = await c.send('EVENT', ev, o.okTimeout);
          if (r && !(!r.ok && retryable(r.message))) {
            if (r.ok) delivered++;
            return statusFromOk(r.ok, r.message);
          }
          lastProblem = r ? r.message : 'connection lost or no OK';
          if (r && /^auth-required:/.test(r.message)) {
            // without a key, asking again cannot help
            if (!o.secretKey) throw new DeliveryError(`${o.url} requires AUTH to publish: set spider.workerKey (and list its pubkey in the relay's spider.workerPubkeys)`);
            c.close();
            conn = null;
          }
          if (Date.now() + wait > deadline) throw new DeliveryError(`event ${ev.id} not delivered to ${o.url} within ${o.deliveryTimeout} ms (${lastProblem})`);
          await sleep(wait);
        }
      } finally {
        inFlight--;
        slots.shift()?.();
      }
    },
    async record(op, args) {
      const reqId = randomUUID();
      const deadline = Date.now() + o.deliveryTimeout;
      for (let wait = 200; ; wait = Math.min(wait * 2, 5000)) {
        const c = await get(deadline);
        const r = await c.record(reqId, op, args, o.okTimeout);
        if (r?.ok) return r.payload;
        const text = r ? String(r.payload) : 'connection lost or no answer';
        // the relay's own trouble (error:) may pass; a refusal of the write itself will not
        if (r && !text.startsWith('error:')) throw new DeliveryError(`${o.url} refused the record write ${op}: ${text}`);
        lastProblem = text;
        if (Date.now() + wait > deadline) throw new DeliveryError(`record write ${op} not applied by ${o.url} within ${o.deliveryTimeout} ms (${lastProblem})`);
        await sleep(wait);
      }
    },
    async close() {
      closed = true;
      conn?.close();
      for (const s of slots.splice(0)) s();
    },
  };
}
