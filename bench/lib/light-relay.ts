// A minimal Nostr relay inside the benchmark process, for measuring what the *other* side costs
// (e.g. the home's live set of hundreds of remotes, where hundreds of relay processes would not fit
// a small machine): REQ -> stored matches (kinds, authors, ids, since, until, limit) then EOSE and
// the subscription stays live; EVENT -> stored, OK, sent to matching live subscriptions. No
// signature checks: it is a load generator's stand-in, not a relay under test. For the monitor's
// bench it also answers what the monitor probes: a NIP-11 document (when given), `search` (a
// substring of the content), COUNT, and NEG-OPEN (one NEG-MSG from the project's negentropy code).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { Negentropy, NegentropyStorage } from '../../src/nostr/negentropy.js';
import { bytesToHex, hexToBytes } from '../../src/nostr/negentropy-storage.js';

interface Ev { id: string; pubkey: string; kind: number; created_at: number; content?: string }
type F = { ids?: string[]; authors?: string[]; kinds?: number[]; since?: number; until?: number; limit?: number; search?: string };

const matches = (f: F, e: Ev) => (!f.kinds || f.kinds.includes(e.kind)) && (!f.authors || f.authors.includes(e.pubkey)) && (!f.ids || f.ids.includes(e.id))
  && (f.since === undefined || e.created_at >= f.since) && (f.until === undefined || e.created_at <= f.until)
  && (f.search === undefined || (e.content ?? '').toLowerCase().includes(f.search.toLowerCase()));

export class LightRelay {
  private events: Ev[] = [];
  private live: Array<{ ws: WebSocket; id: string; filters: F[] }> = [];
  private server!: http.Server;
  private wss!: WebSocketServer;
  port = 0;
  get url(): string { return `ws://127.0.0.1:${this.port}`; }

  /** `nip11`: served on Accept: application/nostr+json (else 404) */
  constructor(private readonly nip11?: unknown) {}

  /** Holds an event without a client (the bench's preload). */
  add(ev: Ev): void { this.events.push(ev); }

  async start(): Promise<this> {
    this.server = http.createServer((q, res) => {
      if (this.nip11 === undefined || q.headers.accept !== 'application/nostr+json') { res.writeHead(404); res.end(); return; }
      res.writeHead(200, { 'Content-Type': 'application/nostr+json' });
      res.end(JSON.stringify(this.nip11));
    });
    this.wss = new WebSocketServer({ server: this.server, perMessageDeflate: false });
    this.wss.on('connection', (ws) => {
      ws.on('message', (d) => this.onMessage(ws, d.toString()));
      ws.on('close', () => { this.live = this.live.filter((s) => s.ws !== ws); });
      ws.on('error', () => {});
    });
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  private onMessage(ws: WebSocket, text: string): void {
    let m: unknown[];
    try { m = JSON.parse(text) as unknown[]; } catch { return; }
    if (m[0] === 'EVENT') {
      const ev = m[1] as Ev;
      this.events.push(ev);
      ws.send(JSON.stringify(['OK', ev.id, true, '']));
      for (const s of this.live) if (s.filters.some((f) => matches(f, ev))) s.ws.send(JSON.stringify(['EVENT', s.id, ev]));
    } else if (m[0] === 'REQ') {
      const id = m[1] as string;
      const filters = m.slice(2) as F[];
      for (const f of filters) {
        const hits = this.events.filter((e) => matches(f, e)).sort((a, b) => b.created_at - a.created_at).slice(0, f.limit ?? 500);
        for (const e of hits) ws.send(JSON.stringify(['EVENT', id, e]));
      }
      ws.send(JSON.stringify(['EOSE', id]));
      this.live.push({ ws, id, filters });
    } else if (m[0] === 'COUNT') {
      const f = (m[2] ?? {}) as F;
      ws.send(JSON.stringify(['COUNT', m[1], { count: this.events.filter((e) => matches(f, e)).length }]));
    } else if (m[0] === 'NEG-OPEN') {
      const f = (m[2] ?? {}) as F;
      const storage = NegentropyStorage.fromItems(this.events.filter((e) => matches(f, e)).map((e) => ({ timestamp: e.created_at, id: e.id })));
      try { ws.send(JSON.stringify(['NEG-MSG', m[1], bytesToHex(new Negentropy(storage, 0).reconcile(hexToBytes(String(m[3]))))])); } catch (e) { ws.send(JSON.stringify(['NEG-ERR', m[1], `error: ${(e as Error).message}`])); }
    } else if (m[0] === 'CLOSE') {
      this.live = this.live.filter((s) => !(s.ws === ws && s.id === m[1]));
    }
  }

  async close(): Promise<void> {
    for (const c of this.wss.clients) c.terminate();
    await new Promise<void>((r) => this.wss.close(() => r()));
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}
