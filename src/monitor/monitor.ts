// The NIP-66 monitor as a service (finder, validator, monitor and refresher in one process, on
// the relay's store; docs/monitor.md). Every spider.monitorInterval, one cycle:
//   1. announce: kind 10166 (frequency, timeouts, checks), kind 0 and, with monitor relays, kind
//      10002 — at the first cycle of the process and then once a day;
//   2. finder: relay URLs from stored events become candidates (src/directory/finder.ts);
//   3. validator: a batch of candidates is probed; those that answer join the directory
//      (src/monitor/validator.ts) — only where `validate` is on: the relay's monitor, not `spider
//      --once`, whose reach stays within the spider's hops;
//   4. checks: every directory relay (not refused, not ourselves) gets a check (check.ts),
//      `monitorConcurrency` at a time; an online relay's check is published as kind 30166; every
//      check is kept as a snapshot with fresh uptime and RTT figures (history.ts).
// Between cycles, a relay new in the directory (the spider's first crawl, a validated candidate)
// is checked within a minute instead of at the next cycle. Cycles never overlap.
import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import type { EventStore } from '../store/types.js';
import type { NostrEvent } from '../nostr/event.js';
import type { IngestStatus } from '../ingest/types.js';
import { npubEncode } from 'nostr-tools/nip19';
import { RelayDirectory } from '../directory/records.js';
import { CandidateStore } from '../directory/candidates.js';
import { Finder, type FinderSummary } from '../directory/finder.js';
import { validateCandidates, type ValidationSummary } from './validator.js';
import { normalizeRelayUrl, type Target } from '../remote/url.js';
import { createScheduler } from '../lib/scheduler.js';
import type { WorkResult } from '../directory/types.js';
import { checkRelay } from './check.js';
import { MonitorHistory } from './history.js';
import { monitorKey, type MonitorKey } from './key.js';
import { announcementEvent, discoveryAddress, discoveryEvent, monitorProfile, monitorRelayList, retractionEvent } from './nip66.js';
import { createPublisher, type Publisher } from './publish.js';

/** The monitor's counters (src/app gives it the relay's Prometheus registry's; absent in `spider --once`). */
export interface MonitorMetrics {
  cycles: { inc(): void };
  checks: { inc(labels: { result: 'online' | 'offline' }): void };
  published: { inc(): void };
  /** probe outcomes: nip 50/45/77, outcome served/refused/wrong/empty/silent/skipped */
  probes?: { inc(labels: { nip: string; outcome: string }): void };
}

export interface MonitorDeps {
  config: Config;
  store: EventStore;
  /** our ingest path, or the command sink of `spider --once` */
  put: (ev: NostrEvent) => Promise<IngestStatus>;
  logger: Logger;
  /** validate candidates (the long-running monitor); `spider --once` does not */
  validate: boolean;
  /** our own relay's URLs (never checked) */
  selfUrls?: string[];
  /** DNS override (tests) */
  resolve?: (url: string, allowPrivate: boolean) => Promise<Target>;
  metrics?: MonitorMetrics;
  /** its records (default: over store.env); beside the owning relay, written through it (app/forwarded-records.ts) */
  records?: { directory: RelayDirectory; candidates: CandidateStore; history: MonitorHistory };
}

export interface CycleSummary {
  startedAt: number;
  finishedAt: number;
  finder: FinderSummary | null;
  validator: ValidationSummary | null;
  /** relays checked, online among them, 30166 events published (stored by our ingest path) */
  checked: number;
  online: number;
  published: number;
  /** skipped: refused by the address rules */
  refused: number;
  /** 30166 events our ingest path did not store (refused by a policy) */
  notStored: number;
  announced: boolean;
  /** deliveries to spider.monitorRelays */
  delivered: number;
  deliveryFailures: number;
}

export interface MonitorStatus {
  pubkey: string;
  npub: string;
  keySource: MonitorKey['source'];
  running: boolean;
  cycles: number;
  lastCycle: CycleSummary | null;
  nextCycle: number | null;
  /** candidates waiting for validation */
  candidates: number;
  /** relays with a health record */
  checked: number;
  /** changes whenever the directory's health figures do */
  stamp: string;
}

export interface Monitor {
  readonly pubkey: string;
  readonly history: MonitorHistory;
  readonly candidates: CandidateStore;
  /** runs a cycle now and every interval, plus the minute tick for new relays */
  start(): void;
  /** one cycle (or the one in progress) */
  runOnce(): Promise<CycleSummary>;
  /** an event our ingest path stored: the finder's live feed */
  seen(ev: NostrEvent): void;
  /** a spider crawl result: its events per kind */
  noteCrawl(r: Pick<WorkResult, 'url' | 'startedAt'> & { kinds?: Record<string, number> }): void;
  status(): MonitorStatus;
  stop(): Promise<void>;
}

const ANNOUNCE_EVERY = 24 * 3_600_000;
const NEW_RELAY_TICK = 60_000;
/** how often the limits are probed per relay (the other probes run at every check) */
export const LIMITS_EVERY = 24 * 3_600_000;

export function createMonitor(deps: MonitorDeps): Monitor {
  return new MonitorService(deps);
}

function emptyCycle(): CycleSummary {
  const now = Date.now();
  return { startedAt: now, finishedAt: now, finder: null, validator: null, checked: 0, online: 0, published: 0, refused: 0, notStored: 0, announced: false, delivered: 0, deliveryFailures: 0 };
}

/** The monitor: its key, stores and publisher, the cycle and the minute tick for new relays, never two at once. */
class MonitorService implements Monitor {
  readonly pubkey: string;
  readonly history: MonitorHistory;
  readonly candidates: CandidateStore;
  private readonly cfg: Config['spider'];
  private readonly log: Logger;
  private readonly key: MonitorKey;
  private readonly directory: RelayDirectory;
  private readonly selfUrls: Set<string>;
  private readonly finder: Finder;
  private readonly publisher: Publisher;
  private readonly scheduler: ReturnType<typeof createScheduler>;
  private stopCtl = new AbortController();
  private lastAnnounce = 0;
  private cycles = 0;
  private lastCycle: CycleSummary | null = null;
  private running = false;
  private busy: Promise<unknown> = Promise.resolve();
  private changes = 0;
  private tick: NodeJS.Timeout | null = null;
  private unsubscribed = false;

  constructor(private readonly deps: MonitorDeps) {
    const cfg = (this.cfg = deps.config.spider);
    const log = (this.log = deps.logger.child({ component: 'monitor' }));
    const key = (this.key = monitorKey(cfg.monitorKey, deps.config.dataDir));
    this.pubkey = key.pubkey;
    this.directory = deps.records?.directory ?? new RelayDirectory(deps.store.env);
    this.candidates = deps.records?.candidates ?? new CandidateStore(deps.store.env);
    this.history = deps.records?.history ?? new MonitorHistory(deps.store.env, cfg.monitorRetention);
    this.selfUrls = new Set([...cfg.selfUrls, ...(deps.selfUrls ?? [])].map(normalizeRelayUrl).filter((u): u is string => u !== null));
    this.finder = new Finder({ store: deps.store, candidates: this.candidates, directory: this.directory, rKinds: cfg.finderKinds, allowPrivate: cfg.allowPrivate, maxCandidates: cfg.maxCandidates, selfPubkey: key.pubkey, log });
    this.publisher = createPublisher({ secretKey: key.secretKey, put: deps.put, relays: cfg.monitorRelays, connectTimeout: cfg.monitorTimeout, log });
    if (key.source === 'generated') log.info({ pubkey: key.pubkey, file: key.file }, 'monitor: generated its key (kept in the data directory)');
    this.scheduler = createScheduler(() => this.exclusive(() => this.cycle()), cfg.monitorInterval, (e) => log.error({ err: e }, 'monitor: cycle failed'));
  }

  /** Runs `fn` after whatever the monitor is doing (a cycle, the new-relay tick): never two at once. */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const p = this.busy.then(fn, fn);
    this.busy = p.catch(() => undefined);
    return p;
  }

  private writeProbe() {
    const { cfg } = this;
    return cfg.monitorWrite ? announcementEvent({ intervalMs: cfg.monitorInterval, timeoutMs: cfg.monitorTimeout, write: true, probes: cfg.monitorProbes }, Math.floor(Date.now() / 1000)) : null;
  }

  private async announce(): Promise<void> {
    const { cfg, publisher, deps } = this;
    const now = Math.floor(Date.now() / 1000);
    await publisher.publish(announcementEvent({ intervalMs: cfg.monitorInterval, timeoutMs: cfg.monitorTimeout, write: cfg.monitorWrite, probes: cfg.monitorProbes }, now));
    await publisher.publish(monitorProfile({ relayName: deps.config.info.name, relayUrl: deps.config.publicUrl || undefined }, now));
    // NIP-66: monitors SHOULD publish a kind 10002: where its events are — this relay (when its
    // public URL is known) and the monitor relays
    const home = normalizeRelayUrl(deps.config.publicUrl);
    const relays = [...new Set([...(home ? [home] : []), ...cfg.monitorRelays])];
    if (relays.length) await publisher.publish(monitorRelayList(relays, now));
    this.lastAnnounce = Date.now();
  }

  /** The directory relays a check may visit. */
  private monitored(onlyNew: boolean): string[] {
    const out: string[] = [];
    for (const r of this.directory.all()) {
      if (r.lastOutcome === 'refused' || r.lastOutcome === 'self' || this.selfUrls.has(r.url)) continue;
      // one relay, one 30166: its aliases are checked and published as the relay they reach
      if (r.aliasOf !== undefined) continue;
      if (onlyNew && this.history.latest(r.url)) continue;
      out.push(r.url);
    }
    return out;
  }

  /** Checks `urls`, monitorConcurrency at a time, into the cycle's summary. */
  private async checkAll(urls: string[], s: CycleSummary): Promise<void> {
    const signal = this.stopCtl.signal;
    // the write test publishes our 10166 (replaceable: repeating it does not pile up)
    const tmpl = this.writeProbe();
    const writeEvent = tmpl ? (await this.publisher.publish(tmpl)).event : undefined;
    let next = 0;
    const worker = async () => {
      while (next < urls.length && !signal.aborted) {
        if (!(await this.checkOne(urls[next++]!, s, writeEvent, signal))) break;
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.cfg.monitorConcurrency, urls.length) }, worker));
  }

  /** One relay's check: probed, published as 30166 when online, kept in the history; false when stopped meanwhile. */
  private async checkOne(url: string, s: CycleSummary, writeEvent: NostrEvent | undefined, signal: AbortSignal): Promise<boolean> {
    const { cfg, deps, history, log } = this;
    const prev = history.latest(url);
    // the limits probe reads the most (up to 501 events): once a day per relay, its last result kept between
    const lastLimits = prev?.probeReport?.limits;
    const limitsDue = !lastLimits?.at || Date.now() - lastLimits.at >= LIMITS_EVERY;
    const c = await checkRelay(url, { timeout: cfg.monitorTimeout, allowPrivate: cfg.allowPrivate, writeEvent, signal, resolve: deps.resolve, probes: cfg.monitorProbes ? { budget: cfg.monitorProbeBudget, limits: limitsDue } : undefined });
    if (c.probes && !c.probes.limits && lastLimits) c.probes.limits = lastLimits;
    if (signal.aborted) return false;
    if (c.refused) { s.refused++; return true; }
    s.checked++;
    deps.metrics?.checks.inc({ result: c.online ? 'online' : 'offline' });
    if (c.probes) for (const [nip, p] of [['50', c.probes.search], ['45', c.probes.count], ['77', c.probes.negentropy]] as const) if (p) deps.metrics?.probes?.inc({ nip, outcome: p.outcome });
    let published: { id: string; createdAt: number; d: string } | null = null;
    if (c.online) {
      s.online++;
      // a newer check must replace the older 30166: never the same second (the lower id would win)
      const createdAt = Math.max(Math.floor(c.checkedAt / 1000), (prev?.publishedAt ?? 0) + 1);
      const { event, status } = await this.publisher.publish(discoveryEvent(c, createdAt));
      if (status === 'stored' || status === 'duplicate') {
        published = { id: event.id, createdAt, d: discoveryAddress(url) };
        s.published++;
        deps.metrics?.published.inc();
        // the last 30166 had another `d` (the URL before it took RFC 3986's "/"): another address,
        // which the new event does not replace, so it is retracted (once: the record keeps the new d)
        const oldD = prev?.published ? prev.publishedD ?? url : null;
        if (oldD !== null && oldD !== published.d) await this.publisher.publish(retractionEvent({ pubkey: this.pubkey, oldAddress: oldD, id: prev!.published }, createdAt));
      } else if (s.notStored++ === 0) log.warn({ url, status }, 'monitor: our ingest path did not store a 30166 (a policy of this relay refuses it?); counted in the cycle\'s notStored');
    }
    await history.record(c, published);
    this.changes++;
    log.debug({ url, online: c.online, rtt: c.rtt, error: c.error, probes: c.probes && { ms: c.probes.ms, cut: c.probes.cut } }, 'monitor: relay checked');
    return true;
  }

  private async cycle(): Promise<CycleSummary> {
    const { cfg, deps, log } = this;
    const s = emptyCycle();
    this.running = true;
    try {
      if (Date.now() - this.lastAnnounce >= ANNOUNCE_EVERY) { await this.announce(); s.announced = true; }
      s.finder = await this.finder.run({ signal: this.stopCtl.signal });
      if (deps.validate && cfg.validateBatch > 0 && !this.stopCtl.signal.aborted) {
        s.validator = await validateCandidates({
          candidates: this.candidates, directory: this.directory, batch: cfg.validateBatch, concurrency: cfg.monitorConcurrency, timeout: cfg.monitorTimeout,
          maxFailures: cfg.candidateMaxFailures, allowPrivate: cfg.allowPrivate, selfUrls: this.selfUrls, signal: this.stopCtl.signal, log, resolve: deps.resolve,
        });
        this.changes++;
      }
      await this.checkAll(this.monitored(false), s);
      if (!this.stopCtl.signal.aborted) await this.withdrawAliases();
      const d = await this.publisher.flush();
      s.delivered = d.delivered;
      s.deliveryFailures = d.failed;
    } finally {
      this.running = false;
      s.finishedAt = Date.now();
      this.cycles++;
      deps.metrics?.cycles.inc();
      this.lastCycle = s;
    }
    log.info({ ms: s.finishedAt - s.startedAt, checked: s.checked, online: s.online, published: s.published, refused: s.refused, finder: s.finder, validator: s.validator }, 'monitor: cycle finished');
    return s;
  }

  /**
   * A URL found to be an alias of another relay (the spider's aliases) is no longer checked; the
   * 30166 it had as a relay of its own is withdrawn (kind 5), so that one relay is published once.
   */
  private async withdrawAliases(): Promise<void> {
    const { history, log } = this;
    for (const r of this.directory.all()) {
      const last = r.aliasOf !== undefined ? history.latest(r.url) : undefined;
      if (!last?.published) continue;
      // the 30166 it had as a relay of its own, by id and by the d it was published under
      const retraction = retractionEvent({ pubkey: this.pubkey, oldAddress: last.publishedD ?? r.url, id: last.published, reason: `${r.url} reaches the relay published as ${r.aliasOf}` }, Math.floor(Date.now() / 1000));
      const { status } = await this.publisher.publish(retraction);
      if (status === 'stored' || status === 'duplicate') await history.withdrawn(r.url);
      log.info({ url: r.url, relay: r.aliasOf, status }, 'monitor: an alias\'s 30166 withdrawn');
    }
  }

  /** Relays new in the directory get their first check now rather than at the next cycle. */
  private async checkNew(): Promise<void> {
    const urls = this.monitored(true);
    if (urls.length === 0) return;
    const s = emptyCycle();
    await this.checkAll(urls, s);
    await this.publisher.flush();
    this.log.info({ checked: s.checked, online: s.online, published: s.published }, 'monitor: new directory relays checked');
  }

  start(): void {
    const { cfg, deps, log } = this;
    if (this.stopCtl.signal.aborted) this.stopCtl = new AbortController();
    log.info({ pubkey: this.key.pubkey, interval: cfg.monitorInterval, validate: deps.validate, write: cfg.monitorWrite, relays: cfg.monitorRelays }, 'monitor: started');
    this.scheduler.start();
    this.tick = setInterval(() => {
      if (!this.running) this.exclusive(() => this.checkNew()).catch((e) => log.error({ err: e }, 'monitor: checking new relays failed'));
    }, NEW_RELAY_TICK);
    this.tick.unref();
  }

  runOnce(): Promise<CycleSummary> {
    if (this.stopCtl.signal.aborted) this.stopCtl = new AbortController();
    return this.scheduler.runNow<CycleSummary>();
  }

  seen(ev: NostrEvent): void {
    if (!this.unsubscribed) this.finder.see(ev);
  }

  noteCrawl(r: Pick<WorkResult, 'url' | 'startedAt'> & { kinds?: Record<string, number> }): void {
    if (!r.kinds) return;
    this.history.noteCrawl(r.url, r.kinds, r.startedAt).then(() => { this.changes++; }, (e) => this.log.warn({ err: e, url: r.url }, 'monitor: could not keep a crawl\'s counts'));
  }

  status(): MonitorStatus {
    const { key, cycles } = this;
    return {
      pubkey: key.pubkey, npub: npubEncode(key.pubkey), keySource: key.source, running: this.running, cycles, lastCycle: this.lastCycle,
      nextCycle: this.scheduler.nextRun(), candidates: safe(() => this.candidates.count()), checked: safe(() => this.history.checkedCount()),
      stamp: `${cycles}:${this.changes}`,
    };
  }

  async stop(): Promise<void> {
    this.unsubscribed = true;
    this.stopCtl.abort();
    if (this.tick) { clearInterval(this.tick); this.tick = null; }
    await this.scheduler.stop();
    await this.busy;
    await this.publisher.close();
  }
}

function safe(fn: () => number): number {
  try { return fn(); } catch { return 0; }
}
