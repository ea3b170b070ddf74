// Sockets for the attack benchmark: a `ws` client with a chosen local address and headers that
// hands parsed messages to one callback, and the victim's closed loop (run in its own thread by
// attack-victim.ts, so the attackers' busy loops in the main thread cannot delay its readings).
import WebSocket from 'ws';
import { msgType, publishAll } from './client.js';
import { Histogram } from './histogram.js';
import { eventFrames, type NostrEvent } from './events.js';
import { log } from './report.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export interface Sock {
  ws: WebSocket;
  /** parsed messages are handed here */
  onMessage?: (m: unknown[], raw: Buffer) => void;
  closed: boolean;
  /** the NIP-42 challenge, once received */
  challenge?: string;
}

/** Opens a socket; with `parse` false only AUTH messages are parsed (a client that reads nothing). */
export function open(url: string, localAddress: string | undefined, headers: Record<string, string> = {}, parse = true): Promise<Sock> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { perMessageDeflate: false, skipUTF8Validation: true, maxPayload: 64 << 20, handshakeTimeout: 10_000, localAddress, headers });
    const s: Sock = { ws, closed: false };
    ws.on('message', (d: Buffer) => {
      if (!parse && msgType(d) !== 'AUTH') return;
      let m: unknown[];
      try { m = JSON.parse(d.toString()) as unknown[]; } catch { return; }
      if (m[0] === 'AUTH' && typeof m[1] === 'string') s.challenge = m[1];
      s.onMessage?.(m, d);
    });
    ws.on('close', () => { s.closed = true; });
    ws.once('open', () => { ws.on('error', () => {}); resolve(s); });
    ws.once('error', (e) => { s.closed = true; reject(e); });
  });
}

/** `n` sockets, 25 handshakes at a time; the ones the relay refuses are left out. */
export async function openMany(url: string, n: number, localAddress: string | undefined, parse = true): Promise<Sock[]> {
  const out: Sock[] = [];
  for (let i = 0; i < n; i += 25) out.push(...(await Promise.all(Array.from({ length: Math.min(25, n - i) }, () => open(url, localAddress, {}, parse).catch(() => null)))).filter((s): s is Sock => s !== null));
  return out;
}

export const send = (s: Sock, m: unknown): void => { if (!s.closed) s.ws.send(typeof m === 'string' ? m : JSON.stringify(m)); };

/**
 * The connection's NIP-42 challenge ('' if none came within 2 s). A relay that challenges on demand
 * (orbweaver's default) sends it in answer to an AUTH without a challenge tag, so one is sent when
 * no challenge is there yet; a relay that challenged on connect has sent it already or is sending it.
 */
export async function challengeOf(s: Sock): Promise<string> {
  if (!s.challenge) send(s, ['AUTH', { kind: 22242, created_at: Math.floor(Date.now() / 1000), tags: [['relay', s.ws.url]], content: '' }]);
  for (let i = 0; i < 100 && !s.challenge; i++) await sleep(20);
  return s.challenge ?? '';
}

/** The NIP-01 prefix of a refusal message. */
export const prefixOf = (msg: unknown): string => String(msg ?? '').split(':')[0] || '(empty)';

export interface VictimResult {
  byId: Histogram; small: Histogram; eventOk: Histogram; timeouts: number; failures: Record<string, number>;
  /** events the relay answered OK true during the run, and how many of them a read by id afterwards did not find */
  acked: number; lost: number;
}

/** One connection, closed loop until `stop()`: REQ by id, small REQ, EVENT -> OK, then a 10 ms pause. */
export async function victim(url: string, address: string | undefined, ids: string[], fresh: NostrEvent[], stop: () => boolean, timeoutMs: number): Promise<VictimResult> {
  const r: VictimResult = { byId: new Histogram(), small: new Histogram(), eventOk: new Histogram(), timeouts: 0, failures: {}, acked: 0, lost: 0 };
  const acked = new Set<string>();
  const fail = (k: string) => { r.failures[k] = (r.failures[k] ?? 0) + 1; };
  let s: Sock | null = null;
  let waiter: { match: (m: unknown[]) => boolean; done: (m: unknown[] | null) => void } | null = null;
  const connect = async (): Promise<Sock> => {
    const c = await open(url, address);
    c.onMessage = (m) => { if (waiter?.match(m)) { const w = waiter; waiter = null; w.done(m); } };
    c.ws.on('close', () => { const w = waiter; waiter = null; w?.done(null); });
    return c;
  };
  const ask = async (frame: unknown, match: (m: unknown[]) => boolean, h: Histogram, what: string): Promise<unknown[] | null> => {
    if (!s || s.closed) {
      try { s = await connect(); } catch { fail(`${what}: cannot connect`); await sleep(100); return null; }
    }
    const c = s;
    const t0 = performance.now();
    const m = await new Promise<unknown[] | null | 'timeout'>((resolve) => {
      const timer = setTimeout(() => { waiter = null; resolve('timeout'); }, timeoutMs);
      waiter = { match, done: (x) => { clearTimeout(timer); resolve(x); } };
      send(c, frame);
    });
    if (m === 'timeout') { r.timeouts++; h.record(timeoutMs); return null; }
    if (m === null) { fail(`${what}: connection closed`); return null; }
    h.record(performance.now() - t0);
    if (m[0] === 'CLOSED') fail(`${what}: ${prefixOf(m[2])}`);
    if (m[0] === 'OK' && m[2] !== true) fail(`${what}: ${prefixOf(m[3])}`);
    return m;
  };
  for (let i = 0; !stop(); i++) {
    const byId = `v${i}`;
    await ask(['REQ', byId, { ids: [ids[(i * 7919) % ids.length]] }], (m) => (m[0] === 'EOSE' || m[0] === 'CLOSED') && m[1] === byId, r.byId, 'by id');
    if (s) send(s, ['CLOSE', byId]);
    const small = `w${i}`;
    await ask(['REQ', small, { kinds: [1], limit: 10 }], (m) => (m[0] === 'EOSE' || m[0] === 'CLOSED') && m[1] === small, r.small, 'small REQ');
    if (s) send(s, ['CLOSE', small]);
    const ev = fresh[i % fresh.length];
    const ok = await ask(['EVENT', ev], (m) => m[0] === 'OK' && m[1] === ev.id, r.eventOk, 'EVENT');
    if (ok?.[2] === true) acked.add(ev.id);
    await sleep(10);
  }
  (s as Sock | null)?.ws.terminate();
  r.acked = acked.size;
  r.lost = await unread(url, address, [...acked]);
  return r;
}

/** How many of `ids` a read by id (new connection, 500 ids a REQ) does not return: lost acknowledged events. */
async function unread(url: string, address: string | undefined, ids: string[]): Promise<number> {
  if (ids.length === 0) return 0;
  const found = new Set<string>();
  const c = await open(url, address);
  try {
    for (let i = 0; i < ids.length; i += 500) {
      const sub = `back${i}`;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, 30_000);
        c.onMessage = (m) => {
          if (m[0] === 'EVENT' && m[1] === sub) found.add((m[2] as NostrEvent).id);
          if ((m[0] === 'EOSE' || m[0] === 'CLOSED') && m[1] === sub) { clearTimeout(t); resolve(); }
        };
        send(c, ['REQ', sub, { ids: ids.slice(i, i + 500) }]);
      });
      send(c, ['CLOSE', sub]);
    }
  } finally {
    c.ws.terminate();
  }
  return ids.length - found.size;
}

/**
 * Publishes within a relay's default per-address limits (2,000 messages and 1 MiB a second): one
 * second's worth at a time, 1,500 events or 900 KB, whichever comes first.
 */
export async function loadPaced(url: string, events: NostrEvent[]): Promise<{ stored: number; duplicates: number; rejected: number; missing: number }> {
  const frames = eventFrames(events);
  const totals = { stored: 0, duplicates: 0, rejected: 0, missing: 0 };
  for (let i = 0; i < frames.length; ) {
    const t0 = performance.now();
    let j = i;
    for (let bytes = 0; j < frames.length && j - i < 1500 && (j === i || bytes + frames[j].length <= 900_000); j++) bytes += frames[j].length;
    const r = await publishAll(url, frames.slice(i, j), events.slice(i, j).map((e) => e.id), { connections: 2, inflight: 50, timeoutMs: 120_000 });
    totals.stored += r.stored;
    totals.duplicates += r.duplicates;
    totals.rejected += r.rejectedTotal;
    totals.missing += r.missing;
    i = j;
    await sleep(Math.max(0, 1000 - (performance.now() - t0)));
  }
  log(`  ${events.length} events: ${totals.stored} stored, ${totals.duplicates} already there, ${totals.rejected} rejected, ${totals.missing} missing`);
  return totals;
}
