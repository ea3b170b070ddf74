// What the message handlers share: config, store, the ingest path, the live index and metrics.
import type { Config } from '../config.js';
import type { EventStore } from '../store/types.js';
import type { Ingest } from '../ingest/types.js';
import type { LiveIndex } from './live-index.js';
import type { Connection } from './connection.js';
import type { RelayMetrics } from './metrics.js';
import type { Policies } from '../ingest/hooks.js';
import type { Logger } from '../lib/logger.js';
import type { Access } from './policy/access.js';
import type { QueryRunner } from './query-pool.js';
import type { MissLookup } from './lookup.js';
import type { RecordService } from './handlers/record.js';
import type { Filter } from '../nostr/filter.js';

export interface RelayContext {
  config: Config;
  store: EventStore;
  /** REQ/COUNT scans: the store itself (queryThreads = 0) or the query worker pool (query-pool.ts) */
  queries: QueryRunner;
  ingest: Ingest;
  live: LiveIndex<Connection>;
  policies: Policies;
  metrics: RelayMetrics;
  logger: Logger;
  /** auth, rate limits, read access, query slots (policy/access.ts) */
  access: Access;
  /** lookup on a miss (lookup.ts): set by src/app when it runs, else null */
  lookup: MissLookup | null;
  /** record writes of a command beside us (handlers/record.ts): set by src/app, else null */
  records: RecordService | null;
  /**
   * Attaches a reader's personalized trust to a REQ's search filters before they are read (NIP-50
   * observer:, or the AUTHed pubkey: trust/readers.ts): set by src/app when trust runs, else null
   */
  searchTrust: SearchTrust | null;
}

/** Gives each search filter of a REQ its reader's trust when it can (`authed`: the connection's AUTHed pubkeys). */
export type SearchTrust = (filters: Filter[], authed: ReadonlySet<string>) => Promise<void>;
