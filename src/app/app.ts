// The composition root of `orbweaver relay`: opens the pipeline (store, verifier, policies, ingest),
// starts the relay on it and, when enabled, the directory spider beside it. The relay and the spider
// do not know each other: both get the pipeline, and this file connects the spider's status and
// controls to the relay's status page, /metrics and NIP-86.
import type { Config } from '../config.js';
import type { Logger } from '../relay/logger.js';
import { Registry, relayMetrics } from '../relay/metrics.js';
import { startRelay, type RelayHandle } from '../relay/server.js';
import { spiderSection } from './spider-section.js';
import { createSpider, type Spider } from '../spider/spider.js';
import { openPipeline, type Pipeline } from './pipeline.js';

export interface AppHandle {
  pipeline: Pipeline;
  relay: RelayHandle;
  spider?: Spider;
  /** relay stops accepting, spider stops, queued writes are flushed, the store closes */
  close(): Promise<void>;
}

export async function startApp(config: Config, logger: Logger): Promise<AppHandle> {
  const registry = new Registry();
  const metrics = relayMetrics(registry);
  const pipeline = await openPipeline(config, logger, { metrics });
  let relay: RelayHandle;
  try {
    relay = await startRelay(config, logger, { pipeline, registry, metrics });
  } catch (e) {
    await pipeline.close();
    throw e;
  }

  let spider: Spider | undefined;
  if (config.spider.enabled) {
    // The spider writes through the same ingest path as clients, so its events reach live subscribers.
    const port = relay.port;
    const selfUrls = [`ws://${config.host}:${port}`, `ws://127.0.0.1:${port}`, `ws://localhost:${port}`, ...(config.publicUrl ? [config.publicUrl] : [])];
    const s = createSpider({ config: config.spider, store: pipeline.store, ingest: pipeline.ingest, logger, selfPubkey: config.info.pubkey || undefined, selfUrls });
    spider = s;
    relay.addStatusSection(() => spiderSection(s.status()));
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
      })();
      return closed;
    },
  };
}
