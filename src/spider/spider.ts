// The directory spider: seeds -> hop 0 relays -> hop by hop discovery through kind 10002 lists, every
// relay fetched completely for the configured kinds through the work queue, every event through the
// one ingest path, the relay directory updated after each relay. One run at a time.
import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import type { EventStore } from '../store/types.js';
import type { Ingest } from '../ingest/types.js';
import { loadVerifier, type EventVerifier } from '../nostr/verify.js';
import { crawlRelay, sharedState, type CrawlOptions, type SharedState } from './fetch/crawl.js';
import { crawlOptions, knownCheckFor, pageBytes } from './fetch/options.js';
import type { KnownCheck } from './fetch/admit.js';
import type { HomeItems } from './fetch/negentropy.js';
import { AuthorBook } from './fetch/authors.js';
import { RelayDirectory } from '../directory/records.js';
import { SpiderRuns } from '../directory/runs.js';
import { nextHop, type Candidate } from './discovery/relay-lists.js';
import { MemoryQueue, type WorkQueue } from './queue/memory.js';
import { RedisQueue } from './queue/redis.js';
import { directoryKinds } from './kinds.js';
import { createScheduler } from '../lib/scheduler.js';
import { resolveSeeds } from './discovery/seeds.js';
import { ingestSink, type EventSink } from '../ingest/sink.js';
import { emptyStatus, formatSummary, metricsText, nothingCrawled, type HopSummary, type SpiderStatus, type SpiderSummary } from './status.js';
import { addCounts, zeroCounts, type FetchCounts, type WorkItem, type WorkResult } from '../directory/types.js';
import { normalizeRelayUrl, resolveTarget, syntacticRefusal, type Target } from '../remote/url.js';
import { HostGate, hostOf, spreadHosts } from './hosts.js';
import { RunIdentities, type HostTask } from './aliases/identify.js';
import { probeIdentity, type RelayAnswer } from '../remote/identity.js';
import type { RelayRecord } from '../directory/records.js';
import { LateAuthors } from './late-authors.js';

export type SpiderConfig = Config['spider'];

export interface SpiderDeps {
  config: SpiderConfig;
  store: EventStore;
  /** the relay's one ingest path (in-process) */
  ingest?: Ingest;
  /** or any sink (a remote relay for `spider --once` while the relay runs); wins over ingest */
  sink?: EventSink;
  logger: Logger;
  /** our relay's pubkey: a relay whose NIP-11 `self` equals it is skipped */
  selfPubkey?: string;
  /** more URLs of our own relay (e.g. ws://host:port it listens on), skipped like config selfUrls */
  selfUrls?: string[];
  /** work queue (default: in-process, or Redis when config.redis is set: this relay coordinates) */
  queue?: WorkQueue;
  verifier?: EventVerifier;
  /** DNS resolution override (tests) */
  resolve?: (url: string, allowPrivate: boolean) => Promise<Target>;
  /** told every relay's result as it is recorded (src/app gives the monitor its events per kind) */
  onRelayResult?: (r: WorkResult) => void;
  /**
   * `store` is the home's: the events the sink hands on end up in it (in-process ingest, or the
   * relay that owns this data directory). Then NIP-77 reconciles against it. Default: true for an
   * in-process ingest sink, false for a remote one (e.g. `spider --relay URL` to another relay).
   */
  storeIsHome?: boolean;
  /** who runs this spider, as the directory's run record says it (default 'relay') */
  runBy?: string;
  /**
   * Its directory and run records (default: over store.env). Beside the relay that owns the data
   * directory they write through that relay (app/forwarded-records.ts): one writing process.
   */
  records?: { directory: RelayDirectory; runs: SpiderRuns };
  /** known authors (default: in store.env, kept across runs); a scratch one where the store is read-only */
  authors?: AuthorBook;
}

export interface Spider {
  /** runs now and then every interval; runs never overlap */
  start(): void;
  /** one run (or the one in progress) */
  runOnce(): Promise<SpiderSummary>;
  status(): SpiderStatus;
  /** Prometheus text of the spider's figures */
  metricsText(): string;
  readonly directory: RelayDirectory;
  /** the runs this data directory has seen (the relay's and `orbweaver spider`'s) */
  readonly runs: SpiderRuns;
  /** stops scheduling, ends the run in progress quickly (connections closed), waits for it */
  stop(): Promise<void>;
}

/** What the spider keeps across runs: shared by its API and by each run. */
interface SpiderCore {
  deps: SpiderDeps;
  cfg: SpiderConfig;
  log: Logger;
  directory: RelayDirectory;
  runs: SpiderRuns;
  sink: EventSink;
  selfUrls: Set<string>;
  known: KnownCheck;
  homeItems: HomeItems | undefined;
  /** known authors persist across runs, in the store's environment */
  authors: AuthorBook;
  status: SpiderStatus;
  totals: FetchCounts & { relaysReached: number; relaysFailed: number };
  verifier: EventVerifier | undefined;
}

function spiderCore(deps: SpiderDeps): SpiderCore {
  const cfg = deps.config;
  const sink: EventSink = deps.sink ?? (deps.ingest ? ingestSink(deps.ingest) : (() => { throw new Error('createSpider needs an ingest or a sink'); })());
  const core: SpiderCore = {
    deps,
    cfg,
    log: deps.logger.child({ component: 'spider' }),
    directory: deps.records?.directory ?? new RelayDirectory(deps.store.env),
    runs: deps.records?.runs ?? new SpiderRuns(deps.store.env),
    sink,
    selfUrls: new Set([...cfg.selfUrls, ...(deps.selfUrls ?? [])].map(normalizeRelayUrl).filter((u): u is string => u !== null)),
    verifier: deps.verifier,
    known: knownCheckFor(sink, deps.store),
    // NIP-77 reconciles the remote against the home's own set, so only where this store is the home's
    homeItems: (deps.storeIsHome ?? sink.kind === 'ingest')
      ? { items: (f, o) => deps.store.negentropyItems(f, o), holds: (id) => deps.store.has(id) }
      : undefined,
    authors: deps.authors ?? new AuthorBook(deps.store.env),
    status: emptyStatus(cfg.hops),
    totals: { ...zeroCounts(), relaysReached: 0, relaysFailed: 0 },
  };
  try { core.status.directorySize = core.directory.count(); } catch { /* empty */ }
  return core;
}

export function createSpider(deps: SpiderDeps): Spider {
  const core = spiderCore(deps);
  const { directory, runs, status, totals, log } = core;
  let stopCtl = new AbortController();
  const run = async (): Promise<SpiderSummary> => {
    core.verifier ??= await loadVerifier('auto');
    return new SpiderRun(core, core.verifier, stopCtl.signal).run();
  };
  const scheduler = createScheduler(run, core.cfg.interval, (e) => log.error({ err: e }, 'spider: run failed'));

  return {
    directory,
    runs,
    start() {
      if (stopCtl.signal.aborted) stopCtl = new AbortController();
      scheduler.start();
    },
    runOnce() {
      if (stopCtl.signal.aborted) stopCtl = new AbortController();
      return scheduler.runNow<SpiderSummary>();
    },
    status() {
      return { ...status, nextRun: scheduler.nextRun(), current: [...status.current] };
    },
    metricsText() {
      return metricsText({ ...status, nextRun: scheduler.nextRun() }, { ...totals, ...(status.running ? sumWithRun(totals, status.events) : {}) });
    },
    async stop() {
      status.phase = status.running ? 'stopping' : 'idle';
      stopCtl.abort();
      await scheduler.stop();
    },
  };
}

/** The work queue of one run: the caller's, else Redis when configured (this relay coordinates), else in-process. */
function openQueue({ deps, cfg, log, directory }: SpiderCore): WorkQueue {
  const queue = deps.queue ?? (cfg.redis
    ? new RedisQueue({
      url: cfg.redis, prefix: cfg.queueKey, leaseTtl: cfg.leaseTtl, maxAttempts: cfg.maxAttempts, log, self: deps.selfPubkey,
      onStray: async (r) => { await directory.applyResult(r); },
    })
    : new MemoryQueue(cfg.maxAttempts));
  if (queue instanceof RedisQueue) log.info({ queueKey: cfg.queueKey, run: queue.run, localWorkers: cfg.work ? cfg.concurrency : 0 }, 'spider: coordinating the crawl through redis');
  return queue;
}

/** One run: seeds, then hop by hop every relay through the queue, the directory updated after each relay. */
class SpiderRun {
  private readonly started = Date.now();
  private readonly events = zeroCounts();
  private readonly summary: SpiderSummary;
  private readonly shared: SharedState;
  private readonly queue: WorkQueue;
  private readonly opts: CrawlOptions;
  /** results of the hop being worked still to come (the local workers stop when none is left) */
  private remaining = 0;
  /** a hop's hosts are still being identified: more items may come (the local workers wait for them) */
  private feeding = false;
  /** politeness per server, for the whole run: the crawl and the identification of a host's URLs */
  private readonly gate: HostGate;
  /** which URLs are one relay (null: spider.aliases off) */
  private readonly identities: RunIdentities | null;
  /** relays asked by author, recorded after the run's last pass (late-authors.ts) */
  private readonly late = new LateAuthors();

  constructor(private readonly core: SpiderCore, private readonly verifier: EventVerifier, private readonly signal: AbortSignal) {
    const { cfg, status, log } = core;
    const started = this.started;
    this.summary = {
      startedAt: started, finishedAt: started, durationMs: 0, seeds: 0, seedsWithoutList: 0, hops: [],
      relays: { total: 0, reached: 0, failed: 0, refused: 0, skipped: 0, aliases: 0, probed: 0 }, events: this.events, failures: [], refusals: [], bootstrapFailures: [], aborted: false,
    };
    Object.assign(status, { running: true, phase: 'seeds', hop: -1, relaysDone: 0, relaysTotal: 0, relaysDoneRun: 0, events: this.events, current: [] });
    this.shared = sharedState(core.authors, cfg.concurrency);
    this.queue = openQueue(core);
    this.opts = crawlOptions(cfg);
    this.gate = new HostGate(cfg.pause);
    this.identities = cfg.aliases ? this.runIdentities() : null;
    log.info({ hops: cfg.hops, kinds: directoryKinds(cfg), seeds: cfg.seeds.length, admins: cfg.admins.length }, 'spider: run started');
  }

  async run(): Promise<SpiderSummary> {
    const { cfg, status, log } = this.core;
    const { summary } = this;
    try {
      let candidates = await this.seedRelays();
      const seen = new Set<string>();
      status.phase = 'crawling';
      for (let hop = 0; hop <= cfg.hops && candidates.length > 0 && !this.signal.aborted; hop++) candidates = await this.crawlHop(hop, candidates, seen);
      await this.askLateAuthors();
    } finally {
      await this.finish();
    }
    log.info({ ms: summary.durationMs, relays: summary.relays, events: summary.events }, 'spider: run finished');
    // a run that crawled nothing says why, wherever it runs (the relay, orbweaver spider [--once])
    const nothing = summary.aborted ? null : nothingCrawled(summary);
    if (nothing) log.warn({ seeds: summary.seeds, withoutList: summary.seedsWithoutList, relays: summary.relays }, `spider: ${nothing}`);
    log.debug(formatSummary(summary));
    return summary;
  }

  /** The seeds' pubkeys (known authors from now on) and the relays of hop 0, most mentioned first. */
  private async seedRelays(): Promise<Candidate[]> {
    const { cfg, deps, sink, known, log, authors } = this.core;
    const { summary } = this;
    const seeds = await resolveSeeds({
      store: deps.store, sink, verifier: this.verifier, log, bootstrapRelays: cfg.bootstrapRelays.map(normalizeRelayUrl).filter((u): u is string => u !== null),
      allowPrivate: cfg.allowPrivate, connectTimeout: cfg.connectTimeout, idleTimeout: cfg.idleTimeout, pageDeadline: cfg.pageDeadline, maxPageBytes: pageBytes(cfg), maxEventBytes: cfg.maxEventBytes,
      counts: this.events, known, inFlight: this.shared.inFlight, signal: this.signal, resolve: deps.resolve, failures: summary.bootstrapFailures,
    }, cfg.seeds, cfg.admins, cfg.maxRelayTagsPerList);
    summary.seeds = seeds.pubkeys.length;
    summary.seedsWithoutList = seeds.withoutList;
    for (const p of seeds.pubkeys) authors.add(p);
    log.info({ seeds: seeds.pubkeys.length, withoutList: seeds.withoutList, relays: seeds.relays.size }, 'spider: seeds resolved');
    return [...seeds.relays].map(([url, n]) => ({ url, mentions: n, referrers: ['seed'] }))
      .sort((a, b) => b.mentions - a.mentions || (a.url < b.url ? -1 : 1)).slice(0, cfg.maxRelaysPerHop);
  }

  /** Crawls one hop's relays (within the run's relay cap); returns the next hop's candidates (none after the last hop). */
  private async crawlHop(hop: number, candidates: Candidate[], seen: Set<string>): Promise<Candidate[]> {
    const { cfg, log, status, directory } = this.core;
    const { summary } = this;
    const h: HopSummary = { hop, relays: 0, reached: 0, failed: 0, refused: 0, skipped: 0, aliases: 0, events: zeroCounts() };
    summary.hops.push(h);
    // relays, not URLs: a relay's aliases do not use up the run's room
    const room = cfg.maxRelays - (summary.relays.total - summary.relays.aliases);
    if (room <= 0) { log.info({ hop, maxRelays: cfg.maxRelays }, 'spider: relay cap reached'); return []; }
    candidates = candidates.slice(0, room);
    for (const c of candidates) seen.add(c.url);
    h.relays = candidates.length;
    summary.relays.total += candidates.length;
    const items = await this.hopItems(h, candidates);
    // URLs of one host that may reach one relay are identified first; the rest is crawled at once
    const plan = this.identities ? this.identities.plan(items) : { now: items, hosts: [] };
    Object.assign(status, { hop, relaysDone: 0, relaysTotal: 0 });
    log.info({ hop, relays: candidates.length, fetching: plan.now.length, identifying: plan.hosts.length, refused: h.refused, skipped: h.skipped }, `spider: hop ${hop} started`);

    const probed = this.identities?.counts.asked ?? 0;
    await this.workHop(h, spreadHosts(plan.now), plan.hosts, (r) => this.record(h, r));
    summary.relays.reached += h.reached;
    summary.relays.failed += h.failed;
    summary.relays.refused += h.refused;
    summary.relays.skipped += h.skipped;
    summary.relays.aliases += h.aliases;
    summary.relays.probed += (this.identities?.counts.asked ?? 0) - probed;
    log.info({ hop, reached: h.reached, failed: h.failed, refused: h.refused, skipped: h.skipped, aliases: h.aliases, fetched: h.events.fetched, stored: h.events.stored }, `spider: hop ${hop} done`);
    // a relay reached through an alias is seen under its canonical URL too
    const relays = [...new Set(candidates.map((c) => directory.relayOf(c.url)))];
    for (const u of relays) seen.add(u);
    if (hop >= cfg.hops) return [];
    // Next hop from every relay of this hop, with the links remembered from earlier runs too.
    const linksByRelay = new Map<string, Record<string, number>>();
    for (const u of relays) {
      const links = { ...directory.get(u)?.links };
      // a relay asked by author is recorded after the run's last pass: this run's links are held with it
      for (const [v, n] of Object.entries(this.late.links(u) ?? {})) links[v] = Math.max(links[v] ?? 0, n);
      if (Object.keys(links).length) linksByRelay.set(u, links);
    }
    return nextHop(linksByRelay, seen, cfg.maxRelaysPerHop);
  }

  /** The work items of a hop: each candidate recorded as discovered, less our own relay, refused URLs and relays in failure backoff. */
  private async hopItems(h: HopSummary, candidates: Candidate[]): Promise<WorkItem[]> {
    const { cfg, log, directory, selfUrls } = this.core;
    const { summary } = this;
    const hop = h.hop;
    const items: WorkItem[] = [];
    const now = Date.now();
    for (const c of candidates) {
      const rec = await directory.discovered(c.url, hop, c.referrers, c.mentions, now);
      const refusal = syntacticRefusal(c.url, cfg.allowPrivate);
      if (selfUrls.has(c.url)) {
        h.skipped++;
        log.info({ url: c.url, hop }, 'spider: skipping our own relay');
      } else if (refusal) {
        h.refused++;
        if (summary.refusals.length < 50) summary.refusals.push({ url: c.url, error: refusal });
        await directory.applyResult({ ...blankResult(c.url, hop, now), outcome: 'refused', error: refusal, quirks: rec.quirks, cursors: rec.cursors });
        log.info({ url: c.url, hop, reason: refusal }, 'spider: relay refused');
      } else if (RelayDirectory.retryAt(rec, { base: cfg.failureBackoff, max: cfg.maxFailureBackoff }) > now) {
        h.skipped++;
        log.info({ url: c.url, hop, failures: rec.failures }, 'spider: relay in failure backoff, skipped');
      } else {
        items.push(this.item(rec, hop));
      }
    }
    return items;
  }

  private item(rec: RelayRecord, hop: number): WorkItem {
    const { cfg } = this.core;
    return { url: rec.url, hop, kinds: directoryKinds(cfg), discover: hop < cfg.hops, quirks: rec.quirks, cursors: rec.cursors, nip11: rec.nip11 ?? null, allowPrivate: cfg.allowPrivate };
  }

  /**
   * The run's identification of URLs that reach one relay (aliases/identify.ts): each URL asked at
   * most once, through the run's gate, for what it answers about events dated up to an hour before
   * the run (a second fixed for the run, so that events a busy relay takes meanwhile change nothing).
   */
  private runIdentities(): RunIdentities {
    const { cfg, deps, directory, log, selfUrls } = this.core;
    const until = Math.floor(this.started / 1000) - 3600;
    const ask = async (url: string): Promise<RelayAnswer> => {
      try {
        const target = await (deps.resolve ?? resolveTarget)(url, cfg.allowPrivate);
        return await probeIdentity(target, { until, connectTimeout: cfg.connectTimeout, timeout: cfg.idleTimeout, maxEventBytes: cfg.maxEventBytes, maxBytes: pageBytes(cfg), signal: this.signal });
      } catch (e) {
        return { nip11: null, answer: null, events: 0, asked: false, error: (e as Error).message };
      }
    };
    // a relay named only through one of its aliases: crawled like a candidate of the hop, if it may be
    const itemFor = (rec: RelayRecord, hop: number): WorkItem | null =>
      selfUrls.has(rec.url) || rec.lastOutcome === 'self' || syntacticRefusal(rec.url, cfg.allowPrivate) || RelayDirectory.retryAt(rec, { base: cfg.failureBackoff, max: cfg.maxFailureBackoff }) > Date.now()
        ? null
        : this.item(rec, hop);
    return new RunIdentities({ directory, gate: this.gate, ask, itemFor, recheck: cfg.aliasRecheck, signal: this.signal, log });
  }

  /** One relay's result: into the directory, the monitor's figures, the hop's and the run's tallies, the log. */
  private async record(h: HopSummary, r: WorkResult): Promise<void> {
    const { deps, directory, status, totals, log } = this.core;
    const { summary, events } = this;
    // a relay asked by author is recorded after the run's last pass (late-authors.ts), with it
    if (this.queue instanceof RedisQueue || !this.late.hold(h, r)) {
      await directory.applyResult(r);
      deps.onRelayResult?.(r);
    }
    status.relaysDone++;
    status.relaysDoneRun++;
    addCounts(h.events, r.counts);
    addCounts(events, r.counts);
    if (r.outcome === 'ok' || r.outcome === 'partial') { h.reached++; totals.relaysReached++; }
    else if (r.outcome === 'refused') { h.refused++; if (summary.refusals.length < 50) summary.refusals.push({ url: r.url, error: r.error ?? 'refused' }); }
    else if (r.outcome === 'self') h.skipped++;
    else { h.failed++; totals.relaysFailed++; if (summary.failures.length < 50) summary.failures.push({ url: r.url, error: r.error ?? 'failed' }); }
    const lvl = r.outcome === 'failed' ? 'warn' : 'info';
    log[lvl]({ url: r.url, hop: h.hop, outcome: r.outcome, error: r.error, ms: r.durationMs, ...r.counts, links: Object.keys(r.links).length, quirks: r.quirks },
      `spider: relay ${r.outcome} (${status.relaysDone}/${status.relaysTotal} of hop ${h.hop})`);
  }

  /**
   * Puts a hop's items through the queue, works them with `concurrency` local workers, collects
   * results. The hosts whose URLs are identified first (up to `concurrency` hosts at a time, each
   * URL asked through the gate) add their relays to the queue as they are done, while the other
   * relays are crawled. Politeness per server (host and port), not per worker: one fetch at a time
   * from a server (one connection, whatever the URL's path) and `pause` between two fetches from
   * it; a worker goes on with other servers meanwhile.
   */
  private async workHop(h: HopSummary, items: WorkItem[], hosts: HostTask[], onResult: (r: WorkResult) => Promise<void>): Promise<void> {
    const { cfg, log, status } = this.core;
    const { queue, signal } = this;
    if (items.length === 0 && hosts.length === 0) return;
    let expected = 0;
    const add = async (more: WorkItem[]) => {
      if (more.length === 0) return;
      expected += more.length;
      this.remaining += more.length;
      status.relaysTotal += more.length;
      await queue.enqueue(more);
    };
    this.remaining = 0;
    await add(items);
    this.feeding = hosts.length > 0;
    const identifying = (async () => {
      let next = 0;
      await Promise.all(Array.from({ length: Math.min(cfg.concurrency, hosts.length) }, async () => {
        while (next < hosts.length && !signal.aborted) {
          const t = hosts[next++]!;
          let items = t.items;
          try {
            const r = await t.run();
            h.aliases += r.folded;
            h.skipped += r.skipped;
            items = r.items;
          } catch (e) {
            // identifying is an economy, not a condition of the crawl: its URLs are crawled as before
            log.warn({ host: t.host, err: (e as Error).message }, 'spider: could not identify a host\'s relays; its URLs are crawled one by one');
            this.identities?.crawlAsIs(t.host, items);
          }
          await add(spreadHosts(items));
        }
      }));
    })().finally(() => { this.feeding = false; });
    const workers = cfg.redis && !cfg.work ? 0 : cfg.concurrency;
    const running = Array.from({ length: workers }, () => this.work(this.gate));
    let got = 0;
    while ((this.feeding || got < expected) && !signal.aborted) {
      const r = await queue.result(200);
      if (!r) continue;
      got++;
      this.remaining--;
      await onResult(r);
    }
    await identifying;
    await Promise.all(running);
    // Work finished after a stop still records its cursors and quirks.
    for (let r = await queue.result(0); r; r = await queue.result(0)) await onResult(r);
  }

  /**
   * The run's last pass: relays that answer only REQs naming authors are asked for the authors the
   * run learnt after their crawl (late-authors.ts); the figures go to the hop that crawled them.
   */
  private async askLateAuthors(): Promise<void> {
    const { cfg, authors, log } = this.core;
    const items = this.late.items(authors.end, directoryKinds(cfg), cfg.allowPrivate);
    if (items.length === 0 || this.signal.aborted) return;
    log.info({ relays: items.length }, 'spider: asking the relays that answer only by author for the authors learnt after their crawl');
    // no host to identify (these relays were crawled under these URLs): the hop passed is left as it is
    const last = this.summary.hops[this.summary.hops.length - 1]!;
    await this.workHop(last, spreadHosts(items), [], async (r) => {
      const h = this.late.fold(r);
      if (h) { addCounts(h.events, r.counts); addCounts(this.events, r.counts); }
    });
  }

  /** A local worker: leases items of the hop and crawls them, one at a time per host, until none is left. */
  private async work(hosts: HostGate): Promise<void> {
    const { deps, sink, known, log, homeItems, status } = this.core;
    const { queue, signal } = this;
    while ((this.feeding || this.remaining > 0) && !signal.aborted) {
      const lease = await queue.lease(50);
      if (!lease) { if (queue.pending() === 0 && !this.feeding) return; continue; }
      const host = hostOf(lease.item.url);
      await hosts.acquire(host, signal);
      status.current.push(lease.item.url);
      let r: WorkResult | null = null;
      try {
        r = await crawlRelay(lease.item, {
          verifier: this.verifier, sink, known, log, opts: this.opts, selfPubkey: deps.selfPubkey, shared: this.shared, home: homeItems,
          signal: lease.signal ? AbortSignal.any([signal, lease.signal]) : signal, resolve: deps.resolve,
        });
      } catch (e) {
        // Another attempt (or, after the last, a dead letter and a 'failed' result).
        log.error({ url: lease.item.url, attempt: lease.attempt, err: e }, 'spider: relay fetch crashed');
        await lease.fail(`crash: ${(e as Error).message}`);
      } finally {
        hosts.release(host);
      }
      status.current = status.current.filter((u) => u !== lease.item.url);
      if (r && !lease.signal?.aborted) await lease.ack(r);
    }
  }

  /** The run's end, however it ends: totals, status, the queue closed (if ours), the run recorded in the directory. */
  private async finish(): Promise<void> {
    const { deps, status, totals, directory, runs, log } = this.core;
    const { summary, events } = this;
    summary.aborted = this.signal.aborted;
    summary.finishedAt = Date.now();
    summary.durationMs = summary.finishedAt - this.started;
    for (const k of Object.keys(events) as Array<keyof FetchCounts>) totals[k] += events[k];
    Object.assign(status, { running: false, phase: 'idle', hop: -1, current: [], lastRun: summary, runs: status.runs + 1 });
    for (const r of this.late.take()) {
      try { await directory.applyResult(r); deps.onRelayResult?.(r); } catch (e) { log.warn({ url: r.url, err: (e as Error).message }, 'spider: could not record a relay asked by author'); }
    }
    try { status.directorySize = directory.count(); } catch { /* closed */ }
    if (!deps.queue) await this.queue.close();
    try { await runs.record(summary, deps.runBy ?? 'relay'); } catch (e) { log.warn({ err: (e as Error).message }, 'spider: could not record the run in the directory'); }
  }
}

function sumWithRun(totals: FetchCounts, run: FetchCounts): FetchCounts {
  const out = { ...totals };
  for (const k of Object.keys(run) as Array<keyof FetchCounts>) out[k] += run[k];
  return out;
}

function blankResult(url: string, hop: number, now: number): WorkResult {
  return { url, hop, outcome: 'failed', nip11: null, quirks: {}, cursors: {}, counts: zeroCounts(), links: {}, ignoredLists: 0, startedAt: now, durationMs: 0 };
}
