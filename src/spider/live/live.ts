// The live set: which relays are followed live (select.ts), one LiveRemote each, chosen again every
// live.refresh and after each spider run (a run changes what the directory knows), within
// live.maxHop when the operator bounds it (hop.ts). Relays that leave the set are closed; relays
// that stay keep their connection and counters. Memory is bounded by live.maxRelays remotes of a
// few numbers each; connections by live.maxRelays plus spider.concurrency catch-ups.
import type { Logger } from 'pino';
import type { Config } from '../../config/schema.js';
import type { EventStore } from '../../store/types.js';
import type { EventSink } from '../../ingest/sink.js';
import type { RelayDirectory } from '../../directory/records.js';
import { loadVerifier, type EventVerifier } from '../../nostr/verify.js';
import type { Target } from '../../remote/url.js';
import { excludedRelays } from '../excluded.js';
import { crawlOptions, pageBytes } from '../fetch/options.js';
import { directoryKinds } from '../kinds.js';
import { catchUpper } from './catch-up.js';
import { chooseLive, writeRelayScores, type Chosen, type PubkeyWeight } from './select.js';
import { beyondMaxHop, crawlHop, withinMaxHop } from './hop.js';
import { LiveRemote, type LiveLimits, type RemoteStatus } from './remote.js';
import { OutboxRefresh, type OutboxRound } from './outbox.js';

export interface LiveDeps {
  config: Config['spider'];
  store: EventStore;
  /** the one ingest path */
  sink: EventSink;
  directory: RelayDirectory;
  log: Logger;
  /** our own relay's URLs, never followed */
  selfUrls?: string[];
  /** weight of a pubkey in the choice of write relays (a trust rank); default 1 each */
  weight?: PubkeyWeight;
  /** spider runs finished so far: a change triggers a new choice */
  runs?: () => number;
  verifier?: EventVerifier;
  resolve?: (url: string, allowPrivate: boolean) => Promise<Target>;
}

/** A live relay as the pages show it: its remote's figures and the hop a crawl found it at (hop.ts). */
export interface LiveRelayStatus extends RemoteStatus {
  /** null: no crawl found it (beyond spider.hops, or named only by lists that came another way) */
  hop: number | null;
}

export interface LiveStatus {
  enabled: boolean;
  maxRelays: number;
  /** spider.live.maxHop: relays of a known hop up to this are followed; -1: any relay */
  maxHop: number;
  /** relays in the set, by state */
  live: number;
  waiting: number;
  cutOff: number;
  /** events per minute, all remotes */
  perMinute: number;
  events: number;
  stored: number;
  lastChoice: number | null;
  /** outbox refresh: rounds done and the last one's figures */
  outbox: { rounds: number; running: boolean; last: (OutboxRound & { finishedAt: number }) | null };
  remotes: LiveRelayStatus[];
}

export interface Live {
  start(): void;
  /** chooses the set again now (tests, after a run) */
  choose(): Promise<Chosen[]>;
  status(): LiveStatus;
  stop(): Promise<void>;
}

export function createLive(deps: LiveDeps): Live {
  const cfg = deps.config;
  const lc = cfg.live;
  const log = deps.log.child({ component: 'live' });
  const kinds = directoryKinds(cfg);
  const limits: LiveLimits = {
    eventsPerSecond: lc.eventsPerSecond, bytesPerSecond: lc.bytesPerSecond, maxPending: lc.maxPending, maxFuture: lc.maxFuture,
    reconnectBackoff: lc.reconnectBackoff, maxReconnectBackoff: lc.maxReconnectBackoff, hostileBackoff: lc.hostileBackoff,
    connectTimeout: cfg.connectTimeout, maxEventBytes: cfg.maxEventBytes, allowPrivate: cfg.allowPrivate,
  };
  let verifier: Promise<EventVerifier> | null = deps.verifier ? Promise.resolve(deps.verifier) : null;
  const catchUp = catchUpper({
    store: deps.store, sink: deps.sink, directory: deps.directory, kinds, concurrency: cfg.concurrency, log, resolve: deps.resolve,
    verifier: () => (verifier ??= loadVerifier('auto')),
    opts: { ...crawlOptions(cfg), relayBudget: lc.catchUpBudget },
  });
  const outbox = new OutboxRefresh({
    store: deps.store, sink: deps.sink, directory: deps.directory, log, resolve: deps.resolve,
    verifier: () => (verifier ??= loadVerifier('auto')), excluded: (u) => excluded(u),
  }, {
    kinds, stale: lc.outboxStale, maxPubkeys: lc.outboxPubkeys, batch: lc.outboxBatch, relaysPerPubkey: lc.outboxRelaysPerPubkey,
    maxTags: cfg.maxRelayTagsPerList, concurrency: cfg.concurrency, pause: cfg.pause, connectTimeout: cfg.connectTimeout,
    idleTimeout: cfg.idleTimeout, pageDeadline: cfg.pageDeadline, maxPageBytes: pageBytes(cfg), maxEventBytes: cfg.maxEventBytes, allowPrivate: cfg.allowPrivate,
  });
  const outboxState: LiveStatus['outbox'] = { rounds: 0, running: false, last: null };
  const stopCtl = new AbortController();
  let outboxRun: Promise<void> | null = null;
  const runOutbox = () => {
    if (outboxRun || lc.outboxInterval === 0 || lc.outboxPubkeys === 0 || stopped) return;
    outboxState.running = true;
    outboxRun = outbox.round(stopCtl.signal)
      .then((r) => { outboxState.rounds++; outboxState.last = { ...r, finishedAt: Date.now() }; })
      .catch((e: unknown) => { log.error({ err: e }, 'live: outbox refresh failed'); })
      .finally(() => { outboxState.running = false; outboxRun = null; });
  };
  const remotes = new Map<string, LiveRemote>();
  /** each live relay's hop as of the latest choice (a run may move it; the next choice follows) */
  const hops = new Map<string, number | null>();
  const totals = { events: 0, stored: 0 };
  let lastChoice: number | null = null;
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  let choosing: Promise<Chosen[]> | null = null;
  let seenRuns = deps.runs?.() ?? 0;

  const excluded = withinMaxHop(excludedRelays(cfg, deps.directory, deps.selfUrls), deps.directory, lc.maxHop);

  async function chooseNow(): Promise<Chosen[]> {
    // one relay, one connection: an alias's writers count for the relay it reaches, which is followed under its canonical URL
    const writeScores = new Map<string, number>();
    for (const [u, n] of await writeRelayScores(deps.store, { weight: deps.weight, maxTags: cfg.maxRelayTagsPerList })) {
      const to = deps.directory.relayOf(u);
      writeScores.set(to, (writeScores.get(to) ?? 0) + n);
    }
    const general = deps.directory.all().filter((r) => r.aliasOf === undefined).map((r) => ({ url: r.url, stored: r.storedTotal }));
    const chosen = chooseLive({ writeScores, general, max: lc.maxRelays, generalShare: lc.generalShare, excluded });
    if (stopped) return chosen;
    const keep = new Set(chosen.map((c) => c.url));
    await Promise.all([...remotes].filter(([u]) => !keep.has(u)).map(async ([u, r]) => { remotes.delete(u); hops.delete(u); await r.close(); }));
    for (const c of chosen) {
      const rec = deps.directory.get(c.url);
      hops.set(c.url, crawlHop(rec));
      if (remotes.has(c.url)) continue;
      // the last complete fetch of every kind: what came after it is caught up at the first connect
      const his = kinds.map((k) => rec?.cursors[String(k)]?.hi);
      const crawledUpTo = his.every((h) => h !== undefined) ? Math.min(...(his as number[])) : undefined;
      const r = new LiveRemote({
        url: c.url, why: c.why, kinds, limits, sink: deps.sink, catchUp, log, crawledUpTo, resolve: deps.resolve,
        onEvent: (stored) => { totals.events++; if (stored) totals.stored++; },
      });
      remotes.set(c.url, r);
      r.start();
    }
    lastChoice = Date.now();
    // beyondHops: relays followed that no crawl within spider.hops placed (what live.maxHop bounds)
    const beyondHops = chosen.filter((c) => beyondMaxHop(hops.get(c.url) ?? null, cfg.hops)).length;
    log.info({ relays: chosen.length, general: chosen.filter((c) => c.why === 'general').length, max: lc.maxRelays, maxHop: lc.maxHop, beyondHops }, 'live: relays chosen');
    return chosen;
  }

  const choose = (): Promise<Chosen[]> => {
    choosing ??= chooseNow().finally(() => { choosing = null; });
    return choosing;
  };

  return {
    start() {
      if (!lc.enabled || lc.maxRelays === 0 || timer) return;
      let last = Date.now();
      let lastOutbox = 0;
      void choose().catch((e: unknown) => log.error({ err: e }, 'live: choice failed'));
      // a cheap tick: a new choice (and an outbox round) after each spider run, and every
      // live.refresh (live.outboxInterval)
      timer = setInterval(() => {
        const runs = deps.runs?.() ?? 0;
        const ran = runs !== seenRuns;
        seenRuns = runs;
        if (ran || Date.now() - lastOutbox >= lc.outboxInterval) { lastOutbox = Date.now(); runOutbox(); }
        if (!ran && Date.now() - last < lc.refresh) return;
        last = Date.now();
        void choose().catch((e: unknown) => log.error({ err: e }, 'live: choice failed'));
      }, 1000);
      timer.unref();
    },
    choose,
    status() {
      const rs = [...remotes].map(([u, r]): LiveRelayStatus => ({ ...r.status(), hop: hops.get(u) ?? null })).sort((a, b) => b.perMinute - a.perMinute || (a.url < b.url ? -1 : 1));
      return {
        enabled: lc.enabled && lc.maxRelays > 0, maxRelays: lc.maxRelays, maxHop: lc.maxHop,
        live: rs.filter((r) => r.state === 'live').length,
        waiting: rs.filter((r) => r.state === 'waiting' || r.state === 'connecting').length,
        cutOff: rs.filter((r) => r.state === 'cut-off').length,
        perMinute: rs.reduce((s, r) => s + r.perMinute, 0),
        events: totals.events, stored: totals.stored, lastChoice, outbox: { ...outboxState }, remotes: rs,
      };
    },
    async stop() {
      stopped = true;
      stopCtl.abort();
      if (timer) clearInterval(timer);
      await outboxRun;
      await choosing?.catch(() => {});
      await Promise.all([...remotes.values()].map((r) => r.close()));
      remotes.clear();
      hops.clear();
    },
  };
}
