// Where a command's events go (`spider --once`, `sync`): through the one ingest path either way.
// The data directory is the identity (owner.ts): when a relay owns it (or --relay names one), events
// are published to that relay over NIP-01 EVENT so they take its ingest path and reach its live
// subscribers, and the store is opened beside it; otherwise the store is opened here with the
// relay's own pipeline (policies, verifier, ingest). Whatever answers at host:port is never used.
import { storeSearchOptions } from '../config/search.js';
import { storeMapOptions } from '../config/relay.js';
import type { Config } from '../config/schema.js';
import type { Logger } from '../lib/logger.js';
import { openStore } from '../store/index.js';
import type { EventStore } from '../store/types.js';
import { openPipeline, type Pipeline } from './pipeline.js';
import { checkDataDir } from './data-dir.js';
import { commandTarget, liveOwner, notAnswering, reachableUrl } from './owner.js';
import { homeSink } from '../remote/deliver.js';
import { ingestSink, type EventSink } from '../ingest/sink.js';
import { parseSecretKey } from '../nostr/keys.js';
import { readLocalKey } from './local-key.js';
import type { RecordCall } from './record-ops.js';

/** ws://host:port of our relay as configured (a wildcard listen address is reached on loopback). */
export function localRelayUrl(config: Config): string {
  return reachableUrl(config.host, config.port);
}

export interface CommandSink {
  sink: EventSink;
  /** the data directory's store: read-only beside the relay that owns it (and beside --relay unless `writable` was asked) */
  store: EventStore;
  /** beside the relay that owns the data directory: writes the directory's records through it */
  records?: RecordCall;
  /** set when the events are ingested in this process */
  pipeline?: Pipeline;
  /** the relay the events are published to */
  relayUrl?: string;
  /** the events end up in `store` (ingested here, or published to the relay that owns the data directory) */
  storeIsHome: boolean;
  close(): Promise<void>;
}

export interface CommandSinkOptions {
  /** publish to this relay (it must answer); default: the relay that owns the data directory */
  relayUrl?: string;
  /** ingest in this process even when a relay owns the data directory */
  local?: boolean;
  /** with --relay (another relay) the store is opened read-only unless the command writes its own records */
  writable?: boolean;
  /** the label of log lines ("spider", "sync") */
  label: string;
}

/** The chosen relay does not answer: the message names it and the fix. */
export class SinkError extends Error {}

export async function openCommandSink(config: Config, logger: Logger, o: CommandSinkOptions): Promise<CommandSink> {
  const target = commandTarget(config.dataDir, o.relayUrl, o.local);
  if (target) {
    // The same delivery as a spider worker's: every event is retried until the relay decides on it,
    // and it authenticates first (NIP-42) with spider.workerKey, or else with the data directory's
    // local key, which the relay that owns the directory trusts (local-key.ts).
    const secretKey = config.spider.workerKey ? parseSecretKey(config.spider.workerKey) : target.owner ? readLocalKey(config.dataDir) ?? undefined : undefined;
    const home = homeSink({
      url: target.url, authUrl: config.publicUrl || undefined, secretKey,
      connectTimeout: Math.min(config.spider.connectTimeout, 3000), okTimeout: 30_000, window: 200,
      deliveryTimeout: config.spider.deliveryTimeout, log: logger,
    });
    try {
      await home.ready();
    } catch (e) {
      await home.close();
      throw new SinkError(notAnswering(target, config.dataDir, e as Error));
    }
    logger.info({ relay: target.url, dataDir: config.dataDir, pid: target.owner?.pid }, target.owner ? `${o.label}: publishing to the relay that owns the data directory` : `${o.label}: publishing to the relay given with --relay`);
    try {
      checkDataDir(config.dataDir, 'create');
      const owned = target.owner !== null;
      const store = await openStore({ ...storeMapOptions(config), maxBatch: config.store.maxBatch, maxBatchMs: config.store.maxBatchTime, search: storeSearchOptions(config), logger, readOnly: owned || !o.writable });
      return {
        sink: home, store, relayUrl: target.url, storeIsHome: owned, records: owned ? (op, args) => home.record(op, args) : undefined,
        close: async () => { await home.close(); await store.close(); },
      };
    } catch (e) {
      await home.close();
      throw e;
    }
  }
  const owner = o.local ? liveOwner(config.dataDir) : null;
  if (owner) logger.warn({ dataDir: config.dataDir, relay: owner.url, pid: owner.pid }, `${o.label}: --local while a relay owns the data directory: its live subscribers will not see these events`);
  else logger.info({ dataDir: config.dataDir }, `${o.label}: no relay owns the data directory; ingesting in this process`);
  // the relay's own pipeline (policies, ingest), so a standalone run meets the same rules as the relay
  const pipeline = await openPipeline(config, logger, { verifyThreads: 0 });
  return { sink: ingestSink(pipeline.ingest), store: pipeline.store, pipeline, storeIsHome: true, close: () => pipeline.close() };
}
