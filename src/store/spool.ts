// The import's bulk merge: index entries held back and written many to a transaction.
//
// In a large store nearly every index entry a transaction writes lands on a B-tree page of its
// own, and each dirtied page is copied and written back: at the import's transaction size (tens of
// thousands of entries) ~40 µs an entry on this machine class, ~6-10 µs at millions
// (../shared/perf/lmdb-page-cost). So `orbweaver import` holds back what the storage rules never
// read — the follow graph's edges of new lists (graph-spool.ts) and the time and tag indexes
// (index-spool.ts) — and the writer merges them in large transactions whenever the spool is full and
// when the import ends (writer.ts); a full spool of edges goes to a file instead while the graph is
// larger than everything held (edge-files.ts).
//
// What the rules read is written with its event as before: the event, its id and address, the
// current-list entry, pubkey ids, deletion marks, expiry and search entries, and the counters, so
// COUNT and every write decision stay exact at each commit. The meta key SPOOL_FROM_KEY holds the
// first serial held since the last merge: if the process dies before the next merge, the store's
// next open for writing derives the held entries again from the events stored since
// (recoverSpool), before anything reads them. Nothing else is missing, and nothing is stale.
import type { RootDatabase } from 'lmdb';
import { decodeHeader, jsonOf } from './codec.js';
import { graphList, pubkeyId } from './graph.js';
import { EdgeSpool } from './graph-spool.js';
import { visitEntries } from './indexer.js';
import { IndexSpool, type IndexSpoolMark } from './index-spool.js';
import { readSerial, serialKey } from './keys.js';
import type { Dbs } from './schema.js';

/** meta key: the first serial whose entries may still be held by an import's spool (absent: every index is complete) */
export const SPOOL_FROM_KEY = 'spoolFrom';

export interface SpoolSizes {
  /** follow edges held before a merge */
  edges: number;
  /** bytes of time and tag index keys held before a merge */
  indexBytes: number;
  /**
   * a directory for full spools of edges, merged at the end (edge-files.ts; openStore gives the
   * store's own); absent: every full spool is merged
   */
  spillDir?: string;
  /** told after each part (transaction) of a merge what it has written of what was held */
  progress?: (p: MergeProgress) => void;
}

/** How far a merge of what the spool held has come (SpoolSizes.progress). */
export interface MergeProgress {
  edges: number;
  entries: number;
  ofEdges: number;
  ofEntries: number;
}

/** How a merge of what the spool holds runs (ImportSpool.merge). */
export interface MergeOptions {
  /** most entries one transaction writes */
  part: number;
  /** only the time and tag entries: the edges stay held */
  indexOnly: boolean;
  /** before each transaction; throws to stop the merge (a full disk) */
  beforePart?: () => void;
  /** after each transaction has committed: what it wrote, and the merge so far */
  afterPart?: (part: { edges: number; entries: number }, sofar: MergeCounts) => void;
  /** SPOOL_FROM_KEY is kept at this serial by every part (but the last part of the `lastMerge`) */
  keepFrom?: number;
  lastMerge?: boolean;
}

export interface MergeCounts {
  edges: number;
  entries: number;
  transactions: number;
}

export class ImportSpool {
  readonly edges: EdgeSpool;
  readonly index: IndexSpool;

  /** `refilled`: filled again from the stored events after a kill (recoverSpool), not by an import */
  constructor(dbs: Dbs, sizes: SpoolSizes, refilled = false) {
    this.edges = new EdgeSpool(sizes.edges, refilled, sizes.spillDir);
    this.index = new IndexSpool(dbs, sizes.indexBytes);
  }

  get full(): boolean {
    return this.edges.full || this.index.full;
  }

  get empty(): boolean {
    return this.edges.size === 0 && this.edges.filed === 0 && this.index.size === 0;
  }

  /** The first serial held since the spool was last empty (0: empty). */
  get from(): number {
    const a = this.edges.from;
    const b = this.index.from;
    return a === 0 ? b : b === 0 ? a : Math.min(a, b);
  }

  /** A write transaction begins: what rollback() takes back starts here. */
  begin(): void {
    this.edges.begin();
    this.index.begin();
  }

  commit(): void {
    this.edges.commit();
    this.index.commit();
  }

  rollback(): void {
    this.edges.rollback();
    this.index.rollback();
  }

  /** Where an operation starts (the edges journal their own undo: graph.ts). */
  markOp(): IndexSpoolMark {
    return this.index.mark();
  }

  restoreOp(m: IndexSpoolMark): void {
    this.index.restore(m);
  }

  /**
   * Writes at most `limit` of what is held, inside the caller's write transaction, continuing where
   * the last call stopped; the last part also removes SPOOL_FROM_KEY. clear() once every part has
   * committed, restartDrain() if one did not.
   */
  drain(dbs: Dbs, limit = Infinity, indexOnly = false): { edges: number; entries: number; done: boolean } {
    const e = indexOnly ? { written: 0, done: true } : this.edges.drain(dbs, limit);
    const i = e.done ? this.index.drain(limit - e.written) : { written: 0, done: false };
    if (i.done) {
      // what stays held after an index-only merge is the edges (in files and memory)
      if (indexOnly && this.edges.from !== 0) dbs.meta.putSync(SPOOL_FROM_KEY, this.edges.from);
      else dbs.meta.removeSync(SPOOL_FROM_KEY);
    }
    return { edges: e.written, entries: i.written, done: i.done };
  }

  /** A part of a merge did not commit (`indexOnly`: one that wrote no edges): the next drain() of what it wrote starts over. */
  restartDrain(indexOnly = false): void {
    if (!indexOnly) this.edges.restartDrain();
    this.index.restartDrain();
  }

  clear(): void {
    this.edges.clear();
    this.index.clear();
  }

  /**
   * Writes what is held into the store in write transactions of at most `part` entries each, then
   * forgets it (`indexOnly`: the time and tag entries only; the edges stay held). A part that does
   * not commit leaves everything held (restartDrain: the next merge starts over) and its error goes
   * on. The one loop of both merges: the import's writer's (writer.ts) and the recovery's at open.
   */
  async merge(env: RootDatabase, dbs: Dbs, o: MergeOptions): Promise<MergeCounts> {
    const n: MergeCounts = { edges: 0, entries: 0, transactions: 0 };
    try {
      for (let done = false; !done; n.transactions++) {
        o.beforePart?.();
        let part = { edges: 0, entries: 0, done: false };
        await env.transaction(() => {
          part = this.drain(dbs, o.part, o.indexOnly);
          // the recovery keeps its mark until its last part is in (see recoverSpool)
          if (o.keepFrom !== undefined && !(o.lastMerge && part.done)) dbs.meta.putSync(SPOOL_FROM_KEY, o.keepFrom);
        });
        done = part.done;
        n.edges += part.edges;
        n.entries += part.entries;
        o.afterPart?.(part, n);
      }
    } catch (err) {
      this.restartDrain(o.indexOnly);
      throw err;
    }
    if (o.indexOnly) this.index.clear();
    else this.clear();
    return n;
  }

  /** Keeps SPOOL_FROM_KEY in step with what is held; the last write of a transaction (txn.ts finish). */
  writeMark(dbs: Dbs): void {
    const have = dbs.meta.get(SPOOL_FROM_KEY);
    const from = this.from;
    if (from !== 0 && have !== from) dbs.meta.putSync(SPOOL_FROM_KEY, from);
    else if (from === 0 && have !== undefined) dbs.meta.removeSync(SPOOL_FROM_KEY);
  }
}

/** Edges (or bytes of entries / 16) recoverSpool holds in memory before a file (or a merge of the entries). */
const RECOVER_CHUNK = 4_000_000;
/** Entries one transaction of recoverSpool's merges writes (as the writer's merge parts). */
const RECOVER_PART = 262_144;

/**
 * After a process died holding entries (SPOOL_FROM_KEY present): derives the held indexes again
 * from every event stored since — the time and tag entries of each, the follow edges of each
 * current list — and writes them in large transactions, then removes the key. As the import does,
 * it holds the edges in files (`spillDir`, emptied by the caller) and merges them once, at the end:
 * an import now holds every edge until it ends, and merges of 4,000,000 into a growing graph would
 * cost the graph's size each. Runs at open, before anything reads the store; returns the events it read.
 */
export async function recoverSpool(
  env: RootDatabase,
  dbs: Dbs,
  logger?: { info?(o: object, msg?: string): void },
  spillDir?: string,
  /** what it holds in memory (tests give small ones, to go through files) */
  sizes: Pick<SpoolSizes, 'edges' | 'indexBytes'> = { edges: RECOVER_CHUNK, indexBytes: 16 * RECOVER_CHUNK },
): Promise<number> {
  const from = dbs.meta.get(SPOOL_FROM_KEY);
  if (typeof from !== 'number') return 0;
  const t0 = Date.now();
  logger?.info?.({ fromSerial: from }, 'an import stopped before its last merge: writing the entries it held back');
  const spool = new ImportSpool(dbs, { ...sizes, spillDir }, true);
  let events = 0;
  let written = 0;
  let files = 0;
  /**
   * writes what is held (only the time and tag entries: `indexOnly`); SPOOL_FROM_KEY stays until
   * the last part of the last merge, since the events after this one are not read yet
   */
  const merge = async (last: boolean, indexOnly: boolean) => {
    const n = await spool.merge(env, dbs, { part: RECOVER_PART, indexOnly, keepFrom: from, lastMerge: last });
    written += n.edges + n.entries;
  };
  const flush = async (last: boolean) => {
    if (!last && spool.edges.toFiles) {
      if (spool.edges.full) {
        spool.edges.spill();
        files++;
      }
      if (spool.index.full) await merge(false, true);
      return;
    }
    await merge(last, false);
  };
  // the events first (their serials), so no read transaction stays open across the writes
  const serials: number[] = [];
  for (const key of dbs.events.getKeys({ start: serialKey(from) })) serials.push(readSerial(key));
  // each event's time and tag entries, through the same visit the writer uses (search and expiry
  // were written with the event), and a list's edges: the graph kinds are replaceable, so a stored
  // list is its author's current one
  const indexOnly: Dbs = { ...dbs, search: undefined };
  for (const serial of serials) {
    const value = dbs.events.getBinary(serialKey(serial));
    if (!value) continue;
    const h = decodeHeader(value);
    const { tags } = JSON.parse(jsonOf(value)) as { tags: string[][] };
    const list = graphList(h.kind, tags);
    const ev = { pubkey: h.pubkey, created_at: h.created_at, kind: h.kind, tags, graphOnly: list.only };
    visitEntries(indexOnly, ev, serial, null, (db, key) => {
      if (spool.index.holds(db)) spool.index.add(db, key, serial);
    });
    const author = list.members.length > 0 ? pubkeyId(dbs, h.pubkey) : undefined;
    if (author !== undefined) {
      const ids: number[] = [];
      for (const m of list.members) {
        const id = pubkeyId(dbs, m);
        if (id !== undefined) ids.push(id);
      }
      spool.edges.add(h.kind, author, h.pubkey, ids, serial);
    }
    events++;
    if (spool.full) await flush(false);
  }
  await flush(true);
  logger?.info?.({ events, written, files, seconds: (Date.now() - t0) / 1000 }, 'the entries an import held back are written');
  return events;
}
