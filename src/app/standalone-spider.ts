// The spider outside the relay process (`orbweaver spider`): the command sink (app/command-sink.ts
// decides whether events go to the relay that owns the data directory or into the store here), the
// spider over it and, with spider.monitor, the monitor beside it. Wired here, as app.ts wires them
// inside the relay, so the command itself only reads its flags and prints.
import type { Config } from '../config/schema.js';
import type { Logger } from '../lib/logger.js';
import { localRelayUrl, openCommandSink } from './command-sink.js';
import { heapLimitMb, oldSpaceMb } from './heap-limit.js';
import { createSpider, type Spider } from '../spider/spider.js';
import { createMonitor, type Monitor } from '../monitor/monitor.js';
import { forwardedRecords } from './forwarded-records.js';
import { scratchEnv, type ScratchEnv } from '../spider/queue/scratch.js';
import { AuthorBook } from '../spider/fetch/authors.js';
import { ownSelfKey } from '../relay/nip11.js';

/** Why a spider with this configuration has nothing to crawl, or null. */
export function nothingToCrawl(c: Config['spider']): string | null {
  if (c.seeds.length === 0 && c.admins.length === 0) {
    return 'the spider has nothing to crawl: set spider.seeds (ORBWEAVER_SPIDER_SEEDS) or spider.admins (ORBWEAVER_SPIDER_ADMINS) to pubkeys whose relay lists (kind 10002) start the crawl';
  }
  return null;
}

export interface StandaloneSpider {
  spider: Spider;
  monitor?: Monitor;
  /** Stops the spider and the monitor, then closes the sink and the store. */
  close(): Promise<void>;
}

/** Throws SinkError (command-sink.ts) when the relay the events should go to does not answer. */
export async function openStandaloneSpider(config: Config, logger: Logger, o: { relayUrl?: string; local: boolean; once: boolean }): Promise<StandaloneSpider> {
  // The spider's own records (directory, cursors, runs, the monitor's) live beside the events of the
  // relay's store: written here, or through the relay that owns the data directory (one writing process).
  const opened = await openCommandSink(config, logger, { relayUrl: o.relayUrl, local: o.local, writable: true, label: 'spider' });
  const { sink, store } = opened;
  const records = opened.records ? forwardedRecords(store.env, config.spider.monitorRetention, opened.records) : undefined;
  // known authors are hints the spider writes constantly: where the store is read-only, a scratch environment (as a worker's)
  let scratch: ScratchEnv | undefined;
  try {
    if (records) scratch = await scratchEnv('orbweaver-spider-');
  } catch (e) {
    await opened.close();
    throw e;
  }
  const closeAll = async () => { await opened.close(); await scratch?.close(); };
  logger.info({ oldSpaceMb: oldSpaceMb(), heapLimitMb: heapLimitMb(), pid: process.pid, via: opened.relayUrl ?? 'this process' }, 'spider started');
  const selfUrls = [localRelayUrl(config), ...(opened.relayUrl ? [opened.relayUrl] : []), ...(config.publicUrl ? [config.publicUrl] : [])];
  // With the monitor on, the crawl is followed by a monitor cycle over the directory (its events go
  // the same way as the crawl's). A one-shot run does not validate candidates: those may lie beyond
  // the spider's hops; the relay's (or `orbweaver spider`'s) long-running monitor validates them.
  let monitor: Monitor | undefined;
  let unfeed = () => {};
  try {
    if (config.spider.monitor) monitor = createMonitor({ config, store, put: (ev) => sink.put(ev), logger, validate: !o.once, selfUrls, records });
  } catch (e) {
    await closeAll();
    throw e;
  }
  if (monitor && opened.pipeline) { const m = monitor; unfeed = opened.pipeline.onStored((ev) => m.seen(ev)); }
  const spider = createSpider({
    config: config.spider, store, sink, logger,
    selfPubkey: ownSelfKey(config.info),
    selfUrls,
    onRelayResult: monitor ? (r) => monitor!.noteCrawl(r) : undefined,
    storeIsHome: opened.storeIsHome,
    runBy: o.once ? 'orbweaver spider --once' : 'orbweaver spider',
    records, authors: scratch ? new AuthorBook(scratch.env, undefined, true) : undefined,
  });
  return {
    spider, monitor,
    async close() {
      unfeed();
      await spider.stop();
      await monitor?.stop();
      await closeAll();
    },
  };
}
