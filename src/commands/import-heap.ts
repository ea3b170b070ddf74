// `orbweaver import`'s --batch and --window, and the V8 old space the import runs itself again
// with (cli.ts, src/app/heap-limit.ts). Nothing here loads the config schema or the store: cli.ts
// decides the rerun with it before anything else loads, so the process that then only waits for
// the import holds ~8 MB of anonymous memory instead of ~29 (docs/storage.md, "The import's
// memory at depth").
import { takeOption, UsageError } from './args.js';

/**
 * Events per write transaction. An import has no other clients waiting on the main thread, so it
 * takes transactions five times the relay's (store.maxBatch): in a large store a transaction's
 * follow lists share more of the tag index's pages the more of them it holds. Measured importing
 * 40,000 directory events into a store of 300,000 (docs/storage.md): 74 s at 1,000 events, 53 s at
 * 3,000, 42 s at 5,000, 40 s at 10,000. The writer's entry bound scales with it (ENTRIES_PER_EVENT).
 */
const DEFAULT_BATCH = 5000;
/**
 * Events handed to the ingest path and not yet answered, in transactions: an event is answered
 * only once its transaction is flushed to disk, so the window must hold several transactions'
 * worth for the writer to fill the next one while the last one is flushed (with two, an import
 * of 35,500 directory events took 59-63 s against 33 s with four: docs/storage.md). Memory: ~7 KB
 * per follow list, and MAX_INFLIGHT_BYTES.
 */
const WINDOW_BATCHES = 3;

/** --batch and --window from the command's arguments (taken out of `args`), checked. */
export function takeSizes(args: string[]): { batch: number; window: number } {
  const batch = Number(takeOption(args, '--batch') ?? DEFAULT_BATCH);
  const windowOpt = takeOption(args, '--window');
  if (!Number.isInteger(batch) || batch < 1) throw new UsageError('--batch must be a positive integer (events per write transaction)');
  const window = Number(windowOpt ?? WINDOW_BATCHES * batch);
  if (!Number.isInteger(window) || window < 1) throw new UsageError('--window must be a positive integer');
  return { batch, window };
}

/**
 * The old space an import of this window gets, MB: at least IMPORT_HEAP_MB, more for a larger window.
 * 512 until the seventeenth session: a heap snapshot of an import at 550,000 lines of the 5,000,000
 * set held ~140 MB alive (the lines in flight are strings, not parsed), and V8 let the heap grow to
 * ~300 MB of it before collecting. With 320 the import of 1,500,000 lines took the same time and
 * peaked ~60 MB lower (bench/RESULTS.md).
 */
const IMPORT_HEAP_MB = 320;
/**
 * live heap per event in flight, MB: ~5 KB measured (the JSON line, at most MAX_INFLIGHT_BYTES of
 * them), with room. 16 KB while the events in flight were parsed objects.
 */
const HEAP_MB_PER_EVENT = 0.012;

/**
 * The V8 old-space limit `orbweaver import` runs itself with (cli.ts, src/app/heap-limit.ts), from
 * its arguments. With node's default limit (a quarter of RAM) V8 let the import's old generation grow
 * to about three times what is alive before collecting it: the events of a window die there after
 * their transaction commits. Measured on the first 100,000 directory events of the 600,000 set:
 * peak RssAnon 766 MB at the default, 408 MB with 512 MB, in the same time (50.7 s both); the last
 * 100,000 into a store of 500,000: 788 against 431 MB, 128.4 against 129.6 s (bench/RESULTS.md).
 * A larger --window keeps more events alive, so it gets a larger limit. Arguments it cannot read
 * give the default: the import itself then says what is wrong with them.
 */
export function importHeapMb(argv: readonly string[]): number {
  let window: number;
  try { window = takeSizes([...argv]).window; } catch { return IMPORT_HEAP_MB; }
  return Math.max(IMPORT_HEAP_MB, Math.ceil(128 + window * HEAP_MB_PER_EVENT));
}
