// The one place LMDB's environment of a store is opened: every process and thread opens it with
// the same options (openStore, and the reader gate's thread: reader-gate.ts).
import { open, type RootDatabase } from 'lmdb';

export interface EnvOptions {
  dir: string;
  mapSize?: number;
  readAhead?: boolean;
  /** MDB_RDONLY: see OpenStoreOptions.readOnly */
  readOnly?: boolean;
}

const DEFAULT_MAP_SIZE = 64 * 1024 ** 3;
/** named databases: ours (15, with search) and room for other modules' (spider directory, policy lists) */
const MAX_DBS = 64;

/**
 * lmdb-js's free-list bounds (options missing from its typings), for every LMDB environment the
 * relay opens: the store's (openEnv) and the spider's scratch ones.
 */
export const FREE_LIST_OPTIONS = {
  // How many free pages lmdb-js loads from LMDB's free list into memory to allocate from. Its list
  // is a sorted array that every page freed or loaded is inserted into one by one, so its cost
  // grows with its length. With the default (50,000) that insertion was a third of importing
  // 20,000 follow lists that follow one another into a 600,000-event store; with 10,000 the
  // import takes 15-17 s instead of 20-24 s and the file is no larger. Follow lists spread over
  // the whole network gain nothing (the list is then 4% of the time either way).
  maxFreeSpaceToLoad: 10_000,
  // And how many it keeps in memory between transactions: none. A list kept is saved back at the
  // next commit only in part (the records around the pages taken from it), and lmdb-js's fork
  // gets that partial save wrong now and then: records filled from the wrong part of the list,
  // or past its end. Each of the three crashes seen in large imports was in such a save (a
  // free-list check failing, or an abort). A list loaded in the transaction itself is saved
  // whole, which is all that happens without one kept: 17 partial saves in an import of
  // 2,000,000 lines with 15,000, none with 0. Imports and re-publications measured as fast;
  // WebSocket ingest into a fresh store up to 8% slower (docs/storage.md, "Nothing kept between
  // transactions").
  maxFreeSpaceToRetain: 0,
};

/** LMDB's environment with the store's options (every process opens it the same way). */
export function openEnv(opts: EnvOptions): RootDatabase {
  return open({
    path: opts.dir,
    // always a directory holding data.mdb + lock.mdb: lmdb-js would otherwise take a path with a
    // dot in it (e.g. /tmp/tmp.X1y2, /var/lib/relay.d) for a single-file database
    noSubdir: false,
    mapSize: opts.mapSize ?? DEFAULT_MAP_SIZE,
    maxDbs: MAX_DBS,
    // Durable commits: no noSync; a commit returns once its pages and meta are on disk.
    // No write map (LMDB's MDB_WRITEMAP): a transaction's pages are malloc'd copies, written with
    // pwrite and flushed with fdatasync at commit, as strfry does. Through the map, every page a
    // commit flushed was write-protected again (a fault and a TLB flush on the other core when it
    // was next written), and the flush itself (msync) took 4-6x as long as soon as another thread of
    // the process ran beside it: the relay's main thread, the signature checks. Measured 2026-11-29
    // (docs/storage.md, "The write map, and why it went"): WebSocket ingest of the 18,000 directory
    // events 1.4x as fast without it, 20,000 new events into the 600,000-event store 1.46x, and
    // `orbweaver import` of the 600,000 1.7-1.8x. The dirty list's sorted inserts that made it worth
    // having at depth are cheap now that the writer puts the follow edges and the import its merges
    // in key order. It was on again from 3c33862 to the thirteenth session while several writing
    // processes were examined: they lose transactions with it too (docs/storage.md, "Several writer
    // processes"), and a store now has one writing process (writer-lock.ts, and the record writes of
    // a spider beside the relay go through the relay: app/record-ops.ts).
    useWritemap: false,
    // a reader cannot write, not even by opening a named database: see OpenStoreOptions.readOnly
    readOnly: opts.readOnly ?? false,
    // No overlapping sync (lmdb-js's default on Linux, where a commit's flush overlaps the next
    // transaction): together with the write map it corrupted the free list as soon as several
    // processes wrote (a relay and `spider --once` or `sync` beside it): "freelist entry had
    // bad/duplicate entries", MDB_BAD_TXN, aborts (test/store/durability.test.ts). Without the
    // write map that stress passed with it, but the writer answers a batch when its transaction
    // resolves, which must then include the flush (writer.ts). Every process opens the store through
    // here, so all agree.
    overlappingSync: false,
    // No read-ahead unless asked (LMDB's MDB_NORDAHEAD: madvise MADV_RANDOM on the map). With it, a
    // fault on the map brings in a large folio of the file (Linux 6.x page cache: up to 2 MiB with
    // this machine's read_ahead_kb of 8 MiB), and one 4 KiB page written dirties that whole folio
    // and has it written back (measured through the write map the store then used). A 600,000-event import wrote 1.1 TB to the
    // device with read-ahead and 67 GB without, in 610 s against 469 s (743 s against 648 s in a
    // slower hour); its last 100,000 took 3.2-3.3x as long as its first with it, 1.3-1.8x without.
    // The cost: a cold cache is read 4 KiB at a time, and a small store is slower (10-35%).
    // docs/storage.md, "Read-ahead".
    noReadAhead: !opts.readAhead,
    // the free-list bounds: see FREE_LIST_OPTIONS (docs/storage.md, "The free list")
    ...FREE_LIST_OPTIONS,
  } as Parameters<typeof open>[0]);
}
