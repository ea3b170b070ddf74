// Asks remote relays for authors' lists on behalf of the lookup on a miss, politely, in batches and
// within budgets: the asks for one relay wait in its queue, and one connection per relay takes them
// `batch` authors per REQ (so 1,500 authors sent to an indexer are 15 REQs on one connection, not
// 1,500 connections), `pause` between two REQs (spider.pause). Asks that arrive while a REQ runs go
// into the next one, so concurrent lookups share REQs.
//
// What an ask will cost is charged before it happens, to the client address whose lookup makes it
// (budgets.ts): a connection attempt when it opens a relay's queue, a REQ when it starts a batch,
// and the bytes its (author, kind) pairs may bring. A host that failed (down-hosts.ts) is not tried
// again for a while, by anyone. Connections are shared fairly (lib/fair-slots.ts): at most
// `maxConnections` in all, `connectionsPerAddress` opened for one client address and
// `connectionsPerHost` to one host, so a few slow remotes named by one client cannot hold them all.
// An idle connection lingers a while (socket paused, no slot held) so that the next asks for its
// relay — a client browsing profiles whose relay lists name one popular relay — reuse it instead of
// costing a new attempt.
//
// Every REQ is one bounded page (spider/fetch/page.ts over remote/read.ts): its limit is the
// (author, kind) pairs it asks, its bytes what its asks were charged (at least one event of the
// largest size), its deadline `deadline`; events are checked window by window (admit.ts: what the
// home holds is not checked again, the rest is signature-checked once and handed to the one ingest
// path) and none is kept after. An ask is answered only after the ingest path decided on its events,
// so a REQ waiting for the lookup has them on its subscription by then.
import type { Logger } from 'pino';
import type { EventStore } from '../../store/types.js';
import type { EventSink } from '../../ingest/sink.js';
import type { EventVerifier } from '../../nostr/verify.js';
import type { IngestStatus } from '../../ingest/types.js';
import { RelayClient } from '../../remote/client.js';
import { resolveTarget, type Target } from '../../remote/url.js';
import { runPage } from '../fetch/page.js';
import { Admitter, storeKnown } from '../fetch/admit.js';
import { MAX_PENDING_EVENTS } from '../fetch/crawl.js';
import { hostOf } from '../hosts.js';
import { FairSlots } from '../../lib/fair-slots.js';
import { zeroCounts, type FetchCounts } from '../../directory/types.js';
import { sleep } from '../../lib/sleep.js';
import { LookupBudgets, type CostBudgets, type CostRefusal } from './budgets.js';
import { DownHosts } from './down-hosts.js';

export interface AskerOptions {
  /** authors per REQ */
  batch: number;
  maxConnections: number;
  /** connections opened for one client address's lookups at once */
  connectionsPerAddress: number;
  /** connections to one host at once */
  connectionsPerHost: number;
  /** ms between two REQs to one relay */
  pause: number;
  /** ms: connect and idle timeout, and the longest wait for a connection slot */
  timeout: number;
  /** ms: the most one REQ may take */
  deadline: number;
  /** bytes charged per (author, kind) asked: what its answer may bring */
  bytesPerList: number;
  /** bytes one REQ may bring at most, whatever was charged */
  maxPageBytes: number;
  maxEventBytes: number;
  /** ms a host that failed is left alone */
  failureMemory: number;
  /** ms an idle connection stays open for more asks (no slot held, socket paused) */
  linger: number;
  allowPrivate: boolean;
  budgets: CostBudgets;
}

export interface AskerDeps {
  store: Pick<EventStore, 'precheck'>;
  sink: EventSink;
  verifier: () => Promise<EventVerifier>;
  log: Logger;
  resolve?: (url: string, allowPrivate: boolean) => Promise<Target>;
}

/** What one relay answered for one author. */
export interface AskAnswer {
  /** kinds of this author the home now holds current versions of, from this relay's answer */
  found: Set<number>;
  /** the REQ was sent and answered (EOSE, or events) */
  asked: boolean;
  /** a connection was attempted or a REQ sent for it: the cost was paid, whatever came of it */
  tried: boolean;
}

interface Ask {
  pubkey: string;
  kinds: number[];
  /** bytes charged */
  bytes: number;
  resolve(a: AskAnswer): void;
}

/** Why a REQ's page ended early: the status page counts each. */
export type PageCut = 'hostile' | 'flood' | 'bytes' | 'deadline' | 'silent';

/** Refusals besides the cost budgets: the host is remembered as failed, no connection slot came in time. */
export type AskRefusal = CostRefusal | 'host_down' | 'slots';

const notAsked = (tried: boolean): AskAnswer => ({ found: new Set(), asked: false, tried });

export interface AskerFigures {
  reqs: number;
  /** connection attempts (each charged) and connections opened */
  attempts: number;
  connections: number;
  open: number;
  failures: number;
  /** asks not sent, by the budget that refused them */
  refused: Record<AskRefusal, number>;
  /** REQs whose page ended early, by why */
  cut: Record<PageCut, number>;
  counts: FetchCounts;
}

export class RemoteAsker {
  private readonly queues = new Map<string, Ask[]>();
  private readonly slots: FairSlots;
  private readonly budgets: LookupBudgets;
  readonly down: DownHosts;
  private readonly inFlight = new Map<string, Promise<IngestStatus>>();
  private readonly stopCtl = new AbortController();
  private readonly workers = new Set<Promise<void>>();
  /** idle connections waiting for asks, by URL, oldest first: each one's wake-up */
  private readonly lingering = new Map<string, (go: boolean) => void>();
  readonly figures: AskerFigures = {
    reqs: 0, attempts: 0, connections: 0, open: 0, failures: 0,
    refused: { connects_host: 0, connects_address: 0, reqs_address: 0, bytes_address: 0, host_connects: 0, host_reqs: 0, host_down: 0, slots: 0 },
    cut: { hostile: 0, flood: 0, bytes: 0, deadline: 0, silent: 0 },
    counts: zeroCounts(),
  };

  constructor(private readonly d: AskerDeps, private readonly o: AskerOptions) {
    this.slots = new FairSlots(o.maxConnections, o.connectionsPerAddress, o.connectionsPerHost);
    this.budgets = new LookupBudgets(o.budgets);
    this.down = new DownHosts(o.failureMemory);
  }

  /**
   * Asks `url` for the newest `kinds` of `pubkey` on behalf of the client at `address`, charged to
   * it first; resolves once the answer's events were decided.
   */
  ask(url: string, pubkey: string, kinds: number[], address: string): Promise<AskAnswer> {
    if (this.stopCtl.signal.aborted) return Promise.resolve(notAsked(false));
    const host = hostOf(url);
    if (this.down.isDown(host)) { this.figures.refused.host_down++; return Promise.resolve(notAsked(false)); }
    const q = this.queues.get(url);
    // a new queue is a new connection; an ask at a batch boundary of its queue is a new REQ
    const bytes = kinds.length * this.o.bytesPerList;
    const refused = this.budgets.charge(address, host, { connect: !q, req: !q || q.length % this.o.batch === 0, bytes });
    if (refused) { this.figures.refused[refused]++; return Promise.resolve(notAsked(false)); }
    return new Promise((resolve) => {
      const ask: Ask = { pubkey, kinds, bytes, resolve };
      if (q) {
        q.push(ask);
        this.lingering.get(url)?.(true); // an idle connection to it takes the ask
        return;
      }
      this.queues.set(url, [ask]);
      const w = this.work(url, host, address).finally(() => this.workers.delete(w));
      this.workers.add(w);
    });
  }

  /**
   * One relay's queue, on one connection opened for `owner`, until it is empty and stays so for
   * `linger`: asks that come meanwhile (the same client's next profile, another client's) take the
   * open connection instead of a new attempt. A lingering connection gives its slot back and is not
   * read from (its socket paused); it takes a slot again when asks come.
   */
  private async work(url: string, host: string, owner: string): Promise<void> {
    const { o, d } = this;
    const signal = this.stopCtl.signal;
    let current: Ask[] = [];
    let client: RelayClient | undefined;
    /** asks still queued at the end were tried: the connection failed or the remote was cut off */
    let leftTried = false;
    let release = await this.slots.take(owner, host, signal, o.timeout);
    try {
      if (!release) {
        if (!signal.aborted) this.figures.refused.slots += this.queues.get(url)?.length ?? 0;
        return;
      }
      this.figures.attempts++;
      leftTried = true;
      const target = await (d.resolve ?? resolveTarget)(url, o.allowPrivate);
      client = await RelayClient.connect(target, { connectTimeout: o.timeout, maxFrame: o.maxEventBytes + 1024, maxPayload: Math.max(1 << 20, o.maxEventBytes * 4) }, signal);
      leftTried = false;
      this.figures.connections++;
      this.figures.open++;
      const found = new Map<string, Set<number>>();
      const admitter = new Admitter({
        verifier: await d.verifier(), sink: d.sink, known: storeKnown(d.store), inFlight: this.inFlight, counts: this.figures.counts, maxPending: MAX_PENDING_EVENTS,
        // the home holds this version now (stored by this answer, or held already): the author's kind is found
        onCurrent: (ev) => { let s = found.get(ev.pubkey); if (!s) found.set(ev.pubkey, (s = new Set())); s.add(ev.kind); },
      });
      let lastReq = 0;
      for (;;) {
        const q = this.queues.get(url);
        if (!q || signal.aborted || !client.isOpen) break;
        if (q.length === 0) {
          // nothing to ask: linger without a slot, then take one again for what came
          release();
          release = null;
          if (!(await this.linger(url, client))) break;
          release = await this.slots.take(owner, host, signal, o.timeout);
          if (!release) {
            if (!signal.aborted) this.figures.refused.slots += this.queues.get(url)?.length ?? 0;
            break;
          }
          continue;
        }
        await sleep(Math.max(0, lastReq + o.pause - Date.now()), signal);
        current = q.splice(0, o.batch);
        const authors = [...new Set(current.map((a) => a.pubkey))];
        const kinds = [...new Set(current.flatMap((a) => a.kinds))];
        const charged = current.reduce((n, a) => n + a.bytes, 0);
        this.figures.reqs++;
        lastReq = Date.now();
        // replaceable kinds: one event per (author, kind) asked, no more; the bytes that were charged
        const page = await runPage(client, {
          filter: { kinds, authors, limit: authors.length * kinds.length },
          exclusive: false, idleTimeout: o.timeout, deadline: o.deadline, maxEventBytes: o.maxEventBytes, signal,
          maxBytes: Math.min(Math.max(charged, o.maxEventBytes + 1024), Math.max(o.maxPageBytes, o.maxEventBytes + 1024)),
          admit: (evs) => admitter.admit(evs), keep: false,
        });
        this.figures.counts.invalid += Object.values(page.invalid).reduce((a, b) => a + b, 0);
        await admitter.drain();
        const answered = page.eose || page.valid > 0 || page.cut !== undefined;
        // a connection that was gone already (closed while it lingered) asked nothing: not remembered
        const tried = answered || !page.closed?.startsWith('connection:');
        for (const a of current) {
          const mine = found.get(a.pubkey);
          a.resolve({ found: new Set(a.kinds.filter((k) => mine?.has(k))), asked: answered, tried });
        }
        current = [];
        const cut: PageCut | null = page.hostile ? 'hostile' : page.flooded ? 'flood' : page.cut ?? (page.timedOut && page.valid === 0 ? 'silent' : null);
        if (cut) {
          this.figures.cut[cut]++;
          // a remote that lies, floods, drips past the deadline or says nothing is left alone for a
          // while; one that only had more than was charged is not at fault
          if (cut !== 'bytes') {
            this.down.mark(host);
            client.terminate(`cut off: ${cut}`);
            leftTried = true;
            d.log.debug({ url, cut }, 'lookup: remote cut off');
            break;
          }
        }
        if (page.closed !== undefined) break;
      }
    } catch (e) {
      this.figures.failures++;
      this.down.mark(host);
      d.log.debug({ url, err: (e as Error).message }, 'lookup: relay failed');
    } finally {
      if (client) { this.figures.counts.bytes += client.bytesIn; this.figures.open--; client.close(); }
      release?.();
      // what is left was not asked here: a relay that failed or was cut off (tried: remembered), or
      // one that closed, had no slot or was stopped (not tried: a later REQ asks again)
      for (const a of current) a.resolve(notAsked(true));
      const left = this.queues.get(url) ?? [];
      this.queues.delete(url);
      for (const a of left) a.resolve(notAsked(leftTried));
    }
  }

  /**
   * Keeps an idle connection open up to `linger` (socket paused, no slot held) for asks that may
   * come; true when some came (the queue has work), false when it should close. At most
   * `maxConnections` linger at once: the oldest closes first.
   */
  private linger(url: string, client: RelayClient): Promise<boolean> {
    const signal = this.stopCtl.signal;
    if (this.o.linger <= 0 || signal.aborted) return Promise.resolve(false);
    const unhold = client.hold();
    return new Promise((resolve) => {
      const done = (go: boolean) => {
        if (this.lingering.get(url) !== done) return;
        this.lingering.delete(url);
        clearTimeout(timer);
        signal.removeEventListener('abort', stop);
        unhold();
        resolve(go && client.isOpen && !signal.aborted);
      };
      const stop = () => done(false);
      const timer = setTimeout(stop, this.o.linger);
      signal.addEventListener('abort', stop, { once: true });
      this.lingering.set(url, done);
      if (this.lingering.size > this.o.maxConnections) this.lingering.values().next().value?.(false);
    });
  }

  /** Asks waiting or running, all relays together. */
  get waiting(): number {
    let n = 0;
    for (const q of this.queues.values()) n += q.length;
    return n;
  }

  async stop(): Promise<void> {
    this.stopCtl.abort();
    await Promise.all([...this.workers]);
  }
}
