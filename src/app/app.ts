// The composition root of `orbweaver relay`: opens the pipeline (store, verifier, policies, ingest),
// starts the relay on it and, when enabled, the directory spider beside it. The relay and the spider
// do not know each other: both get the pipeline, and this file connects the spider's status and
// controls to the relay's status page, /metrics and NIP-86. The running relay records its URL and
// pid in its data directory (owner.ts), so commands given that directory find it.
import type { Config } from '../config.js';
import type { Logger } from '../relay/logger.js';
import { Registry, relayMetrics } from '../relay/metrics.js';
import { startRelay, type RelayHandle } from '../relay/server.js';
import { directorySource, spiderSection } from './spider-section.js';
import { RelayDirectory } from '../spider/directory.js';
import { createSpider, type Spider } from '../spider/spider.js';
import { nothingToCrawl } from '../spider/cli.js';
import { openPipeline, type Pipeline } from './pipeline.js';
import { DataDirError } from './data-dir.js';
import { clearOwner, describeOwner, liveOwner, reachableUrl, recordOwner } from './owner.js';
import { VERSION } from '../relay/version.js';

export interface AppHandle {
  pipeline: Pipeline;
  relay: RelayHandle;
  spider?: Spider;
  /** relay stops accepting, spider stops, queued writes are flushed, the store closes */
  close(): Promise<void>;
}

export async function startApp(config: Config, logger: Logger): Promise<AppHandle> {
  const nothing = config.spider.enabled ? nothingToCrawl(config.spider) : null;
  if (nothing) logger.warn(`spider: enabled, but ${nothing.replace(/^the spider /, 'it ')}`);
  const owner = liveOwner(config.dataDir);
  if (owner) throw new DataDirError(`data directory ${config.dataDir} is in use by ${describeOwner(owner)}: one relay per data directory; stop it first or choose another directory`);
  const registry = new Registry();
  const metrics = relayMetrics(registry);
  const pipeline = await openPipeline(config, logger, { metrics });
  let relay: RelayHandle;
  try {
    // recorded before the relay says it listens, so whoever waits for that line finds the record
    const onListen = (port: number) => {
      const url = reachableUrl(config.host, port);
      recordOwner(config.dataDir, { pid: process.pid, url, httpUrl: url.replace(/^ws/, 'http'), startedAt: new Date().toISOString(), version: VERSION, script: process.argv[1] ?? '' });
    };
    relay = await startRelay(config, logger, { pipeline, registry, metrics, onListen });
  } catch (e) {
    await pipeline.close();
    clearOwner(config.dataDir);
    throw e;
  }

  let spider: Spider | undefined;
  if (config.spider.enabled) {
    // The spider writes through the same ingest path as clients, so its events reach live subscribers.
    const port = relay.port;
    const selfUrls = [`ws://${config.host}:${port}`, `ws://127.0.0.1:${port}`, `ws://localhost:${port}`, ...(config.publicUrl ? [config.publicUrl] : [])];
    const s = createSpider({ config: config.spider, store: pipeline.store, ingest: pipeline.ingest, logger, selfPubkey: config.info.pubkey || undefined, selfUrls });
    spider = s;
    const source = directorySource(s.directory, config, () => s.status());
    relay.setStatusDirectory(source);
    relay.addStatusSection(() => spiderSection(s.status(), source.cached(), nothing));
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
  } else {
    // the spider is off here, but `spider --once` may have filled the directory: show what it knows
    relay.setStatusDirectory(directorySource(new RelayDirectory(pipeline.store.env), config));
  }

  let closed: Promise<void> | null = null;
  return {
    pipeline,
    relay,
    spider,
    close() {
      closed ??= (async () => {
        await relay.close();
        await spider?.stop();
        await pipeline.close();
        clearOwner(config.dataDir);
      })();
      return closed;
    },
  };
}
