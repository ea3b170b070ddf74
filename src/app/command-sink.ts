// Where a command's events go (`spider --once`, `sync`): through the one ingest path either way.
// When our relay is running on this data directory (it answers at ws://host:port from config, or
// at the URL given), events are published to it over NIP-01 EVENT so they take its ingest path and
// reach its live subscribers, and the store is opened beside it for reading; otherwise the store is
// opened here with the relay's own pipeline (policies, verifier, ingest).
import type { Config } from '../config/schema.js';
import type { Logger } from '../relay/logger.js';
import { openStore } from '../store/index.js';
import type { EventStore } from '../store/types.js';
import { openPipeline, type Pipeline } from './pipeline.js';
import { homeSink } from '../spider/deliver.js';
import { ingestSink, type EventSink } from '../spider/sink.js';
import { parseSecretKey } from '../nostr/keys.js';

/** ws://host:port of our relay as configured (a wildcard listen address is reached on loopback). */
export function localRelayUrl(config: Config): string {
  let host = config.host;
  if (host === '0.0.0.0' || host === '') host = '127.0.0.1';
  if (host === '::') host = '::1';
  if (host.includes(':')) host = `[${host}]`;
  return `ws://${host}:${config.port}`;
}

export interface CommandSink {
  sink: EventSink;
  /** the data directory's store: read-only beside a running relay unless `writable` was asked */
  store: EventStore;
  /** set when the events are ingested in this process */
  pipeline?: Pipeline;
  /** the relay the events are published to, when one answered */
  relayUrl?: string;
  close(): Promise<void>;
}

export interface CommandSinkOptions {
  /** publish to this relay (it must answer); default: our relay at host:port, when it answers */
  relayUrl?: string;
  /** do not look for a running relay: ingest in this process */
  local?: boolean;
  /** beside a running relay the store is opened read-only unless the command writes its own records */
  writable?: boolean;
  /** the label of log lines ("spider", "sync") */
  label: string;
}

export class SinkError extends Error {}

export async function openCommandSink(config: Config, logger: Logger, o: CommandSinkOptions): Promise<CommandSink> {
  const target = o.relayUrl ?? localRelayUrl(config);
  if (!o.local) {
    // The same delivery as a spider worker's: every event is retried until the relay decides on it,
    // and with spider.workerKey set it authenticates first (NIP-42).
    const home = homeSink({
      url: target, authUrl: config.publicUrl || undefined,
      secretKey: config.spider.workerKey ? parseSecretKey(config.spider.workerKey) : undefined,
      connectTimeout: Math.min(config.spider.connectTimeout, 3000), okTimeout: 30_000, window: 200,
      deliveryTimeout: config.spider.deliveryTimeout, log: logger,
    });
    try {
      await home.ready();
      logger.info({ relay: target }, `${o.label}: publishing to the running relay`);
      const store = await openStore({ dir: config.dataDir, mapSize: config.store.mapSize, maxBatch: config.store.maxBatch, queryYieldEvery: config.store.queryYieldEvery, logger, readOnly: !o.writable });
      return { sink: home, store, relayUrl: target, close: async () => { await home.close(); await store.close(); } };
    } catch (e) {
      await home.close();
      if (o.relayUrl) throw new SinkError(`the relay given with --relay (${o.relayUrl}) does not answer: ${(e as Error).message}`);
      logger.info({ relay: target }, `${o.label}: no relay answers; ingesting in this process`);
    }
  }
  // the relay's own pipeline (policies, ingest), so a standalone run meets the same rules as the relay
  const pipeline = await openPipeline(config, logger, { verifyThreads: 0 });
  return { sink: ingestSink(pipeline.ingest), store: pipeline.store, pipeline, close: () => pipeline.close() };
}
