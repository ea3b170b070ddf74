// `orbweaver spider [--once] [--json] [--relay URL | --local]`: one crawl (or a crawl every interval)
// for the configured data directory. The data directory is the identity: when a relay owns it
// (its record in the directory, src/app/owner.ts), fetched events are published to that relay
// over NIP-01 EVENT so they take its ingest path and reach its live subscribers; when none does,
// the store is opened here and the in-process ingest path is used. Whatever answers at host:port
// is not asked: it may be another relay, with another data directory.
import { loggerFor, type Logger } from '../relay/logger.js';
import type { Config } from '../config/schema.js';
import { openPipeline, type Pipeline } from '../app/pipeline.js';
import { checkDataDir } from '../app/data-dir.js';
import { commandTarget, liveOwner, notAnswering, reachableUrl } from '../app/owner.js';
import { openStore } from '../store/index.js';
import type { EventStore } from '../store/types.js';
import { createSpider } from './spider.js';
import { ingestSink, type EventSink } from './sink.js';
import { homeSink } from './deliver.js';
import { parseSecretKey } from '../nostr/keys.js';
import { formatSummary } from './status.js';
import { unknownOption } from '../config/suggest.js';

export const SPIDER_USAGE = `usage: orbweaver spider [--once] [--json] [--relay ws://host:port | --local] [--data dir]

  --once           one crawl, print its summary, exit (0: finished, 1: no relay found or none
                   reached, 2: configuration or other error)
  --json           print the summary as JSON
  --relay <url>    publish fetched events to this relay
  --local          do not publish to a running relay: open the store and ingest in this process
By default the events go to the relay that owns the data directory (it records its URL there while
it runs); when no relay owns it, the store is opened in this process.
Without --once the spider runs at once and then every spider.interval until SIGINT/SIGTERM.
Settings: spider.* in relay.config.json or ORBWEAVER_SPIDER_* (see \`orbweaver config --env\`).`;

const OPTIONS = ['--once', '--json', '--relay', '--local'];

/** ws://host:port of our relay as configured (a wildcard listen address is reached on loopback). */
export function localRelayUrl(config: Config): string {
  return reachableUrl(config.host, config.port);
}

/** Why a spider with this configuration has nothing to crawl, or null. */
export function nothingToCrawl(c: Config['spider']): string | null {
  if (c.seeds.length === 0 && c.admins.length === 0) {
    return 'the spider has nothing to crawl: set spider.seeds (ORBWEAVER_SPIDER_SEEDS) or spider.admins (ORBWEAVER_SPIDER_ADMINS) to pubkeys whose relay lists (kind 10002) start the crawl';
  }
  return null;
}

/** Where fetched events go: a relay over NIP-01 (sink and its URL), the in-process ingest path (null), or why neither. */
async function chooseSink(config: Config, logger: Logger, relayUrl: string | undefined, local: boolean): Promise<{ sink: EventSink; url: string } | null | string> {
  const target = commandTarget(config.dataDir, relayUrl, local);
  if (!target) {
    const owner = local ? liveOwner(config.dataDir) : null;
    if (owner) logger.warn({ dataDir: config.dataDir, relay: owner.url, pid: owner.pid }, 'spider: --local while a relay owns the data directory: its live subscribers will not see these events');
    else logger.info({ dataDir: config.dataDir }, 'spider: no relay owns the data directory; ingesting in this process');
    return null;
  }
  // The same delivery as a worker's: every event is retried until the relay decides on it, and
  // with spider.workerKey set it authenticates first (NIP-42).
  const home = homeSink({
    url: target.url, authUrl: config.publicUrl || undefined,
    secretKey: config.spider.workerKey ? parseSecretKey(config.spider.workerKey) : undefined,
    connectTimeout: Math.min(config.spider.connectTimeout, 3000), okTimeout: 30_000, window: 200,
    deliveryTimeout: config.spider.deliveryTimeout, log: logger,
  });
  try {
    await home.ready();
  } catch (e) {
    await home.close();
    return notAnswering(target, config.dataDir, e as Error);
  }
  logger.info({ relay: target.url, dataDir: config.dataDir, pid: target.owner?.pid }, target.owner ? 'spider: publishing to the relay that owns the data directory' : 'spider: publishing to the relay given with --relay');
  return { sink: home, url: target.url };
}

export async function spiderCommand(config: Config, argv: string[], out: NodeJS.WritableStream = process.stdout): Promise<number> {
  let once = false, json = false, local = false;
  let relayUrl: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--once') once = true;
    else if (a === '--json') json = true;
    else if (a === '--local') local = true;
    else if (a === '--relay') {
      relayUrl = argv[++i];
      if (!relayUrl) { process.stderr.write('orbweaver spider: --relay needs a ws:// or wss:// URL\n'); return 2; }
    }
    else if (a.startsWith('--relay=')) relayUrl = a.slice(8);
    else if (a === '--help' || a === '-h') { out.write(SPIDER_USAGE + '\n'); return 0; }
    else { process.stderr.write(`orbweaver: ${unknownOption(a, OPTIONS, 'spider')}\n`); return 2; }
  }
  const logger = loggerFor(config);
  const problem = nothingToCrawl(config.spider);
  if (problem) {
    logger.warn(problem);
    logger.flush();
    return 2;
  }
  const chosen = await chooseSink(config, logger, relayUrl, local);
  if (typeof chosen === 'string') {
    logger.error(`spider: ${chosen}`);
    logger.flush();
    return 2;
  }
  let sink: EventSink;
  let store: EventStore;
  let pipeline: Pipeline | undefined;
  if (!chosen) {
    // the relay's own pipeline (policies, ingest), so a standalone run meets the same rules as the relay
    pipeline = await openPipeline(config, logger, { verifyThreads: 0 });
    store = pipeline.store;
    sink = ingestSink(pipeline.ingest);
  } else {
    // the spider's own records (directory, cursors) live beside the events of the relay's store
    sink = chosen.sink;
    try {
      checkDataDir(config.dataDir, 'create');
      store = await openStore({ dir: config.dataDir, mapSize: config.store.mapSize, maxBatch: config.store.maxBatch, queryYieldEvery: config.store.queryYieldEvery, logger });
    } catch (e) {
      await sink.close();
      throw e;
    }
  }
  const spider = createSpider({
    config: config.spider, store, sink, logger,
    selfPubkey: config.info.pubkey || undefined,
    selfUrls: [localRelayUrl(config), ...(chosen ? [chosen.url] : []), ...(config.publicUrl ? [config.publicUrl] : [])],
  });
  let code = 0;
  try {
    if (once) {
      const summary = await spider.runOnce();
      out.write((json ? JSON.stringify(summary, null, 2) : formatSummary(summary)) + '\n');
      if (summary.relays.total === 0) {
        logger.warn({ seeds: summary.seeds, withoutList: summary.seedsWithoutList }, 'spider: no relay to crawl: no relay list (kind 10002) of the seeds was found in the store or on spider.bootstrapRelays');
        code = 1;
      } else if (summary.relays.reached === 0) code = 1;
    } else {
      // runs at once, then every interval; the scheduler's timer keeps the process alive between runs
      spider.start();
      await new Promise<void>((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      });
      logger.info('spider: stopping');
    }
  } catch (e) {
    logger.error({ err: e }, 'spider: run failed');
    code = 2;
  } finally {
    await spider.stop();
    await sink.close();
    if (pipeline) await pipeline.close();
    else await store.close();
    logger.flush();
  }
  return code;
}
