// One outbound WebSocket to a remote relay, carrying several subscriptions at once. The connection
// is pinned to the address resolved by url.ts. Frames are bounded: a frame above maxPayload closes the
// connection (ws enforces it), a frame above the event budget is dropped without being parsed.
// Nothing the remote sends is trusted here: this layer only routes messages by subscription id;
// the spider's fetch/admit.ts checks every event.
import net from 'node:net';
import tls from 'node:tls';
import WebSocket from 'ws';
import type { Target } from './url.js';
import type { WireFilter } from '../nostr/filter.js';
import type { NegHandlers, NegTransport } from './reconcile.js';

export interface SubHandlers {
  /** an EVENT for this subscription: the raw parsed value (untrusted) and the frame size */
  event(ev: unknown, bytes: number): void;
  /** EOSE, with its NIP-67 hints when it had any (strings only, at most 8, untrusted) */
  eose(hints?: string[]): void;
  closed(reason: string): void;
}

export interface ClientOptions {
  connectTimeout: number;
  /** largest frame accepted at all; bigger closes the connection */
  maxPayload: number;
  /** frames bigger than this are dropped unparsed and counted */
  maxFrame: number;
  userAgent?: string;
}

let subCounter = 0;

/** A relay's answer to COUNT: the figure, a refusal (CLOSED), or an answer that is no count. */
export type CountAnswer = { count: number; hll?: string; approximate?: boolean } | { closed: string } | { invalid: string };

export class RelayClient implements NegTransport {
  private ws!: WebSocket;
  private subs = new Map<string, SubHandlers>();
  /** NIP-77 sessions by subscription id (src/remote/reconcile.ts drives them) */
  private negs = new Map<string, NegHandlers>();
  private countWaiters = new Map<string, (a: CountAnswer | null) => void>();
  private closedReason: string | null = null;
  /** NOTICE texts received (last few), for logs and quirk detection */
  readonly notices: string[] = [];
  /** frames dropped for being oversized, unparsable or for an unknown subscription */
  dropped = { oversized: 0, malformed: 0, unknownSub: 0 };
  /** bytes of every message received */
  bytesIn = 0;
  /** messages received (any verb, parsed or not) */
  framesIn = 0;
  /** Nostr answers routed so far (EVENT, EOSE, CLOSED, COUNT, NEG-*): tells a challenge on connect from one on demand */
  answers = 0;
  /** NIP-42 challenges received, with how many answers had been routed before each (0: on connect) */
  readonly challenges: Array<{ afterAnswers: number }> = [];
  private noticeListeners = new Set<(text: string) => void>();
  /** holds on reading (hold()): the socket is paused while there is one */
  private holds = 0;
  onClose?: (reason: string) => void;

  private constructor(readonly target: Target, private readonly opts: ClientOptions) {}

  static connect(target: Target, opts: ClientOptions, signal?: AbortSignal): Promise<RelayClient> {
    const c = new RelayClient(target, opts);
    return c.open(signal).then(() => c);
  }

  /** Takes over a connection that is already open (the monitor's probes continue the check's visit). */
  static adopt(ws: WebSocket, target: Target, opts: ClientOptions): RelayClient {
    const c = new RelayClient(target, opts);
    c.ws = ws;
    ws.on('error', (e) => c.shutdown(`error: ${e.message}`));
    ws.on('close', (code, reason) => c.shutdown(`connection closed (${code}${reason.length ? ' ' + reason.toString().slice(0, 100) : ''})`));
    ws.on('message', (data, isBinary) => c.onMessage(data as Buffer, isBinary));
    if (ws.readyState !== WebSocket.OPEN) queueMicrotask(() => c.shutdown('not open'));
    return c;
  }

  private open(signal?: AbortSignal): Promise<void> {
    const t = this.target;
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(t.url, {
        perMessageDeflate: false,
        maxPayload: this.opts.maxPayload,
        handshakeTimeout: this.opts.connectTimeout,
        followRedirects: false,
        headers: { 'User-Agent': this.opts.userAgent ?? 'orbweaver-spider' },
        // Connect to the pinned address; TLS still verifies the certificate for the host name.
        createConnection: ((o: net.NetConnectOpts & tls.ConnectionOptions) =>
          t.secure
            ? tls.connect({ ...o, host: t.address, port: t.port, servername: net.isIP(t.hostname) ? '' : t.hostname } as tls.ConnectionOptions)
            : net.connect({ ...o, host: t.address, port: t.port } as net.NetConnectOpts)) as never,
      });
      this.ws = ws;
      let settled = false;
      const timer = setTimeout(() => fail(new Error(`connect timeout after ${this.opts.connectTimeout} ms`)), this.opts.connectTimeout);
      const onAbort = () => fail(new Error('aborted'));
      signal?.addEventListener('abort', onAbort, { once: true });
      const fail = (e: Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        try { ws.terminate(); } catch { /* already gone */ }
        reject(e);
      };
      ws.on('open', () => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        resolve();
      });
      ws.on('error', (e) => {
        if (!settled) fail(e);
        else this.shutdown(`error: ${e.message}`);
      });
      ws.on('unexpected-response', (_req, res) => fail(new Error(`HTTP ${res.statusCode} instead of a WebSocket upgrade`)));
      ws.on('close', (code, reason) => {
        if (!settled) fail(new Error(`closed during connect (${code})`));
        this.shutdown(`connection closed (${code}${reason.length ? ' ' + reason.toString().slice(0, 100) : ''})`);
      });
      ws.on('message', (data, isBinary) => this.onMessage(data as Buffer, isBinary));
    });
  }

  get isOpen(): boolean {
    return this.closedReason === null && this.ws.readyState === WebSocket.OPEN;
  }

  get closeReason(): string | null {
    return this.closedReason;
  }

  private shutdown(reason: string): void {
    if (this.closedReason !== null) return;
    this.closedReason = reason;
    for (const [, h] of this.subs) h.closed(`connection: ${reason}`);
    this.subs.clear();
    for (const [, w] of this.countWaiters) w(null);
    this.countWaiters.clear();
    for (const [, h] of this.negs) h.closed(`connection: ${reason}`);
    this.negs.clear();
    this.onClose?.(reason);
  }

  private onMessage(data: Buffer, isBinary: boolean): void {
    // closed (by us, or cut off): what is still in the socket is not parsed, whatever it is
    if (this.closedReason !== null) return;
    const bytes = data.length;
    this.bytesIn += bytes;
    this.framesIn++;
    if (isBinary) { this.dropped.malformed++; return; }
    // NIP-77 messages are bounded by maxPayload alone: relays send up to ~1 MB of hex per NEG-MSG
    if (bytes > this.opts.maxFrame && !(this.negs.size > 0 && /^\s*\[\s*"NEG-/.test(data.subarray(0, 16).toString('latin1')))) {
      // Route the drop to its subscription when the id is readable from the frame's head.
      this.dropped.oversized++;
      const head = /^\s*\[\s*"EVENT"\s*,\s*"([^"]{1,64})"/.exec(data.subarray(0, 100).toString('latin1'));
      if (head) this.subs.get(head[1])?.event(undefined, bytes);
      return;
    }
    let msg: unknown;
    try { msg = JSON.parse(data.toString('utf8')); } catch { this.dropped.malformed++; return; }
    if (!Array.isArray(msg) || typeof msg[0] !== 'string') { this.dropped.malformed++; return; }
    const verb = msg[0];
    const sub = typeof msg[1] === 'string' ? this.subs.get(msg[1]) : undefined;
    if (verb === 'EVENT' || verb === 'EOSE' || verb === 'CLOSED' || verb === 'COUNT' || verb === 'NEG-MSG' || verb === 'NEG-ERR') this.answers++;
    switch (verb) {
      case 'EVENT':
        if (!sub) { this.dropped.unknownSub++; return; }
        sub.event(msg[2], bytes);
        return;
      case 'EOSE':
        if (!sub) { this.dropped.unknownSub++; return; }
        sub.eose(Array.isArray(msg[2]) ? (msg[2] as unknown[]).filter((h): h is string => typeof h === 'string').slice(0, 8) : undefined);
        return;
      case 'CLOSED':
        if (!sub) { this.dropped.unknownSub++; return; }
        this.subs.delete(msg[1] as string);
        sub.closed(typeof msg[2] === 'string' ? msg[2].slice(0, 300) : '');
        return;
      case 'COUNT': {
        const w = typeof msg[1] === 'string' ? this.countWaiters.get(msg[1]) : undefined;
        if (!w) return;
        this.countWaiters.delete(msg[1] as string);
        const body = msg[2] as { count?: unknown; hll?: unknown; approximate?: unknown } | undefined;
        const n = body?.count;
        if (!Number.isSafeInteger(n) || (n as number) < 0) { w({ invalid: JSON.stringify(msg[2] ?? null).slice(0, 100) }); return; }
        const a: CountAnswer = { count: n as number };
        if (body?.hll !== undefined) a.hll = typeof body.hll === 'string' ? body.hll.slice(0, 1024) : '';
        if (body?.approximate === true) a.approximate = true;
        w(a);
        return;
      }
      case 'NOTICE': {
        const text = typeof msg[1] === 'string' ? msg[1].slice(0, 300) : '';
        this.notices.push(text);
        if (this.notices.length > 20) this.notices.shift();
        for (const l of [...this.noticeListeners]) l(text);
        return;
      }
      case 'NEG-MSG':
      case 'NEG-ERR': {
        const h = typeof msg[1] === 'string' ? this.negs.get(msg[1]) : undefined;
        if (!h) { this.dropped.unknownSub++; return; }
        if (verb === 'NEG-MSG') {
          if (typeof msg[2] === 'string') h.msg(msg[2]);
          else { this.negs.delete(msg[1] as string); h.err('invalid: NEG-MSG without a hex message'); }
          return;
        }
        this.negs.delete(msg[1] as string);
        h.err(typeof msg[2] === 'string' ? msg[2].slice(0, 300) : '', Number.isSafeInteger(msg[3]) ? (msg[3] as number) : undefined);
        return;
      }
      case 'AUTH':
        if (this.challenges.length < 20) this.challenges.push({ afterAnswers: this.answers });
        return; // we do not authenticate: the monitor's probes only note the challenge
      case 'OK':
        return; // we do not publish on this connection
      default:
        this.dropped.malformed++;
    }
  }

  /**
   * Stops reading from the socket until the returned function is called (and every other hold is
   * released): what the remote sends meanwhile waits in its socket and the kernel's buffers, not in
   * our memory (remote/read.ts holds while it checks a window of events). A few messages already
   * read from the socket may still be routed after the call.
   */
  hold(): () => void {
    if (this.holds++ === 0) this.ws.pause();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (--this.holds === 0 && this.closedReason === null) this.ws.resume();
    };
  }

  /** Calls `fn` for every NOTICE until the returned function is called. */
  addNoticeListener(fn: (text: string) => void): () => void {
    this.noticeListeners.add(fn);
    return () => { this.noticeListeners.delete(fn); };
  }

  /** Opens a subscription; returns its id. Handlers are called until EOSE/CLOSED/unsubscribe. */
  subscribe(filters: WireFilter[], handlers: SubHandlers): string {
    const id = `ow${(++subCounter).toString(36)}`;
    if (!this.isOpen) {
      queueMicrotask(() => handlers.closed(`connection: ${this.closedReason ?? 'not open'}`));
      return id;
    }
    this.subs.set(id, handlers);
    this.send(JSON.stringify(['REQ', id, ...filters]));
    return id;
  }

  /**
   * Stops routing a subscription and tells the relay (CLOSE), unless the relay already closed it;
   * `tell` false: no CLOSE (the connection is closed next, which ends every subscription).
   */
  unsubscribe(id: string, tell = true): void {
    if (!this.subs.delete(id)) return;
    if (tell && this.isOpen) this.send(JSON.stringify(['CLOSE', id]));
  }

  /** NIP-77: opens a negentropy session; answers go to `handlers` until NEG-ERR, negClose or the connection ends. */
  negOpen(filter: WireFilter, hex: string, handlers: NegHandlers): string {
    const id = `own${(++subCounter).toString(36)}`;
    if (!this.isOpen) {
      queueMicrotask(() => handlers.closed(`connection: ${this.closedReason ?? 'not open'}`));
      return id;
    }
    this.negs.set(id, handlers);
    this.send(JSON.stringify(['NEG-OPEN', id, filter, hex]));
    return id;
  }

  negMsg(id: string, hex: string): void {
    if (this.negs.has(id) && this.isOpen) this.send(`["NEG-MSG",${JSON.stringify(id)},"${hex}"]`);
  }

  /** Stops a negentropy session: NEG-CLOSE, unless `tell` is false (the connection is closed next). */
  negClose(id: string, tell = true): void {
    if (!this.negs.delete(id)) return;
    if (tell && this.isOpen) this.send(JSON.stringify(['NEG-CLOSE', id]));
  }

  /** NIP-45 COUNT; null when unsupported, refused, aborted, or no answer within timeoutMs. */
  async count(filters: WireFilter[], timeoutMs: number, signal?: AbortSignal): Promise<number | null> {
    const a = await this.countAnswer(filters, timeoutMs, signal);
    return a && 'count' in a ? a.count : null;
  }

  /**
   * NIP-45 COUNT with the whole answer: the count (and `hll`, `approximate` when given), the CLOSED
   * reason of a refusal, an answer that is no count; null when aborted or no answer within timeoutMs.
   */
  countAnswer(filters: WireFilter[], timeoutMs: number, signal?: AbortSignal): Promise<CountAnswer | null> {
    if (!this.isOpen || signal?.aborted) return Promise.resolve(null);
    const id = `owc${(++subCounter).toString(36)}`;
    return new Promise<CountAnswer | null>((resolve) => {
      const done = (n: CountAnswer | null) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        this.countWaiters.delete(id);
        resolve(n);
      };
      const onAbort = () => done(null);
      const timer = setTimeout(() => done(null), timeoutMs);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.countWaiters.set(id, done);
      // A relay that answers COUNT with CLOSED: route it like a subscription.
      this.subs.set(id, { event() {}, eose() {}, closed: (reason) => done(reason.startsWith('connection: ') ? null : { closed: reason }) });
      this.send(JSON.stringify(['COUNT', id, ...filters]));
    }).finally(() => { this.subs.delete(id); });
  }

  private send(text: string): void {
    try { this.ws.send(text); } catch (e) { this.shutdown(`send failed: ${(e as Error).message}`); }
  }

  /**
   * Cuts a remote off: the connection is destroyed at once, without a close handshake and without
   * reading what it has sent meanwhile (a relay that lies or floods has a backlog we do not want).
   */
  terminate(reason: string): void {
    this.shutdown(reason);
    try { this.ws.terminate(); } catch { /* already gone */ }
  }

  /** Closes politely, and for good after `graceMs` (a relay that does not answer the close is not waited for). */
  close(graceMs = 1000): void {
    this.shutdown('closed by us');
    try { this.ws.close(1000); } catch { /* ignore */ }
    // Do not wait for a polite close handshake from an unresponsive relay.
    const ws = this.ws;
    if (ws.readyState === WebSocket.CLOSED) return;
    const t = setTimeout(() => { try { ws.terminate(); } catch { /* ignore */ } }, graceMs);
    t.unref();
    ws.once('close', () => clearTimeout(t));
  }
}
