// One short WebSocket visit to a relay, timed: open (the handshake, TLS included), read (a REQ until
// its first answer) and, when given an event, write (EVENT until its OK). The validator asks only
// whether a Nostr relay answers; the monitor takes the round-trip times and, for wss://, the
// certificate the handshake showed. Everything is bounded: one timeout per step, a frame cap, and
// the socket goes to the address url.ts resolved and checked (no second DNS answer is used).
// The crawler's RelayClient routes subscriptions and ignores AUTH and OK; a probe needs exactly
// those, and nothing else, so it is its own small thing.
import net from 'node:net';
import tls from 'node:tls';
import WebSocket from 'ws';
import type { Target } from './url.js';
import type { NostrEvent } from '../nostr/event.js';

/** The certificate of a wss:// relay, as the TLS handshake showed it. */
export interface SslInfo {
  /** the chain verified for the host name */
  valid: boolean;
  /** notAfter, unix seconds */
  expires?: number;
  /** issuer organisation (else common name) */
  issuer?: string;
  /** why it is not valid (node's error code or message) */
  error?: string;
}

/** What a relay said first to our REQ (or unasked): any of them makes it a Nostr relay. */
export type NostrAnswer = 'eose' | 'event' | 'closed' | 'notice' | 'auth';

export interface ProbeOptions {
  /** per step: open, read, write */
  timeout: number;
  /** publish this event after the read and time its OK */
  write?: NostrEvent;
  /** largest frame accepted (bigger closes the connection) */
  maxPayload?: number;
  signal?: AbortSignal;
  /**
   * hand the open connection over instead of closing it (the monitor's probes continue on it):
   * `socket` in the result, without this module's listeners; the caller closes it
   */
  handOver?: boolean;
}

export interface ProbeResult {
  opened: boolean;
  /** ms, fractional */
  open?: number;
  /** the first Nostr message the relay sent (to our REQ, or unasked: NOTICE, AUTH) */
  answer?: NostrAnswer;
  /** ms from REQ to EOSE/EVENT/CLOSED for it (a refusal is timed too: the monitor publishes only a served read) */
  read?: number;
  /** the CLOSED reason, when the REQ was refused */
  closed?: string;
  /**
   * the relay sent a NIP-42 challenge. A challenge alone is not a requirement: many relays
   * challenge every connection and serve it without AUTH; only a refusal (CLOSED or OK false
   * `auth-required:`) says AUTH is needed.
   */
  challenged: boolean;
  write?: { ok: boolean; message: string; ms?: number };
  ssl?: SslInfo;
  error?: string;
  /** the challenge came before the answer to our REQ (sent on connect) */
  challengedFirst?: boolean;
  /** with handOver: the open connection, when the visit ended without an error */
  socket?: WebSocket;
}

const READ_FILTER = { kinds: [1], limit: 1 };
let probeCounter = 0;

function certificateOf(sock: tls.TLSSocket): SslInfo {
  const cert = sock.getPeerCertificate();
  const info: SslInfo = { valid: sock.authorized };
  if (cert && cert.valid_to) {
    const t = Date.parse(cert.valid_to);
    if (Number.isFinite(t)) info.expires = Math.floor(t / 1000);
  }
  const issuer = cert?.issuer as Record<string, string | string[]> | undefined;
  const name = issuer?.O ?? issuer?.CN;
  if (name) info.issuer = (Array.isArray(name) ? name[0] : name).slice(0, 200);
  if (!sock.authorized && sock.authorizationError) info.error = String(sock.authorizationError);
  return info;
}

export function probeRelay(target: Target, o: ProbeOptions): Promise<ProbeResult> {
  const result: ProbeResult = { opened: false, challenged: false };
  const subId = `owm${(++probeCounter).toString(36)}`;
  return new Promise((resolve) => {
    let settled = false;
    let step: 'open' | 'read' | 'write' = 'open';
    let stepStart = performance.now();
    let timer: NodeJS.Timeout | undefined;
    let ws: WebSocket;

    const finish = (error?: string) => {
      if (settled) return;
      settled = true;
      if (error && !result.error) result.error = error;
      clearTimeout(timer);
      o.signal?.removeEventListener('abort', onAbort);
      if (o.handOver && !error && !result.error && ws?.readyState === WebSocket.OPEN) {
        for (const ev of ['message', 'close', 'error', 'unexpected-response', 'open']) ws.removeAllListeners(ev);
        ws.on('error', () => { /* the new owner listens */ });
        result.socket = ws;
        return resolve(result);
      }
      try {
        if (ws.readyState === WebSocket.OPEN) ws.close(1000);
        // an unresponsive relay is not owed a polite close handshake
        setTimeout(() => { try { ws.terminate(); } catch { /* gone */ } }, 500).unref();
      } catch { /* not created */ }
      resolve(result);
    };
    const arm = (s: typeof step) => {
      step = s;
      stepStart = performance.now();
      clearTimeout(timer);
      timer = setTimeout(() => finish(`${s}: no answer within ${o.timeout} ms`), o.timeout);
    };
    const onAbort = () => finish('aborted');
    o.signal?.addEventListener('abort', onAbort, { once: true });

    const startWrite = () => {
      if (!o.write) return finish();
      arm('write');
      ws.send(JSON.stringify(['EVENT', o.write]));
    };

    arm('open');
    try {
      ws = new WebSocket(target.url, {
        perMessageDeflate: false,
        maxPayload: o.maxPayload ?? 256 * 1024,
        handshakeTimeout: o.timeout,
        followRedirects: false,
        headers: { 'User-Agent': 'orbweaver-monitor' },
        createConnection: ((opts: net.NetConnectOpts & tls.ConnectionOptions) => {
          if (!target.secure) return net.connect({ ...opts, host: target.address, port: target.port } as net.NetConnectOpts);
          const sock = tls.connect({ ...opts, host: target.address, port: target.port, servername: net.isIP(target.hostname) ? '' : target.hostname } as tls.ConnectionOptions);
          sock.once('secureConnect', () => { result.ssl = certificateOf(sock); });
          sock.once('error', (e: NodeJS.ErrnoException) => { if (!result.ssl && /CERT|SSL|TLS|certificate/i.test(`${e.code} ${e.message}`)) result.ssl = { valid: false, error: e.code ?? e.message }; });
          return sock;
        }) as never,
      });
    } catch (e) {
      return finish(`open: ${(e as Error).message}`);
    }
    ws.on('unexpected-response', (_req, res) => finish(`open: HTTP ${res.statusCode} instead of a WebSocket upgrade`));
    ws.on('error', (e) => finish(`${step}: ${e.message}`));
    ws.on('close', (code) => finish(`${step}: connection closed (${code})`));
    ws.on('open', () => {
      result.opened = true;
      result.open = performance.now() - stepStart;
      arm('read');
      ws.send(JSON.stringify(['REQ', subId, READ_FILTER]));
    });
    ws.on('message', (data, isBinary) => {
      if (isBinary) return;
      let msg: unknown;
      try { msg = JSON.parse(data.toString()); } catch { return; }
      if (!Array.isArray(msg) || typeof msg[0] !== 'string') return;
      const verb = msg[0];
      if (verb === 'AUTH') { if (!result.challenged) result.challengedFirst = result.read === undefined; result.challenged = true; result.answer ??= 'auth'; return; }
      if (verb === 'NOTICE') { result.answer ??= 'notice'; return; }
      if (step === 'read' && msg[1] === subId && (verb === 'EVENT' || verb === 'EOSE' || verb === 'CLOSED')) {
        result.read = performance.now() - stepStart;
        result.answer = verb === 'EVENT' ? 'event' : verb === 'EOSE' ? 'eose' : 'closed';
        if (verb === 'CLOSED') result.closed = typeof msg[2] === 'string' ? msg[2].slice(0, 200) : '';
        else ws.send(JSON.stringify(['CLOSE', subId]));
        startWrite();
        return;
      }
      if (step === 'write' && verb === 'OK' && msg[1] === o.write?.id) {
        const message = typeof msg[3] === 'string' ? msg[3].slice(0, 200) : '';
        result.write = { ok: msg[2] === true, message };
        if (msg[2] === true) result.write.ms = performance.now() - stepStart;
        finish();
      }
    });
  });
}
