// Asks remote relays for authors' lists on behalf of the lookup on a miss, politely and in batches:
// the asks for one relay wait in its queue, and one connection per relay takes them `batch` authors
// per REQ (so 1,500 authors sent to an indexer are 15 REQs on one connection, not 1,500
// connections), `pause` between two REQs (spider.pause), at most `reqsPerMinute` REQs per server
// (host and port) and `maxConnections` connections open at once, all relays together. Asks that
// arrive while a REQ runs go into the next one, so concurrent lookups share REQs.
//
// Every event goes through the spider's page checks (page.ts: shape, size, the filter we sent) and
// admission (admit.ts: what the home holds is not checked again, the rest is signature-checked once
// and handed to the one ingest path, which applies the write policies, stores and fans out). An ask
// is answered only after the ingest path decided on its events, so a REQ waiting for the lookup
// has them on its subscription by then.
import type { Logger } from 'pino';
import type { EventStore } from '../../store/types.js';
import type { EventSink } from '../../ingest/sink.js';
import type { EventVerifier } from '../../nostr/verify.js';
import type { IngestStatus } from '../../ingest/types.js';
import { RelayClient } from '../../remote/client.js';
import { resolveTarget, type Target } from '../../remote/url.js';
import { runPage } from '../fetch/page.js';
import { Admitter, storeKnown } from '../fetch/admit.js';
import { Slots } from '../fetch/slots.js';
import { MAX_PENDING_EVENTS } from '../fetch/crawl.js';
import { hostOf } from '../spider.js';
import { KeyedBuckets } from '../../lib/token-bucket.js';
import { zeroCounts, type FetchCounts } from '../../directory/types.js';
import { sleep } from '../../lib/sleep.js';

export interface AskerOptions {
  /** authors per REQ */
  batch: number;
  maxConnections: number;
  /** REQs per server per minute (burst: as many) */
  reqsPerMinute: number;
  /** ms between two REQs to one relay */
  pause: number;
  /** ms: connect and idle timeout */
  timeout: number;
  maxEventBytes: number;
  allowPrivate: boolean;
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
  /** the REQ was sent and answered (false: refused by the relay's budget, unreachable, stopped) */
  asked: boolean;
}

interface Ask {
  pubkey: string;
  kinds: number[];
  resolve(a: AskAnswer): void;
}

/** A relay that failed is not asked again for this long (lookups do not touch the directory's backoff). */
const DOWN_MS = 60_000;
const NOT_ASKED: AskAnswer = { found: new Set(), asked: false };

export interface AskerFigures {
  reqs: number;
  connections: number;
  open: number;
  failures: number;
  /** asks not sent: their relay's REQ budget was spent */
  overBudget: number;
  counts: FetchCounts;
}

export class RemoteAsker {
  private readonly queues = new Map<string, Ask[]>();
  private readonly slots: Slots;
  private readonly budgets: KeyedBuckets<string>;
  private readonly down = new Map<string, number>();
  private readonly inFlight = new Map<string, Promise<IngestStatus>>();
  private readonly stopCtl = new AbortController();
  private readonly workers = new Set<Promise<void>>();
  readonly figures: AskerFigures = { reqs: 0, connections: 0, open: 0, failures: 0, overBudget: 0, counts: zeroCounts() };

  constructor(private readonly d: AskerDeps, private readonly o: AskerOptions) {
    this.slots = new Slots(o.maxConnections);
    this.budgets = new KeyedBuckets(o.reqsPerMinute / 60, o.reqsPerMinute);
  }

  /** Asks `url` for the newest `kinds` of `pubkey`; resolves once the answer's events were decided. */
  ask(url: string, pubkey: string, kinds: number[]): Promise<AskAnswer> {
    if (this.stopCtl.signal.aborted || (this.down.get(url) ?? 0) > Date.now()) return Promise.resolve(NOT_ASKED);
    return new Promise((resolve) => {
      const q = this.queues.get(url);
      if (q) { q.push({ pubkey, kinds, resolve }); return; }
      this.queues.set(url, [{ pubkey, kinds, resolve }]);
      const w = this.work(url).finally(() => this.workers.delete(w));
      this.workers.add(w);
    });
  }

  /** One relay's queue, on one connection, until it is empty. */
  private async work(url: string): Promise<void> {
    const { o, d } = this;
    const signal = this.stopCtl.signal;
    let current: Ask[] = [];
    let client: RelayClient | undefined;
    const release = await this.slots.take(signal);
    try {
      if (!release) return;
      const target = await (d.resolve ?? resolveTarget)(url, o.allowPrivate);
      client = await RelayClient.connect(target, { connectTimeout: o.timeout, maxFrame: o.maxEventBytes + 1024, maxPayload: Math.max(1 << 20, o.maxEventBytes * 4) }, signal);
      this.figures.connections++;
      this.figures.open++;
      const found = new Map<string, Set<number>>();
      const admitter = new Admitter({
        verifier: await d.verifier(), sink: d.sink, known: storeKnown(d.store), inFlight: this.inFlight, counts: this.figures.counts, maxPending: MAX_PENDING_EVENTS,
        // the home holds this version now (stored by this answer, or held already): the author's kind is found
        onCurrent: (ev) => { let s = found.get(ev.pubkey); if (!s) found.set(ev.pubkey, (s = new Set())); s.add(ev.kind); },
      });
      for (let first = true; ; first = false) {
        const q = this.queues.get(url);
        if (!q || q.length === 0 || signal.aborted) break;
        if (!first) await sleep(o.pause, signal);
        if (!this.budgets.take(hostOf(url), Date.now())) {
          this.figures.overBudget += q.length;
          break;
        }
        current = q.splice(0, o.batch);
        const authors = [...new Set(current.map((a) => a.pubkey))];
        const kinds = [...new Set(current.flatMap((a) => a.kinds))];
        this.figures.reqs++;
        // replaceable kinds: one event per author and kind; room for relays that keep old versions too
        const page = await runPage(client, {
          filter: { kinds, authors, limit: authors.length * kinds.length * 2 },
          exclusive: false, idleTimeout: o.timeout, maxEventBytes: o.maxEventBytes, signal,
        });
        this.figures.counts.invalid += Object.values(page.invalid).reduce((a, b) => a + b, 0);
        await admitter.admit(page.events);
        await admitter.drain();
        const answered = page.eose || page.events.length > 0;
        for (const a of current) {
          const mine = found.get(a.pubkey);
          a.resolve({ found: new Set(a.kinds.filter((k) => mine?.has(k))), asked: answered });
        }
        current = [];
        if (page.closed !== undefined || page.flooded) break;
      }
    } catch (e) {
      this.figures.failures++;
      this.down.set(url, Date.now() + DOWN_MS);
      d.log.debug({ url, err: (e as Error).message }, 'lookup: relay failed');
    } finally {
      if (client) { this.figures.counts.bytes += client.bytesIn; this.figures.open--; client.close(); }
      release?.();
      // what is left was not asked here: a relay that failed, closed, flooded or ran out of budget
      for (const a of current) a.resolve(NOT_ASKED);
      const left = this.queues.get(url) ?? [];
      this.queues.delete(url);
      for (const a of left) a.resolve(NOT_ASKED);
      if (this.down.size > 10_000) for (const [u, t] of this.down) if (t <= Date.now()) this.down.delete(u);
    }
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
