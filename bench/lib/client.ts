// A light WebSocket client on `ws`: no compression, no UTF-8 validation, frames sent in corked
// batches, incoming messages classified by their first bytes instead of a full JSON.parse.
import WebSocket from 'ws';
import type { Socket } from 'node:net';
import { Histogram } from './histogram.js';
import { log } from './report.js';

export { WebSocket };

/** An expected failure (relay refused, unreachable): printed without a stack trace. */
export class BenchError extends Error {}

export function connect(url: string, timeoutMs = 10_000): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { perMessageDeflate: false, skipUTF8Validation: true, maxPayload: 64 * 1024 * 1024, handshakeTimeout: timeoutMs });
    const fail = (err: Error): void => {
      ws.removeAllListeners();
      ws.on('error', () => {});
      ws.terminate();
      reject(err);
    };
    ws.once('open', () => {
      ws.removeListener('error', fail);
      ws.on('error', (err) => log(`  websocket error: ${err.message}`));
      resolve(ws);
    });
    ws.once('error', (err) => fail(new BenchError(`${url}: ${err.message}`)));
  });
}

/** Opens `n` connections, `parallel` handshakes at a time. */
export async function connectMany(url: string, n: number, parallel = 50): Promise<WebSocket[]> {
  const out: WebSocket[] = new Array(n);
  let next = 0;
  let opened = 0;
  const worker = async (): Promise<void> => {
    while (next < n) {
      const i = next++;
      out[i] = await connect(url);
      opened++;
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(parallel, n) }, worker));
  } catch (err) {
    closeAll(out.filter(Boolean));
    const msg = err instanceof Error ? err.message : String(err);
    throw new BenchError(`could not open ${n} connections to ${url}: ${opened} opened, then "${msg}"${/429|503/.test(msg) ? ' — the relay limits connections (per IP?); raise that limit for this benchmark' : ''}`);
  }
  return out;
}

export function closeAll(conns: WebSocket[]): void {
  for (const ws of conns) if (ws) ws.terminate();
}

/** Sends several frames in one write (cork/uncork around ws.send). */
export function sendBatch(ws: WebSocket, frames: (string | Buffer)[]): void {
  const sock = (ws as unknown as { _socket?: Socket })._socket;
  sock?.cork();
  for (const f of frames) ws.send(f, { binary: false });
  sock?.uncork();
}

export type MsgType = 'EVENT' | 'EOSE' | 'OK' | 'CLOSED' | 'COUNT' | 'NOTICE' | 'AUTH' | 'OTHER';

const Q = 0x22; // "
/** Type of a relay message from its first bytes (`["EVENT",...`), without parsing it. */
export function msgType(b: Buffer): MsgType {
  // tolerate whitespace after '['
  let i = 1;
  while (i < b.length && b[i] !== Q) i++;
  const c = b[i + 1];
  const d = b[i + 2];
  const e = b[i + 3];
  switch (c) {
    case 0x45: // E
      return d === 0x56 ? 'EVENT' : d === 0x4f ? 'EOSE' : 'OTHER';
    case 0x4f: // O
      return 'OK';
    case 0x43: // C
      return e === 0x4f ? 'CLOSED' : e === 0x55 ? 'COUNT' : 'OTHER';
    case 0x4e:
      return 'NOTICE';
    case 0x41:
      return 'AUTH';
    default:
      return 'OTHER';
  }
}

// ---------------------------------------------------------------------------------------------
// Pipelined publishing: used by ingest and by the loaders of query and spider-fetch.

export interface PublishResult {
  sent: number;
  /** OK true for an event the relay did not have */
  stored: number;
  /** OK true with a "duplicate:" message */
  duplicates: number;
  /** OK false, by message prefix */
  rejected: Record<string, number>;
  rejectedTotal: number;
  /** no OK before the deadline or the connection closed */
  missing: number;
  notices: number;
  /** first send to last OK */
  elapsedMs: number;
  latency: Histogram;
}

export interface PublishOptions {
  connections: number;
  inflight: number;
  timeoutMs: number;
  progress?: boolean;
}

/**
 * Publishes pre-built EVENT frames over `connections` sockets with `inflight` unacknowledged events
 * per socket; returns counts and the time-to-OK histogram. Connections are opened before the clock.
 */
export async function publishAll(url: string, frames: Buffer[], ids: string[], o: PublishOptions): Promise<PublishResult> {
  const conns = await connectMany(url, o.connections);
  const r: PublishResult = { sent: 0, stored: 0, duplicates: 0, rejected: {}, rejectedTotal: 0, missing: 0, notices: 0, elapsedMs: 0, latency: new Histogram() };
  const total = frames.length;
  let done = 0;
  let firstSend = 0;
  let lastAck = 0;
  let over = false;
  let resolveAll!: () => void;
  const finished = new Promise<void>((res) => (resolveAll = res));
  const pendingByConn: Map<string, number>[] = [];

  const started = performance.now();
  firstSend = started;
  conns.forEach((ws, c) => {
    // connection c sends indices c, c+C, c+2C, ...
    let next = c;
    const pending = new Map<string, number>();
    pendingByConn.push(pending);
    const pump = (): void => {
      const batch: Buffer[] = [];
      const now = performance.now();
      while (pending.size < o.inflight && next < total) {
        pending.set(ids[next]!, now);
        batch.push(frames[next]!);
        next += o.connections;
      }
      if (batch.length) {
        r.sent += batch.length;
        sendBatch(ws, batch);
      }
    };
    ws.on('message', (data: Buffer) => {
      const t = msgType(data);
      if (t === 'NOTICE') {
        r.notices++;
        if (r.notices <= 3) log(`  NOTICE: ${data.toString().slice(0, 200)}`);
        return;
      }
      if (t !== 'OK') return;
      const m = JSON.parse(data.toString()) as [string, string, boolean, string];
      const t0 = pending.get(m[1]);
      if (t0 === undefined) return;
      pending.delete(m[1]);
      const now = performance.now();
      r.latency.record(now - t0);
      lastAck = now;
      if (m[2]) {
        if (typeof m[3] === 'string' && m[3].startsWith('duplicate')) r.duplicates++;
        else r.stored++;
      } else {
        const prefix = String(m[3] ?? '').split(':')[0] || '(empty)';
        r.rejected[prefix] = (r.rejected[prefix] ?? 0) + 1;
        r.rejectedTotal++;
        if (r.rejectedTotal <= 3) log(`  OK false: ${String(m[3]).slice(0, 200)}`);
      }
      done++;
      if (done === total) resolveAll();
      else pump();
    });
    ws.on('close', () => {
      if (over) return; // closed by us at the end
      if (pending.size || next < total) {
        log(`  connection ${c} closed by the relay with ${pending.size} events unacknowledged`);
        const lost = pending.size + Math.max(0, Math.ceil((total - next) / o.connections));
        pending.clear();
        next = total;
        done += lost;
        r.missing += lost;
        if (done >= total) resolveAll();
      }
    });
    pump();
  });

  let progressTimer: NodeJS.Timeout | undefined;
  if (o.progress) {
    progressTimer = setInterval(() => {
      const secs = (performance.now() - started) / 1000;
      log(`  ${done}/${total} acknowledged, ${Math.round(done / secs)}/s`);
    }, 2000);
  }
  const timeout = new Promise<'timeout'>((res) => setTimeout(() => res('timeout'), o.timeoutMs).unref());
  const how = await Promise.race([finished.then(() => 'done' as const), timeout]);
  if (progressTimer) clearInterval(progressTimer);
  if (how === 'timeout') {
    const unacked = total - done;
    log(`  timeout after ${o.timeoutMs / 1000} s: ${unacked} events without OK`);
    r.missing += unacked;
  }
  r.elapsedMs = (lastAck || performance.now()) - firstSend;
  over = true;
  closeAll(conns);
  return r;
}
