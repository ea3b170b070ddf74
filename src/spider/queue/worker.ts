// A spider worker: leases relay URLs from the Redis queue, runs crawlRelay on each (the same unit of
// work as the in-process spider), delivers the events to the home relay (src/remote/deliver.ts) and acks the
// result only after every event was answered by the home relay. The relays a result's lists name go
// back to the coordinator inside the result (WorkResult.links): the coordinator plans the next hop
// from all of a hop's results, exactly as the in-process spider does, and enqueues it.
import type { Logger } from 'pino';
import { loadVerifier, type EventVerifier } from '../../nostr/verify.js';
import type { Config } from '../../config/schema.js';
import { crawlRelay, sharedState } from '../fetch/crawl.js';
import { crawlOptions, knownCheckFor } from '../fetch/options.js';
import { AuthorBook } from '../fetch/authors.js';
import { scratchEnv } from './scratch.js';
import type { EventSink } from '../../ingest/sink.js';
import type { WorkQueue } from './memory.js';
import type { Target } from '../../remote/url.js';
import type { WorkResult } from '../../directory/types.js';

export interface WorkerDeps {
  config: Config['spider'];
  queue: WorkQueue;
  sink: EventSink;
  log: Logger;
  /** parallel leases in this process */
  concurrency: number;
  verifier?: EventVerifier;
  /** used when an item does not carry the coordinator's pubkey */
  selfPubkey?: string;
  resolve?: (url: string, allowPrivate: boolean) => Promise<Target>;
}

export interface WorkerStats { leased: number; acked: number; failed: number; lost: number }

/** Runs until `signal` aborts; resolves when every lease in progress is settled. */
export async function runWorker(d: WorkerDeps, signal: AbortSignal): Promise<WorkerStats> {
  const verifier = d.verifier ?? await loadVerifier('auto');
  const opts = crawlOptions(d.config);
  const stats: WorkerStats = { leased: 0, acked: 0, failed: 0, lost: 0 };
  // What the home holds is asked of the home relay itself (src/remote/deliver.ts), so a failed attempt leaves
  // nothing behind that a later one could take for delivered. Known authors go to a scratch LMDB
  // environment (workers have no store), removed when the worker stops.
  const known = knownCheckFor(d.sink, undefined);
  const scratch = await scratchEnv('orbweaver-worker-');
  const shared = sharedState(new AuthorBook(scratch.env, undefined, true), d.concurrency);

  const loop = async (n: number) => {
    while (!signal.aborted) {
      const lease = await d.queue.lease(2000);
      if (!lease) continue;
      stats.leased++;
      const item = lease.item as typeof lease.item & { self?: string; run?: string };
      const log = d.log.child({ url: item.url, hop: item.hop, attempt: lease.attempt, slot: n });
      log.info('spider: leased');
      const stop = lease.signal ? AbortSignal.any([signal, lease.signal]) : signal;
      let result: WorkResult;
      try {
        result = await crawlRelay(item, {
          verifier, sink: d.sink, known, log: d.log, opts, selfPubkey: item.self ?? d.selfPubkey, shared, signal: stop, resolve: d.resolve,
        });
      } catch (e) {
        const msg = (e as Error).message ?? String(e);
        stats.failed++;
        log.warn({ err: msg }, 'spider: attempt failed');
        await lease.fail(msg);
        continue;
      }
      if (lease.signal?.aborted) { stats.lost++; continue; } // the result of a lost lease is not ours to report
      if (signal.aborted) {
        // Stopped mid-fetch: give the item back for a complete fetch elsewhere.
        stats.failed++;
        await lease.fail('worker stopped before the fetch completed');
        continue;
      }
      if (await lease.ack(result)) {
        stats.acked++;
        log.info({ outcome: result.outcome, ms: result.durationMs, ...result.counts, links: Object.keys(result.links).length, error: result.error }, `spider: relay ${result.outcome}, acked`);
      } else stats.lost++;
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.max(1, d.concurrency) }, (_, i) => loop(i)));
  } finally {
    await scratch.close();
  }
  return stats;
}
