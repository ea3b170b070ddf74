// The composition root of `orbweaver relay`: opens the pipeline (store, verifier, policies, ingest),
// starts the relay on it and, when enabled, the directory spider and the NIP-66 monitor beside it.
// The relay knows neither of the others and the spider never calls the monitor (the monitor reads the
// spider's directory records): all get the pipeline, and this file connects them — the spider's
// per-relay results to the monitor, their status and controls to the relay's status page,
// /directory, /metrics and NIP-86. The running relay records its URL and
// pid in its data directory (owner.ts), so commands given that directory find it.
import type { Config } from '../config.js';
import type { Logger } from '../lib/logger.js';
import { Registry, relayMetrics } from '../relay/metrics.js';
import { startRelay, type RelayHandle } from '../relay/server.js';
import { SPIDER_HINT, spiderOffSection, spiderSection } from './spider-section.js';
import { SpiderRuns } from '../directory/runs.js';
import { monitorMetrics, mountDirectory } from './directory-pages.js';
import { createMonitor, type Monitor } from '../monitor/monitor.js';
import { RelayDirectory } from '../directory/records.js';
import { createSpider, type Spider } from '../spider/spider.js';
import { nothingToCrawl } from './standalone-spider.js';
import { openPipeline, type Pipeline } from './pipeline.js';
import { Access } from '../relay/policy/access.js';
import { listenHosts } from '../relay/auth/own-urls.js';
import { DataDirError } from './data-dir.js';
import { localKey } from './local-key.js';
import { RecordApplier } from './record-ops.js';
import { clearOwner, describeOwner, liveOwner, reachableUrl, recordOwner } from './owner.js';
import { VERSION } from '../relay/version.js';
import { createTrust, type Trust } from '../trust/trust.js';
import { mountPeople, trustSection } from './trust-section.js';
import { nip85Info } from '../trust/nip85.js';
import { trustRoots } from '../trust/roots.js';
import { searchInfo, searchTrust } from './search-trust.js';
import { createLive, type Live } from '../spider/live/index.js';
import { ingestSink } from '../ingest/sink.js';
import { liveMetricsText, liveSection } from './live-section.js';
import { trustWeight } from './live-weight.js';
import { startLookup } from './lookup-section.js';
import type { Lookup } from '../spider/lookup/index.js';
import { ownSelfKey } from '../relay/nip11.js';

export interface AppHandle {
  pipeline: Pipeline;
  relay: RelayHandle;
  spider?: Spider;
  live?: Live;
  monitor?: Monitor;
  trust?: Trust;
  lookup?: Lookup;
  /** relay stops accepting, spider and monitor stop, queued writes are flushed, the store closes */
  close(): Promise<void>;
}

export async function startApp(config: Config, logger: Logger): Promise<AppHandle> {
  const nothing = config.spider.enabled ? nothingToCrawl(config.spider) : null;
  if (nothing) logger.warn(`spider: enabled, but ${nothing.replace(/^the spider /, 'it ')}`);
  const { pipeline, relay } = await openRelay(config, logger);
  const port = relay.port;
  const selfUrls = [`ws://${config.host}:${port}`, `ws://127.0.0.1:${port}`, `ws://localhost:${port}`, ...(config.publicUrl ? [config.publicUrl] : [])];
  const { monitor, unfeed } = await startMonitor(config, logger, pipeline, relay, selfUrls);
  const { spider, live } = startSpider(config, logger, pipeline, relay, { selfUrls, monitor, nothing });
  monitor?.start();
  // Lookup on a miss: REQs for lists the store lacks ask the network (on with the spider, or alone)
  const lookup = startLookup(config, logger, pipeline, relay, { directory: spider?.directory, live, selfUrls });
  const { trust, unfeedTrust } = startTrust(config, logger, pipeline, relay);

  let closed: Promise<void> | null = null;
  return {
    pipeline,
    relay,
    spider,
    live,
    monitor,
    trust,
    lookup,
    close() {
      closed ??= (async () => {
        await relay.close();
        await lookup?.stop();
        unfeed();
        unfeedTrust();
        await trust?.stop();
        await live?.stop();
        await spider?.stop();
        await monitor?.stop();
        await pipeline.close();
        clearOwner(config.dataDir);
      })();
      return closed;
    },
  };
}

/** The pipeline and the relay on it, once no other relay holds the data directory; the directory records its owner. */
async function openRelay(config: Config, logger: Logger): Promise<{ pipeline: Pipeline; relay: RelayHandle }> {
  const owner = liveOwner(config.dataDir);
  if (owner) throw new DataDirError(`data directory ${config.dataDir} is in use by ${describeOwner(owner)}: one relay per data directory; stop it first or choose another directory`);
  const registry = new Registry();
  const metrics = relayMetrics(registry);
  const pipeline = await openPipeline(config, logger, { metrics });
  // what is per connection (AUTH, rate limits, budgets, read rules) over the write rules' lists
  const access = new Access(config, pipeline.verifier, pipeline.lists);
  access.install(pipeline.policies);
  // local commands (spider --once, sync) authenticate with it and are not held to the per-IP limits
  const local = localKey(config.dataDir).pubkey;
  access.workers.trust(local);
  try {
    // recorded before the relay says it listens, so whoever waits for that line finds the record
    const onListen = (port: number) => {
      // requests to vanish may name the relay by the address it listens on (policy/vanish.ts)
      pipeline.relayNames.add(listenHosts(config.host, port).map((h) => `ws://${h}`));
      const url = reachableUrl(config.host, port);
      recordOwner(config.dataDir, { pid: process.pid, url, httpUrl: url.replace(/^ws/, 'http'), startedAt: new Date().toISOString(), version: VERSION, script: process.argv[1] ?? '' });
    };
    // a spider beside us (`spider --once`) writes its directory records through us: one writing process
    const applier = new RecordApplier(pipeline.store.env, config.spider.monitorRetention);
    const records = { writer: local, apply: (reqId: string, op: string, args: unknown[]) => applier.applyOnce(reqId, op, args) };
    return { pipeline, relay: await startRelay(config, logger, { pipeline: { ...pipeline, access }, registry, metrics, onListen, records }) };
  } catch (e) {
    await pipeline.close();
    clearOwner(config.dataDir);
    throw e;
  }
}

/**
 * The NIP-66 monitor publishes through the same ingest path as clients (its 30166 are REQ-able
 * here) and reads what the ingest path stores for relay candidates (the finder's live feed).
 * Not started yet: the caller starts it once the spider is wired to it.
 */
async function startMonitor(config: Config, logger: Logger, pipeline: Pipeline, relay: RelayHandle, selfUrls: string[]): Promise<{ monitor: Monitor | undefined; unfeed: () => void }> {
  if (!config.spider.monitor) return { monitor: undefined, unfeed: () => {} };
  try {
    const metrics = monitorMetrics(relay.registry, () => m.status());
    const m: Monitor = createMonitor({ config, store: pipeline.store, put: async (ev) => (await pipeline.ingest(ev, { source: 'monitor' })).status, logger, validate: true, selfUrls, metrics });
    // NIP-66 is among the NIPs its text marks `relay` (nostr-protocol/nips f5a15ea): a relay that
    // runs a monitor publishes and serves its events, so NIP-11 lists it
    relay.addInfo(() => ({ nips: [66] }));
    return { monitor: m, unfeed: pipeline.onStored((ev) => m.seen(ev)) };
  } catch (e) {
    await relay.close();
    await pipeline.close();
    clearOwner(config.dataDir);
    throw e;
  }
}

/** The spider and live mode, started, with their pages, status, metrics and NIP-86 controls on the relay; with the spider off, the directory it left. */
function startSpider(config: Config, logger: Logger, pipeline: Pipeline, relay: RelayHandle, o: { selfUrls: string[]; monitor: Monitor | undefined; nothing: string | null }): { spider?: Spider; live?: Live } {
  const { selfUrls, monitor } = o;
  if (!config.spider.enabled) {
    // the spider is off here, but `spider --once` (or the monitor's validator) may have filled the directory: show what it knows
    const runs = new SpiderRuns(pipeline.store.env);
    const source = mountDirectory(relay, { config, directory: new RelayDirectory(pipeline.store.env), monitor, runs, emptyHint: `The spider is off: ${SPIDER_HINT}.` });
    relay.addStatusSection(() => spiderOffSection(source.cached(), runs));
    return {};
  }
  // The spider writes through the same ingest path as clients, so its events reach live subscribers.
  const s = createSpider({ config: config.spider, store: pipeline.store, ingest: pipeline.ingest, logger, selfPubkey: ownSelfKey(config.info), selfUrls, onRelayResult: monitor ? (r) => monitor.noteCrawl(r) : undefined });
  // Live mode: subscriptions on the most valuable relays, through the same ingest path (a sink of
  // its own: the ingest path checks every event it is handed). A new choice after each run.
  let live: Live | undefined;
  if (config.spider.live.enabled && config.spider.live.maxRelays > 0) {
    live = createLive({ config: config.spider, store: pipeline.store, sink: ingestSink(pipeline.ingest), directory: s.directory, log: logger, selfUrls, runs: () => s.status().runs, weight: trustWeight(pipeline.store.ranks) });
  }
  const l = live;
  const source = mountDirectory(relay, { config, directory: s.directory, spiderStatus: () => s.status(), monitor, runs: s.runs, live: l ? () => l.status() : undefined });
  if (l) {
    relay.addStatusSection(() => liveSection(l.status()));
    relay.addMetricsText(() => liveMetricsText(l.status()));
  }
  relay.addStatusSection(() => spiderSection(s.status(), source.cached(), o.nothing, s.runs));
  relay.addMetricsText(() => s.metricsText());
  relay.setSpiderControl({
    trigger: () => {
      const running = s.status().running;
      if (!running) s.runOnce().catch((e) => logger.error({ err: e }, 'spider run failed'));
      return { started: !running, running: true };
    },
    status: () => s.status(),
  });
  s.start();
  live?.start();
  return { spider: s, live };
}

/**
 * Trust ranking reads the follow and mute lists the ingest path stores (from clients and the
 * spider alike) and publishes its NIP-85 assertions through that same path.
 */
function startTrust(config: Config, logger: Logger, pipeline: Pipeline, relay: RelayHandle): { trust?: Trust; unfeedTrust: () => void } {
  if (!config.trust.enabled) return { unfeedTrust: () => {} };
  const t = createTrust({ config, store: pipeline.store, put: async (ev) => (await pipeline.ingest(ev, { source: 'trust' })).status, logger });
  const unfeedTrust = pipeline.onStored((ev) => t.seen(ev));
  relay.addStatusSection(() => trustSection(t.status()));
  relay.addMetricsText(() => t.metricsText());
  mountPeople(relay, t, config.info.name);
  const svc = t.servicePubkey;
  if (svc) relay.addInfo(() => ({ nips: [85], fields: { nip85: nip85Info(svc, t.status().last?.mode ?? (trustRoots(config).length > 0 ? 'rooted' : 'global'), config) } }));
  if (config.search.kinds.length > 0) relay.addInfo(() => ({ fields: { nip50: searchInfo(config) } }));
  if (config.trust.observer || config.trust.observerAuth) relay.setSearchTrust(searchTrust(t, config.trust));
  t.start();
  return { trust: t, unfeedTrust };
}
