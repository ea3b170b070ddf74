// A small test client over `ws`: send messages, wait for the ones that match, publish and query.
import WebSocket from 'ws';
import { finalizeEvent, generateSecretKey, getPublicKey } from 'nostr-tools/pure';
import type { NostrEvent } from '../../src/nostr/event.js';

export const now = () => Math.floor(Date.now() / 1000);
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class Author {
  readonly pk: string;
  /** a new key, or the one given (a data directory's local key) */
  constructor(readonly sk: Uint8Array = generateSecretKey()) { this.pk = getPublicKey(sk); }
  sign({ kind = 1, created_at = now(), tags = [] as string[][], content = '' } = {}): NostrEvent {
    const e = finalizeEvent({ kind, created_at, tags, content }, this.sk);
    return { id: e.id, pubkey: e.pubkey, created_at: e.created_at, kind: e.kind, tags: e.tags, content: e.content, sig: e.sig };
  }
}

type Msg = unknown[];

export class Client {
  readonly ws: WebSocket;
  readonly inbox: Msg[] = [];
  /** every message but EVENTs, in the order received (next() takes messages out of `inbox`, not out of this) */
  readonly received: Msg[] = [];
  private waiters: Array<() => void> = [];
  closed = false;
  closeCode?: number;
  private authChallenge?: string;

  static async open(url: string, opts: WebSocket.ClientOptions = {}): Promise<Client> {
    const c = new Client(url, opts);
    await new Promise<void>((resolve, reject) => {
      c.ws.once('open', () => resolve());
      c.ws.once('error', reject);
    });
    return c;
  }

  private constructor(url: string, opts: WebSocket.ClientOptions) {
    this.ws = new WebSocket(url, { perMessageDeflate: false, maxPayload: 64 << 20, ...opts });
    this.ws.on('message', (data) => {
      let m: Msg;
      try { m = JSON.parse(data.toString()); } catch { m = ['__unparseable__', data.toString()]; }
      this.inbox.push(m);
      if (m[0] !== 'EVENT') this.received.push(m);
      this.wake();
    });
    this.ws.on('close', (code) => { this.closed = true; this.closeCode = code; this.wake(); });
    this.ws.on('error', () => { this.closed = true; this.wake(); });
  }

  private wake() { for (const w of [...this.waiters]) w(); }

  send(msg: unknown): void {
    this.ws.send(typeof msg === 'string' ? msg : JSON.stringify(msg));
  }

  next(pred: (m: Msg) => boolean, timeout = 5000, what = 'message'): Promise<Msg> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const i = this.inbox.findIndex(pred);
        if (i >= 0) { const [m] = this.inbox.splice(i, 1); done(); resolve(m); return true; }
        if (this.closed) { done(); reject(new Error(`connection closed while waiting for ${what}`)); return true; }
        return false;
      };
      const timer = setTimeout(() => {
        done();
        const seen = this.inbox.slice(-5).map((m) => JSON.stringify(m).slice(0, 120)).join(' ');
        reject(new Error(`timed out waiting for ${what} (connection ${this.closed ? 'closed' : 'open'}; last messages: ${seen || 'none'})`));
      }, timeout);
      const done = () => { clearTimeout(timer); this.waiters = this.waiters.filter((w) => w !== check); };
      if (!check()) this.waiters.push(check);
    });
  }

  async arrives(pred: (m: Msg) => boolean, ms: number): Promise<boolean> {
    try { await this.next(pred, ms); return true; } catch { return false; }
  }

  async publish(ev: NostrEvent): Promise<{ ok: boolean; message: string }> {
    this.send(['EVENT', ev]);
    const m = await this.next((m) => m[0] === 'OK' && m[1] === ev.id, 10000, `OK for ${ev.id}`);
    return { ok: m[2] as boolean, message: (m[3] as string) ?? '' };
  }

  async query(filters: object | object[], subId = 'q' + Math.random().toString(36).slice(2), close = true): Promise<{ events: NostrEvent[]; closed?: string }> {
    this.send(['REQ', subId, ...(Array.isArray(filters) ? filters : [filters])]);
    const events: NostrEvent[] = [];
    for (;;) {
      const m = await this.next((m) => (m[0] === 'EVENT' || m[0] === 'EOSE' || m[0] === 'CLOSED') && m[1] === subId, 10000, `EOSE for ${subId}`);
      if (m[0] === 'EVENT') events.push(m[2] as NostrEvent);
      else if (m[0] === 'EOSE') break;
      else return { events, closed: m[2] as string };
    }
    if (close) this.send(['CLOSE', subId]);
    return { events };
  }

  async count(filters: object | object[], subId = 'c' + Math.random().toString(36).slice(2)): Promise<Msg> {
    this.send(['COUNT', subId, ...(Array.isArray(filters) ? filters : [filters])]);
    return this.next((m) => (m[0] === 'COUNT' || m[0] === 'CLOSED') && m[1] === subId, 10000, `COUNT for ${subId}`);
  }

  /**
   * The NIP-42 challenge the relay sent on this connection. When none has come yet it is asked for
   * (`ask`, the default) the way a client that wants to authenticate up front does with a relay that
   * challenges on demand: by sending AUTH first (an event without a challenge, which grants nothing);
   * the relay answers with the challenge. With `ask: false` it only waits for one.
   */
  async challenge(timeout = 5000, ask = true): Promise<string> {
    // Remembered: next() consumes the message, and callers ask more than once (authenticate()).
    if (this.authChallenge !== undefined) return this.authChallenge;
    let m = this.inbox.find((m) => m[0] === 'AUTH');
    if (!m && ask) this.send(['AUTH', new Author().sign({ kind: 22242, tags: [['relay', 'ws://asking.for.a.challenge']] })]);
    m ??= await this.next((m) => m[0] === 'AUTH', timeout, 'AUTH challenge');
    this.authChallenge = m[1] as string;
    return this.authChallenge;
  }

  /** NIP-42: answers the challenge as `author`; `override` changes the AUTH event's tags/created_at (negative tests). */
  async authenticate(author: Author, relayUrl: string, override: { challenge?: string; relay?: string; created_at?: number; kind?: number } = {}): Promise<{ ok: boolean; message: string }> {
    const challenge = override.challenge ?? (await this.challenge());
    const ev = author.sign({ kind: override.kind ?? 22242, created_at: override.created_at ?? now(), tags: [['relay', override.relay ?? relayUrl], ['challenge', challenge]] });
    this.send(['AUTH', ev]);
    const m = await this.next((m) => m[0] === 'OK' && m[1] === ev.id, 10000, 'OK for AUTH');
    return { ok: m[2] as boolean, message: (m[3] as string) ?? '' };
  }

  close(): void {
    try { this.ws.close(); } catch { /* gone */ }
  }
}

export const ids = (evs: Array<{ id: string }>) => evs.map((e) => e.id);
