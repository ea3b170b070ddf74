// The write side every part of the program shares: the store, the signature verifier, the policy
// hooks (with the persisted access lists) and the one ingest path over them. The relay, the spider,
// `import` and `spider --local` all open it here, so there is one way to build it and one way to
// write. Who hears about stored events (live subscriptions, counters) subscribes with onStored().
import type { Config } from '../config.js';
import { storeSearchOptions } from '../config/search.js';
import { storeMapOptions } from '../config/relay.js';
import { openStore } from '../store/index.js';
import type { SpoolSizes } from '../store/spool.js';
import { loadVerifier } from '../nostr/verify.js';
import { createIngest } from '../ingest/ingest.js';
import { inlineVerifier, poolVerifier, type AsyncVerifier } from '../ingest/verify-pool.js';
import type { IngestMetrics, OnStored } from '../ingest/types.js';
import { emptyPolicies } from '../ingest/hooks.js';
import type { WritePipeline } from '../ingest/pipeline.js';
import { writeRules } from '../policy/index.js';
import type { AccessLists } from '../policy/lists.js';
import type { RelayNames } from '../policy/vanish.js';
import type { Logger } from '../lib/logger.js';
import { checkDataDir, openToOthers } from './data-dir.js';

/** The write side, the access lists its rules read (the relay's Access shares them), and what closes it. */
export interface Pipeline extends WritePipeline {
  lists: AccessLists;
  /** this relay's names, as requests to vanish name it (policy/vanish.ts): the relay adds the addresses it listens on */
  relayNames: RelayNames;
  /** Flushes queued writes, then closes the store and the verifier. */
  close(): Promise<void>;
}

export interface PipelineOptions {
  /** signature-check threads; default config.verifyThreads (the command sink uses 0: checks inline) */
  verifyThreads?: number;
  metrics?: IngestMetrics;
  /**
   * the writer's transaction bounds, if not config.store.maxBatch, the writer's entry bound and
   * config.store.maxBatchTime (`orbweaver import` takes larger ones and no time bound: no connection waits on its thread)
   */
  batch?: { maxBatch: number; maxBatchEntries: number; maxBatchMs: number };
  /** what the writer holds back and merges many to a transaction (`orbweaver import`: store/spool.ts) */
  spool?: SpoolSizes;
}

export async function openPipeline(config: Config, logger: Logger, opts: PipelineOptions = {}): Promise<Pipeline> {
  const dir = checkDataDir(config.dataDir, 'create'); // a message naming the path and the fix, not LMDB's
  const loose = openToOthers(dir);
  if (loose) logger.warn({ dataDir: dir }, loose);
  const store = await openStore({ ...storeMapOptions(config), maxBatch: opts.batch?.maxBatch ?? config.store.maxBatch, maxBatchEntries: opts.batch?.maxBatchEntries, maxBatchMs: opts.batch?.maxBatchMs ?? config.store.maxBatchTime, spool: opts.spool, writerThread: config.store.writerThread, search: storeSearchOptions(config), logger });
  let verifier: AsyncVerifier | undefined;
  try {
    const threads = opts.verifyThreads ?? config.verifyThreads;
    // a store whose writer thread parses each event reads follow lists' members where they are
    // checked (graph-json.ts); not the import's, whose writer spools them (measured for the relay only)
    const graphMembers = store.writesFromJson && opts.spool === undefined;
    verifier = threads > 0 ? await poolVerifier(threads, config.verifier, graphMembers) : inlineVerifier(await loadVerifier(config.verifier));
    const policies = emptyPolicies();
    const rules = writeRules(config, store);
    policies.rejectEvent.push(...rules.rejectEvent);
    const listeners = new Set<OnStored>();
    const ingest = createIngest({
      store, verifier, policies, metrics: opts.metrics,
      onStored: (ev, json, serial) => { for (const l of listeners) l(ev, json, serial); },
    });
    const v = verifier;
    return {
      store, verifier: v, policies, lists: rules.lists, relayNames: rules.relayNames, ingest,
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
