// The write side every part of the program shares: the store, the signature verifier, the policy
// hooks (with the persisted access lists) and the one ingest path over them. The relay, the spider,
// `import` and `spider --local` all open it here, so there is one way to build it and one way to
// write. Who hears about stored events (live subscriptions, counters) subscribes with onStored().
import type { Config } from '../config.js';
import { storeSearchOptions } from '../config/search.js';
import { openStore } from '../store/index.js';
import type { EventStore } from '../store/types.js';
import { loadVerifier } from '../nostr/verify.js';
import { createIngest } from '../ingest/ingest.js';
import { inlineVerifier, poolVerifier, type AsyncVerifier } from '../ingest/verify-pool.js';
import type { Ingest, IngestMetrics, OnStored } from '../ingest/types.js';
import type { Policies } from '../ingest/hooks.js';
import { relayPolicies } from '../relay/policy/index.js';
import type { Access } from '../relay/policy/access.js';
import type { Logger } from '../relay/logger.js';
import { checkDataDir } from './data-dir.js';

export interface Pipeline {
  store: EventStore;
  verifier: AsyncVerifier;
  policies: Policies;
  /** access lists, rate limits and AUTH state (the relay's connection-facing part uses it too) */
  access: Access;
  ingest: Ingest;
  /** Calls `fn` for every event the ingest path stored (or passed on, if ephemeral); returns an unsubscribe. */
  onStored(fn: OnStored): () => void;
  /** Flushes queued writes, then closes the store and the verifier. */
  close(): Promise<void>;
}

export interface PipelineOptions {
  /** signature-check threads; default config.verifyThreads (commands use 0: checks inline) */
  verifyThreads?: number;
  metrics?: IngestMetrics;
  /** the writer's transaction bounds, if not config.store.maxBatch and the writer's entry bound (`orbweaver import` takes larger ones) */
  batch?: { maxBatch: number; maxBatchEntries: number };
}

export async function openPipeline(config: Config, logger: Logger, opts: PipelineOptions = {}): Promise<Pipeline> {
  checkDataDir(config.dataDir, 'create'); // a message naming the path and the fix, not LMDB's
  const store = await openStore({ dir: config.dataDir, mapSize: config.store.mapSize, maxBatch: opts.batch?.maxBatch ?? config.store.maxBatch, maxBatchEntries: opts.batch?.maxBatchEntries, queryYieldEvery: config.store.queryYieldEvery, search: storeSearchOptions(config), logger });
  let verifier: AsyncVerifier | undefined;
  try {
    const threads = opts.verifyThreads ?? config.verifyThreads;
    verifier = threads > 0 ? await poolVerifier(threads, config.verifier) : inlineVerifier(await loadVerifier(config.verifier));
    const { policies, access } = await relayPolicies(config, store, verifier);
    const listeners = new Set<OnStored>();
    const ingest = createIngest({
      store, verifier, policies, metrics: opts.metrics,
      onStored: (ev, json, serial) => { for (const l of listeners) l(ev, json, serial); },
    });
    const v = verifier;
    return {
      store, verifier: v, policies, access, ingest,
      onStored(fn) {
        listeners.add(fn);
        return () => listeners.delete(fn);
      },
      async close() {
        await store.close();
        await v.close();
      },
    };
  } catch (e) {
    await verifier?.close();
    await store.close();
    throw e;
  }
}
