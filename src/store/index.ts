// The LMDB event store: openStore() is the only entry point; see types.ts for the contract and
// schema.ts for the layout (codec.ts: values, keys.ts: index keys, txn.ts: the rules).
import { join } from 'node:path';
import { AnswerCache } from './answer-cache.js';
import type { RootDatabase } from 'lmdb';
import { openEnv } from './env.js';
import type { NostrEvent } from '../nostr/event.js';
import type { Filter } from '../nostr/filter.js';
import { decodeEvent } from './codec.js';
import { migrate } from './migrations.js';
import { runNegentropyItems, type NegentropyItemOptions, type NegentropyItems } from './negentropy.js';
import { getValue, holdsEvent, runCount, runIterate, runQuery, type ScanEnv } from './query.js';
import { nowSeconds } from './rules.js';
import { precheck, type Precheck, type PrecheckEvent } from './precheck.js';
import { entryCount, GRAPH_NAMES, INDEX_NAMES, openDbs, REPAIR_META_KEY, type Dbs } from './schema.js';
import { PartialStoreError, StoreBusyError } from './errors.js';
import { enterReaderGate, startReaderGate, type ReaderGate } from './reader-gate.js';
import { acquireWriterLock } from './writer-lock.js';
import { openSearchDbs, type SearchOptions } from './search/schema.js';
import { ensureSearchIndex } from './search/rebuild.js';
import { framesToJson, type EventFrames, type Framing } from '../nostr/frames.js';
import type { CountResult, EventStore, HllRefresh, QueryOptions, StoreStats, WriteResult } from './types.js';
import { DiskGuard, type DiskState } from '../lib/disk-guard.js';
import { BatchWriter, MAX_BATCH_ENTRIES } from './writer.js';
import { finishVanishes } from './vanish-resume.js';
import { ThreadWriter, type StoreWriter } from './writer-thread.js';
import { RankStore } from './ranks.js';
import { recoverSpool, type SpoolSizes } from './spool.js';
import { removeEdgeFiles, SPILL_DIR } from './edge-files.js';
import { surviveFailedCommits } from './commit-failures.js';

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
  /** bytes of large REQ answers this handle keeps while the store has not changed under them (answer-cache.ts; config store.answerCache); 0 or absent: none */
  answerCacheBytes?: number;
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
   * A named database the writer never created reads as empty (named-db.ts). Beside a live writer
   * of another process it opens while that writer holds its writes (reader-gate.ts).
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

const DEFAULTS = { maxBatch: 1000, queryYieldEvery: 2000 };

export async function openStore(opts: OpenStoreOptions): Promise<EventStore> {
  // before LMDB opens: a second writing process is refused, not let in to lose transactions (writer-lock.ts)
  const releaseLock = opts.readOnly ? Object.assign(() => {}, { taken: false }) : await acquireWriterLock(opts.dir);
  // a reader beside a live writer opens while the writer holds its writes (reader-gate.ts)
  const gateIn = opts.readOnly ? await enterReaderGate(opts.dir, { logger: opts.logger }) : null;
  let env: RootDatabase;
  try {
    env = openEnv(opts);
  } catch (err) {
    gateIn?.release();
    releaseLock();
    throw err;
  }
  let gate: ReaderGate | null = null;
  try {
    if (gateIn) {
      const covered = gateIn.covered();
      gateIn.release();
      if (!covered) throw new StoreBusyError(`opening the store in ${opts.dir} took longer than its writer holds its writes for a reader; run this again when the machine is less busy`);
    }
    // this process writes the store: from now on it holds its writes for readers that open beside it
    if (releaseLock.taken) gate = await startReaderGate({ dir: opts.dir, mapSize: opts.mapSize, readAhead: opts.readAhead });
  } catch (err) {
    await env.close();
    releaseLock();
    throw err;
  }
  try {
    const dbs: Dbs = { ...openDbs(env), search: openSearchDbs(env, opts.search) };
    if (!opts.readOnly) {
      // before anything here commits: a failed commit fails its writes (their callers answer), never the process
      surviveFailedCommits((reason) => opts.logger?.warn({ err: reason }, 'a write transaction failed to commit; its writes were refused'));
      const repair = dbs.meta.get(REPAIR_META_KEY);
      if (repair !== undefined && !opts.repairing) {
        throw new PartialStoreError(`the store in ${opts.dir} is half rebuilt: orbweaver verify --repair started at ${String(repair)} and did not finish, so its indexes are partial; run orbweaver verify --repair --data ${opts.dir} again before anything writes to it`);
      }
      migrate(env, dbs);
      // files of held edges belong to the import that wrote them: after a kill the events say again what they held
      removeEdgeFiles(join(opts.dir, SPILL_DIR));
      await recoverSpool(env, dbs, opts.logger, join(opts.dir, SPILL_DIR), opts.recoverSizes);
      ensureSearchIndex(env, dbs, opts.logger);
      // requests to vanish a killed process left half applied, before anything reads what they cover
      // (NIP-62, vanish-resume.ts); a repair drops what they cover itself (commands/check/vanish.ts)
      if (!opts.repairing) finishVanishes(env, dbs, opts.maxBatchEntries ?? MAX_BATCH_ENTRIES, opts.logger);
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
      gate,
      answers: opts.answerCacheBytes ? new AnswerCache(opts.answerCacheBytes) : undefined,
    });
  } catch (err) {
    await gate?.stop();
    await env.close();
    releaseLock();
    throw err;
  }
}

class LmdbEventStore implements EventStore {
  private closed = false;
  readonly ranks: RankStore;

  constructor(
    readonly env: RootDatabase,
    private readonly dbs: Dbs,
    /** null: opened read-only */
    private readonly writer: StoreWriter | null,
    private readonly opts: { queryYieldEvery: number; logger?: OpenStoreOptions['logger']; disk: DiskGuard | null; releaseLock: () => void; gate: ReaderGate | null; answers?: AnswerCache },
  ) {
    this.ranks = new RankStore(env, dbs);
  }

  answersKept(): number {
    return this.opts.answers?.stats.hits ?? 0;
  }

  private w(): StoreWriter {
    if (!this.writer) throw new Error('this event store was opened read-only');
    return this.writer;
  }

  private scanEnv(o?: Pick<QueryOptions, 'signal' | 'now'>): ScanEnv {
    return { dbs: this.dbs, now: o?.now ?? nowSeconds(), yieldEvery: this.opts.queryYieldEvery, signal: o?.signal, answers: this.opts.answers };
  }

  get writesFromJson(): boolean {
    return this.writer instanceof ThreadWriter;
  }

  write(ev: NostrEvent | null, json: string, members?: string): Promise<WriteResult> {
    return this.w().write(ev, json, members);
  }

  writeThen(ev: NostrEvent | null, json: string, done: (err: Error | null, result?: WriteResult) => void, members?: string): void {
    this.w().writeThen(ev, json, done, members);
  }

  async query(filters: Filter[], opts: QueryOptions): Promise<string[]> {
    return framesToJson(await runQuery(this.scanEnv(opts), filters, opts.defaultLimit, opts.maxLimit, opts.seen));
  }

  queryFrames(filters: Filter[], opts: QueryOptions, framing: Framing): Promise<EventFrames> {
    return runQuery(this.scanEnv(opts), filters, opts.defaultLimit, opts.maxLimit, opts.seen, framing, opts.lend, opts.maxBytes, opts.peekMore);
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

  has(id: string): boolean {
    return holdsEvent(this.dbs, id, nowSeconds());
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
    await this.opts.gate?.stop();
    await this.env.close();
    this.opts.releaseLock();
  }
}
