// Where fetched events go: always through the relay's one ingest path. Either in-process (the
// relay's Ingest function) or over the network to a running relay (NIP-01 EVENT, waiting for OK),
// so `orbweaver spider --once` reaches the live subscribers of a relay that is already running,
// and issue-4 workers deliver to a home relay elsewhere.
import WebSocket from 'ws';
import type { Ingest, IngestStatus } from '../relay/ingest-types.js';
import type { NostrEvent } from '../nostr/event.js';

export interface EventSink {
  readonly kind: 'ingest' | 'remote';
  /** Hands one verified event on; resolves with what the ingest path decided. */
  put(ev: NostrEvent): Promise<IngestStatus>;
  close(): Promise<void>;
}

export function ingestSink(ingest: Ingest): EventSink {
  return {
    kind: 'ingest',
    async put(ev) {
      try { return (await ingest(ev, { source: 'spider' })).status; } catch { return 'rejected'; }
    },
    async close() {},
  };
}

/** Maps an OK from a remote relay to an ingest status. */
export function statusFromOk(ok: boolean, message: string): IngestStatus {
  const m = message.toLowerCase();
  if (m.startsWith('duplicate:')) {
    // Several relays answer an older replaceable version with a duplicate-prefixed text.
    if (/newer|replaced|older/.test(m)) return 'replaced';
    return 'duplicate';
  }
  if (ok) return 'stored';
  if (/delet/.test(m)) return 'deleted';
  if (/newer|replaced|older version/.test(m)) return 'replaced';
  return 'rejected';
}

export interface RemoteSinkOptions {
  connectTimeout: number;
  /** wait this long for an OK before counting the event rejected */
  okTimeout: number;
  /** events in flight at once */
  window: number;
  /** pause after a rate-limited answer before sending that event again (doubles, 5 tries) */
  rateLimitBackoff: number;
}

/** Opens a connection to a relay that will take our EVENTs; rejects when nothing answers. */
export function remoteSink(url: string, opts: RemoteSinkOptions): Promise<EventSink> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { perMessageDeflate: false, handshakeTimeout: opts.connectTimeout, maxPayload: 1 << 20 });
    const pending = new Map<string, Array<(r: { ok: boolean; message: string } | null) => void>>();
    let inFlight = 0;
    const slotWaiters: Array<() => void> = [];
    let closed = false;
    const failAll = () => {
      closed = true;
      for (const [, ws2] of pending) for (const w of ws2) w(null);
      pending.clear();
      for (const w of slotWaiters.splice(0)) w();
    };
    ws.on('error', (e) => { if (ws.readyState !== WebSocket.OPEN) reject(e); failAll(); });
    ws.on('close', failAll);
    ws.on('message', (data) => {
      let msg: unknown;
      try { msg = JSON.parse(data.toString()); } catch { return; }
      if (!Array.isArray(msg) || msg[0] !== 'OK' || typeof msg[1] !== 'string') return;
      const ws2 = pending.get(msg[1]);
      const w = ws2?.shift();
      if (ws2 && ws2.length === 0) pending.delete(msg[1]);
      w?.({ ok: msg[2] === true, message: typeof msg[3] === 'string' ? msg[3] : '' });
    });
    const sendOnce = async (ev: NostrEvent): Promise<{ ok: boolean; message: string } | null> => {
      while (inFlight >= opts.window && !closed) await new Promise<void>((r) => slotWaiters.push(r));
      if (closed) return null;
      inFlight++;
      try {
        return await new Promise((res) => {
          const timer = setTimeout(() => { done(null); }, opts.okTimeout);
          const done = (r: { ok: boolean; message: string } | null) => { clearTimeout(timer); res(r); };
          const list = pending.get(ev.id) ?? [];
          list.push(done);
          pending.set(ev.id, list);
          ws.send(JSON.stringify(['EVENT', ev]), (err) => { if (err) done(null); });
        });
      } finally {
        inFlight--;
        slotWaiters.shift()?.();
      }
    };
    ws.on('open', () => {
      resolve({
        kind: 'remote',
        async put(ev) {
          let wait = opts.rateLimitBackoff;
          for (let attempt = 0; ; attempt++) {
            const r = await sendOnce(ev);
            if (!r) return 'rejected';
            if (!r.ok && r.message.startsWith('rate-limited:') && attempt < 5 && !closed) {
              await new Promise((res) => setTimeout(res, wait));
              wait *= 2;
              continue;
            }
            return statusFromOk(r.ok, r.message);
          }
        },
        async close() {
          if (ws.readyState === WebSocket.OPEN) ws.close(1000);
          failAll();
        },
      });
    });
  });
}
