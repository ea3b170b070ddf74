// The trust service: recomputes the ranks in the background when follow or mute lists change
// (debounced, at most once per trust.interval), publishes NIP-85 assertions after each pass when
// asked, and reports what it did for the status page and /metrics. app/ wires it to the pipeline.
import { setImmediate as tick } from 'node:timers/promises';
import type { Config } from '../config.js';
import type { NostrEvent } from '../nostr/event.js';
import type { IngestStatus } from '../ingest/types.js';
import type { EventStore } from '../store/types.js';
import type { RankMeta } from '../store/ranks.js';
import { AssertionPublisher, serviceKey, serviceProfile, type PublishReport } from './nip85.js';
import { signThread } from './sign-thread.js';
import { FOLLOWS, MUTES, rankPass } from './pass.js';
import { trustRoots } from './roots.js';
import { topOfPass, topPeople, type PeopleView } from './people.js';
import type { PassResult } from './pass.js';
import type { KeptGraph } from './kept-graph.js';
import { MetricsText } from '../lib/prometheus-text.js';
import { ReaderRanks, type ReaderStats } from './readers.js';
import type { ReaderTrust } from '../nostr/search-query.js';

type Log = { info(o: object, msg?: string): void; warn(o: object, msg?: string): void; error(o: object, msg?: string): void };

export interface TrustOptions {
  config: Pick<Config, 'trust' | 'spider' | 'dataDir' | 'info' | 'publicUrl'>;
  store: EventStore;
  /** our ingest path, for NIP-85 assertions */
  put: (ev: NostrEvent) => Promise<IngestStatus>;
  logger: Log;
}

export interface TrustStatus {
  enabled: boolean;
  running: boolean;
  /** the pass whose ranks are current (from the store: survives restarts) */
  last?: RankMeta;
  lastError?: string;
  passes: number;
  nip85?: { pubkey: string; last?: PublishReport };
  /** personalized ranks for search (readers.ts) */
  readers: ReaderStats;
}

export interface Trust {
  start(): void;
  stop(): Promise<void>;
  /** every stored event (the ingest path's onStored): follow and mute lists make the ranks stale */
  seen(ev: NostrEvent): void;
  /** runs one pass now (waits for a running one first) */
  runOnce(): Promise<RankMeta>;
  status(): TrustStatus;
  metricsText(): string;
  /** the NIP-85 service pubkey, when trust.nip85 is on */
  readonly servicePubkey?: string;
  /** the top pubkeys with names, as of the last pass (for the people page) */
  people(): PeopleView;
  /** trust as seen from one reader, for search's observer: (readers.ts); null: use the global rank */
  readerTrust(pubkey: string): Promise<ReaderTrust | null>;
}

/** People listed on the page. */
const PEOPLE = 100;
/**
 * The first pass after a start waits this long, not trust.debounce: nothing is arriving yet to
 * gather into one pass, and NIP-85 clients wait for the pass (the most followed's assertions within
 * a minute of a start on a large store).
 */
const START_DELAY = 1000;

export function createTrust(o: TrustOptions): Trust {
  const t = o.config.trust;
  const roots = trustRoots(o.config);
  const mode = roots.length > 0 ? 'rooted' : 'global';
  const signer = t.nip85 ? signThread() : undefined;
  const publisher = t.nip85 ? new AssertionPublisher(o.store.env, serviceKey(t.nip85Key, o.config.dataDir, mode), o.put, signer!.sign) : undefined;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<RankMeta> | null = null;
  let dirty = false;
  let stopped = false;
  /** aborted by stop(): a publication in progress ends at its next batch */
  const stopping = new AbortController();
  let lastEnd = 0;
  let passes = 0;
  let lastError: string | undefined;
  let lastPublish: PublishReport | undefined;
  let people: PeopleView = { ranks: null, people: [] };
  const refreshPeople = (r?: PassResult) => (r ? topOfPass(o.store, r, PEOPLE) : topPeople(o.store, PEOPLE)).then((v) => { people = v; }, (e: Error) => o.logger.warn({ err: e }, 'trust: people view failed'));

  /** the graph the last pass kept (trust.keepGraph): the next one reads only the lists changed since */
  let kept: KeptGraph | undefined;
  const readers = new ReaderRanks(o.store.ranks, t);
  const pass = async (): Promise<RankMeta> => {
    dirty = false;
    const r = await rankPass(o.store.ranks, { ...t, roots }, kept);
    kept = r.kept;
    readers.passed(r.meta.generation, kept, r.meta.nodes);
    passes++;
    o.logger.info({ ...r.meta }, 'trust: ranks computed');
    await refreshPeople(r);
    if (publisher && !stopped) {
      lastPublish = await publisher.publish(r, t.nip85MinRank, t.nip85Max, () => tick(), stopping.signal);
      o.logger.info({ ...lastPublish }, 'trust: NIP-85 assertions published');
      // a refused assertion is not recorded, so a pass publishes it again; without this the next
      // pass waited for a follow or mute list to arrive, and a quiet relay never retried it
      if (lastPublish.failed > 0) dirty = true;
    }
    return r.meta;
  };

  /** The service key's kind 0 (NIP-85 discoverability), when what it says changed. */
  const publishProfile = async (): Promise<void> => {
    const stored = await o.store.query([{ kinds: [0], authors: [publisher!.pubkey], limit: 1 }], { defaultLimit: 1, maxLimit: 1 });
    let current: string | undefined;
    try { current = stored[0] ? (JSON.parse(stored[0]) as { content: string }).content : undefined; } catch { current = undefined; }
    if (await publisher!.publishProfile(serviceProfile(mode, o.config, Math.floor(Date.now() / 1000)), current)) o.logger.info({ pubkey: publisher!.pubkey }, 'trust: NIP-85 service profile published');
  };

  const run = (): Promise<RankMeta> => {
    const p = (running ?? Promise.resolve()).catch(() => undefined).then(pass);
    running = p;
    p.then(() => { lastError = undefined; }, (e: Error) => {
      lastError = e.message;
      o.logger.error({ err: e }, 'trust: ranking pass failed');
    }).finally(() => {
      if (running === p) running = null;
      lastEnd = Date.now();
      if (dirty) schedule();
    });
    return p;
  };

  const schedule = (first = false) => {
    if (stopped || timer || running) return;
    const wait = first ? START_DELAY : Math.max(t.debounce, lastEnd + t.interval - Date.now());
    timer = setTimeout(() => {
      timer = undefined;
      run().catch(() => {});
    }, wait);
    timer.unref?.();
  };

  return {
    servicePubkey: publisher?.pubkey,
    people: () => people,
    readerTrust: (pubkey) => (t.enabled ? readers.get(pubkey) : Promise.resolve(null)),
    start() {
      if (!t.enabled) return;
      void refreshPeople(); // the ranks of the last run until the first pass (one read of the table)
      if (publisher) void publishProfile().catch((e: Error) => o.logger.warn({ err: e }, 'trust: NIP-85 service profile not published'));
      dirty = true;
      schedule(true);
    },
    async stop() {
      stopped = true;
      stopping.abort();
      if (timer) clearTimeout(timer);
      timer = undefined;
      await running?.catch(() => undefined);
      await signer?.close();
    },
    seen(ev) {
      if (!t.enabled || (ev.kind !== FOLLOWS && ev.kind !== MUTES)) return;
      dirty = true;
      schedule();
    },
    runOnce: run,
    status() {
      return { enabled: t.enabled, running: running !== null, last: o.store.ranks.meta(), lastError, passes, readers: { ...readers.stats }, ...(publisher ? { nip85: { pubkey: publisher.pubkey, last: lastPublish } } : {}) };
    },
    metricsText() {
      const m = o.store.ranks.meta();
      return new MetricsText()
        .metric('orbweaver_trust_rank_age_seconds', 'gauge', 'Age of the current trust ranks.', m ? Number(Math.max(0, (Date.now() - m.computedAt) / 1000).toFixed(1)) : NaN)
        .metric('orbweaver_trust_rank_duration_seconds', 'gauge', 'Duration of the last trust ranking pass.', m ? Number((m.durationMs / 1000).toFixed(3)) : NaN)
        .metric('orbweaver_trust_ranked_pubkeys', 'gauge', 'Pubkeys scored by the last pass.', m?.nodes ?? 0)
        .metric('orbweaver_trust_follow_edges', 'gauge', 'Follow edges in the last pass.', m?.edges ?? 0)
        .metric('orbweaver_trust_passes_total', 'counter', 'Ranking passes since start.', passes)
        .toString();
    },
  };
}
