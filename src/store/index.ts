// The LMDB event store: openStore() is the only entry point; see types.ts for the contract and
// schema.ts for the layout (codec.ts: values, keys.ts: index keys, txn.ts: the rules).
import { join } from 'node:path';
import { open, type RootDatabase } from 'lmdb';
import type { NostrEvent } from '../nostr/event.js';
import type { Filter } from '../nostr/filter.js';
import { decodeEvent } from './codec.js';
import { migrate } from './migrations.js';
import { runNegentropyItems, type NegentropyItemOptions, type NegentropyItems } from './negentropy.js';
import { getValue, runCount, runIterate, runQuery, type ScanEnv } from './query.js';
import { nowSeconds } from './rules.js';
import { precheck, type Precheck, type PrecheckEvent } from './precheck.js';
import { entryCount, GRAPH_NAMES, INDEX_NAMES, openDbs, REPAIR_META_KEY, type Dbs } from './schema.js';
import { PartialStoreError } from './errors.js';
import { acquireWriterLock } from './writer-lock.js';
import { openSearchDbs, type SearchOptions } from './search/schema.js';
import { ensureSearchIndex } from './search/rebuild.js';
import { framesToJson, type EventFrames, type Framing } from '../nostr/frames.js';
import type { CountResult, EventStore, HllRefresh, QueryOptions, StoreStats, WriteResult } from './types.js';
import { DiskGuard, type DiskState } from '../lib/disk-guard.js';
import { BatchWriter } from './writer.js';
import { ThreadWriter, type StoreWriter } from './writer-thread.js';
import { RankStore } from './ranks.js';
import { recoverSpool, type SpoolSizes } from './spool.js';
import { removeEdgeFiles, SPILL_DIR } from './edge-files.js';

export type { CountResult, EventStore, HllRefresh, QueryOptions, StoreStats, WriteResult, WriteStatus } from './types.js';
export type { Precheck, PrecheckEvent } from './precheck.js';
export { PartialStoreError } from './errors.js';
export type { EventFrames, Framing } from '../nostr/frames.js';
export type { NegentropyItems, NegentropyItemOptions } from './negentropy.js';
export { RankStore, type RankMeta, type RankRecord, type AuthorList } from './ranks.js';

export interface OpenStoreOptions {
  /** directory of the LMDB environment (created if missing) */
  dir: string;
  /** LMDB map size in bytes (address space, not disk) */
  mapSize?: number;
  /** most operations in one write transaction */
  maxBatch?: number;
  /** index entries one write transaction may write or remove (writer.ts MAX_BATCH_ENTRIES) */
  maxBatchEntries?: number;
  /** milliseconds one write transaction may spend applying operations (writer.ts maxBatchMs; absent: no bound) */
  maxBatchMs?: number;
  /** what the writer holds back and merges many to a transaction (spool.ts; `orbweaver import`); absent: nothing */
  spool?: SpoolSizes;
  /** what the open's recovery of a killed import holds in memory (spool.ts recoverSpool; tests give small ones); absent: its own */
  recoverSizes?: Pick<SpoolSizes, 'edges' | 'indexBytes'>;
  /** index entries a scan reads before yielding to the event loop */
  queryYieldEvery?: number;
  logger?: { warn(o: object, msg?: string): void; info?(o: object, msg?: string): void };
  /** NIP-50 search index: kinds indexed, entries per search (search/schema.ts) */
  search?: SearchOptions;
  /** let the kernel read ahead around the pages the store touches (config store.readAhead; default off, see openStore) */
  readAhead?: boolean;
  /** writes are refused while the data directory's file system has less free (config store.minFreeBytes; lib/disk-guard.ts); 0 or absent: never */
  minFreeBytes?: number;
  /**
   * Reads only (query worker threads, stats, export, directory, backup, a spider beside the relay):
   * no migration, no batched writer, and LMDB opens the environment read-only (MDB_RDONLY), so
   * nothing in this process can write it, not even a named database opened beside the store's.
   * Opened writable, lmdb-js opens each named database in a write transaction of its own: a reader
   * was then a second writing process for the moment it opened, and such processes lose the
   * writer's transactions (docs/storage.md, "Several writer processes"; "Readers write nothing").
   * A named database the writer never created reads as empty (named-db.ts).
   */
  readOnly?: boolean;
  /**
   * The batched writer runs on a thread of its own (writer-thread.ts; config store.writerThread),
   * not on the caller's. Not with a spool (the import keeps its writer on its own thread).
   */
  writerThread?: boolean;
  /** `verify --repair` opens it: a store whose last repair was interrupted is not refused */
  repairing?: boolean;
}

const DEFAULTS = { mapSize: 64 * 1024 ** 3, maxBatch: 1000, queryYieldEvery: 2000 };
/** named databases: ours (15, with search) and room for other modules' (spider directory, policy lists) */
const MAX_DBS = 64;

/** lmdb-js's free-list bounds (maxFreeSpaceToLoad, maxFreeSpaceToRetain; not in its typings), see openStore */
const FREE_PAGES_TO_LOAD = 10_000;
const FREE_PAGES_TO_RETAIN = 15_000;

export async function openStore(opts: OpenStoreOptions): Promise<EventStore> {
  // before LMDB opens: a second writing process is refused, not let in to lose transactions (writer-lock.ts)
  const releaseLock = opts.readOnly ? () => {} : await acquireWriterLock(opts.dir);
  let env: RootDatabase;
  try {
    env = openEnv(opts);
  } catch (err) {
    releaseLock();
    throw err;
  }
  try {
    const dbs: Dbs = { ...openDbs(env), search: openSearchDbs(env, opts.search) };
    if (!opts.readOnly) {
      const repair = dbs.meta.get(REPAIR_META_KEY);
      if (repair !== undefined && !opts.repairing) {
        throw new PartialStoreError(`the store in ${opts.dir} is half rebuilt: orbweaver verify --repair started at ${String(repair)} and did not finish, so its indexes are partial; run orbweaver verify --repair --data ${opts.dir} again before anything writes to it`);
      }
      migrate(env, dbs);
      // files of held edges belong to the import that wrote them: after a kill the events say again what they held
      removeEdgeFiles(join(opts.dir, SPILL_DIR));
      await recoverSpool(env, dbs, opts.logger, join(opts.dir, SPILL_DIR), opts.recoverSizes);
      ensureSearchIndex(env, dbs, opts.logger);
    }
    const disk = opts.readOnly ? null : new DiskGuard(opts.dir, opts.minFreeBytes ?? 0);
    const maxBatch = opts.maxBatch ?? DEFAULTS.maxBatch;
    let writer: StoreWriter | null = null; // none when opened read-only
    if (!opts.readOnly && opts.writerThread && !opts.spool) {
      const { dir, mapSize, readAhead, minFreeBytes, maxBatchEntries, maxBatchMs, search } = opts;
      writer = await ThreadWriter.start({ dir, mapSize, readAhead, minFreeBytes, maxBatch, maxBatchEntries, maxBatchMs, search }, env, opts.logger);
    } else if (!opts.readOnly) {
      const spool = opts.spool && { ...opts.spool, spillDir: join(opts.dir, SPILL_DIR) };
      writer = new BatchWriter(env, dbs, { maxBatch, maxBatchEntries: opts.maxBatchEntries, maxBatchMs: opts.maxBatchMs, spool, logger: opts.logger, disk: disk ?? undefined });
    }
    return new LmdbEventStore(env, dbs, writer, {
      queryYieldEvery: opts.queryYieldEvery ?? DEFAULTS.queryYieldEvery,
      logger: opts.logger,
      disk,
      releaseLock,
    });
  } catch (err) {
    await env.close();
    releaseLock();
    throw err;
  }
}

/** LMDB's environment with the store's options (every process opens it the same way). */
function openEnv(opts: OpenStoreOptions): RootDatabase {
  return open({
    path: opts.dir,
    // always a directory holding data.mdb + lock.mdb: lmdb-js would otherwise take a path with a
    // dot in it (e.g. /tmp/tmp.X1y2, /var/lib/relay.d) for a single-file database
    noSubdir: false,
    mapSize: opts.mapSize ?? DEFAULTS.mapSize,
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
    // How many free pages lmdb-js loads from LMDB's free list into memory to allocate from (and
    // keeps between transactions). Its list is a sorted array that every page freed or loaded is
    // inserted into one by one, so its cost grows with its length. With the default (50,000 and
    // 75,000) that insertion was a third of importing 20,000 follow lists that follow one another
    // into a 600,000-event store; with these bounds the import takes 15-17 s instead of 20-24 s and
    // the file is no larger. Follow lists spread over the whole network gain nothing (the list is
    // then 4% of the time either way): docs/storage.md, "The free list".
    maxFreeSpaceToLoad: FREE_PAGES_TO_LOAD,
    maxFreeSpaceToRetain: FREE_PAGES_TO_RETAIN,
  } as Parameters<typeof open>[0]);
}

class LmdbEventStore implements EventStore {
  private closed = false;
  readonly ranks: RankStore;

  constructor(
    readonly env: RootDatabase,
    private readonly dbs: Dbs,
    /** null: opened read-only */
    private readonly writer: StoreWriter | null,
    private readonly opts: { queryYieldEvery: number; logger?: OpenStoreOptions['logger']; disk: DiskGuard | null; releaseLock: () => void },
  ) {
    this.ranks = new RankStore(env, dbs);
  }

  private w(): StoreWriter {
    if (!this.writer) throw new Error('this event store was opened read-only');
    return this.writer;
  }

  private scanEnv(o?: Pick<QueryOptions, 'signal' | 'now'>): ScanEnv {
    return { dbs: this.dbs, now: o?.now ?? nowSeconds(), yieldEvery: this.opts.queryYieldEvery, signal: o?.signal };
  }

  get writesFromJson(): boolean {
    return this.writer instanceof ThreadWriter;
  }

  write(ev: NostrEvent | null, json: string): Promise<WriteResult> {
    return this.w().write(ev, json);
  }

  async query(filters: Filter[], opts: QueryOptions): Promise<string[]> {
    return framesToJson(await runQuery(this.scanEnv(opts), filters, opts.defaultLimit, opts.maxLimit, opts.seen));
  }

  queryFrames(filters: Filter[], opts: QueryOptions, framing: Framing): Promise<EventFrames> {
    return runQuery(this.scanEnv(opts), filters, opts.defaultLimit, opts.maxLimit, opts.seen, framing);
  }

  async count(filters: Filter[], opts?: Pick<QueryOptions, 'signal' | 'now'>): Promise<number> {
    return (await runCount(this.scanEnv(opts), filters)).count;
  }

  async countResult(filters: Filter[], opts?: Pick<QueryOptions, 'signal' | 'now'>): Promise<CountResult> {
    const r = await runCount(this.scanEnv(opts), filters);
    // this handle owns the writer: store recomputed registers now (a query thread's handle cannot)
    if (r.refresh && this.writer) {
      this.refreshHll(r.refresh).catch((err: unknown) => this.opts.logger?.warn({ err }, 'storing recomputed HLL registers failed'));
      delete r.refresh;
    }
    return r;
  }

  async refreshHll(refresh: HllRefresh[]): Promise<void> {
    const w = this.w();
    await Promise.all(refresh.map((x) => w.refreshHll(Buffer.from(x.key), x.version, x.registers)));
  }

  iterate(filter: Filter, opts?: Pick<QueryOptions, 'signal' | 'now'>): AsyncIterable<string> {
    return runIterate(this.scanEnv(opts), filter);
  }

  negentropyItems(filter: Filter, opts: NegentropyItemOptions & Pick<QueryOptions, 'signal' | 'now'>): Promise<NegentropyItems> {
    return runNegentropyItems(this.scanEnv(opts), filter, opts);
  }

  get(id: string): NostrEvent | undefined {
    const value = getValue(this.dbs, id, nowSeconds());
    return value ? decodeEvent(value) : undefined;
  }

  precheck(ev: PrecheckEvent): Precheck {
    return precheck(this.dbs, ev, nowSeconds());
  }

  sweepExpired(now: number = nowSeconds()): Promise<number> {
    return this.w().sweep(now);
  }

  remove(id: string): Promise<boolean> {
    return this.w().remove(id);
  }

  disk(): DiskState | null {
    // a writer thread's guard is the one that refuses (its state after its last batch)
    if (this.writer instanceof ThreadWriter) return this.writer.disk() ?? this.opts.disk?.state() ?? null;
    return this.opts.disk?.state() ?? null;
  }

  stats(): StoreStats {
    const indexes: Record<string, number> = {};
    for (const name of INDEX_NAMES) indexes[name] = entryCount(this.dbs[name]);
    for (const name of GRAPH_NAMES) indexes[name] = entryCount(this.dbs.graph[name]);
    if (this.dbs.search) {
      indexes.searchKeys = entryCount(this.dbs.search.keys);
      indexes.searchDocs = entryCount(this.dbs.search.docs);
    }
    // The pages up to the last one in use: what the file holds. A store written through LMDB's write
    // map (before 2026-11-29, index.ts) has a data.mdb as long as the map, sparse, so its length says nothing.
    const info = this.env.getStats() as { pageSize: number; lastPageNumber: number };
    const bytes = (info.lastPageNumber + 1) * info.pageSize;
    return { events: entryCount(this.dbs.events), bytes, indexes };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.writer?.close();
    await this.env.close();
    this.opts.releaseLock();
  }
}
