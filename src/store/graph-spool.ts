// The import's follow edges, held back and merged into the graph in key order (spool.ts).
//
// A new follow list writes one edge per follow, and in a large graph nearly every edge lands on a
// leaf page of its own: a transaction of the import's size (tens of thousands of edges) dirties a
// page per edge, and each page is copied and written back (~40 µs an edge on this machine class,
// ../shared/perf/lmdb-page-cost). Written sorted, millions to a transaction, each dirtied page takes
// dozens of edges (~6 µs each). So while the import runs, the edges of a list whose author had no
// current list (nearly every list of a first import) are held here instead of written.
//
// Only additions are held: a list whose author has edges here and that is replaced or deleted
// takes its held edges out and writes them to the graph first (take), then the difference as
// usual. So between merges the graph holds a subset of the true edges, and the missing ones are
// the members of current lists stored since the spool was last empty.
import { EMPTY } from './keys.js';
import type { Dbs } from './schema.js';

/** a spooled author's edges: where they are in its kind's array */
interface Run {
  kind: number;
  author: number;
  start: number;
  /** followee ids */
  ids: number[];
}

/** Edges of one kind: pairs of 32-bit words, follower then followee (as little-endian 64-bit keys they sort by followee, then follower). */
class KindEdges {
  words = new Uint32Array(2 * 65536);
  len = 0;

  push(followee: number, follower: number): void {
    if (2 * this.len + 2 > this.words.length) {
      const grown = new Uint32Array(this.words.length * 2);
      grown.set(this.words);
      this.words = grown;
    }
    this.words[2 * this.len] = follower;
    this.words[2 * this.len + 1] = followee;
    this.len++;
  }
}

/** A pubkey id never allocated (graph.ts allocId stops below it): a taken-out edge, which sorts last. */
const DEAD = 0xffffffff;

const runKey = (kind: number, author: number): number => kind * 2 ** 32 + author;

export class EdgeSpool {
  private readonly kinds = new Map<number, KindEdges>();
  /** runKey -> the author's run */
  private readonly runs = new Map<number, Run>();
  /** edges held (taken-out ones included until the next merge) */
  size = 0;
  /** the first serial spooled since the spool was last empty (0: empty) */
  from = 0;
  /** the spool's state when the write transaction began, to go back to if it does not commit */
  private mark: { lens: Map<number, number>; size: number; from: number; added: Run[]; taken: Run[] } | null = null;

  constructor(
    /** edges held before the writer merges them */
    readonly max: number,
  ) {}

  private edges(kind: number): KindEdges {
    let e = this.kinds.get(kind);
    if (!e) this.kinds.set(kind, (e = new KindEdges()));
    return e;
  }

  get full(): boolean {
    return this.size >= this.max;
  }

  /** Whether the author's list of this kind has edges here. */
  holds(kind: number, author: number): boolean {
    return this.runs.has(runKey(kind, author));
  }

  /** A write transaction begins (writer.ts): what rollback() takes back starts here. */
  begin(): void {
    const lens = new Map<number, number>();
    for (const [k, e] of this.kinds) lens.set(k, e.len);
    this.mark = { lens, size: this.size, from: this.from, added: [], taken: [] };
  }

  /** The transaction committed. */
  commit(): void {
    this.mark = null;
  }

  /** The transaction did not commit: the edges it spooled go, the ones it took out come back. */
  rollback(): void {
    const m = this.mark;
    if (!m) return;
    for (const run of m.added) if (this.runs.get(runKey(run.kind, run.author)) === run) this.runs.delete(runKey(run.kind, run.author));
    for (const [k, e] of this.kinds) e.len = m.lens.get(k) ?? 0;
    for (const run of m.taken) this.restore(run);
    this.size = m.size;
    this.from = m.from;
    this.mark = null;
  }

  /** Holds the edges of a new list (its author has none in the graph or here). Returns what takes them back. */
  add(kind: number, author: number, followees: number[], serial: number): () => void {
    const e = this.edges(kind);
    const run: Run = { kind, author, start: e.len, ids: followees };
    const before = { size: this.size, from: this.from };
    for (const f of followees) e.push(f, author);
    this.size += followees.length;
    if (this.from === 0) this.from = serial;
    this.runs.set(runKey(kind, author), run);
    this.mark?.added.push(run);
    // an operation that throws is taken back alone, its last write first (txn.ts run)
    return () => {
      e.len = run.start;
      this.runs.delete(runKey(kind, author));
      this.size = before.size;
      this.from = before.from;
    };
  }

  /**
   * Takes the author's spooled edges out: returns their followee ids (the caller writes them to the
   * graph) and what puts them back if the operation is taken back.
   */
  take(kind: number, author: number): { followees: number[]; undo: () => void } {
    const run = this.runs.get(runKey(kind, author))!;
    const w = this.edges(kind).words;
    for (let i = 0; i < run.ids.length; i++) w[2 * (run.start + i)] = w[2 * (run.start + i) + 1] = DEAD;
    this.runs.delete(runKey(kind, author));
    this.mark?.taken.push(run);
    return { followees: run.ids, undo: () => this.restore(run) };
  }

  private restore(run: Run): void {
    const e = this.edges(run.kind);
    // a run past the end was spooled by the transaction being taken back: it is gone with it
    if (run.start + run.ids.length > e.len) return;
    for (let i = 0; i < run.ids.length; i++) {
      e.words[2 * (run.start + i)] = run.author;
      e.words[2 * (run.start + i) + 1] = run.ids[i]!;
    }
    this.runs.set(runKey(run.kind, run.author), run);
  }

  /**
   * Writes every held edge into the graph in key order, inside the caller's write transaction;
   * returns the edges written. The spool itself is left as it is (the transaction may still not
   * commit): clear() once it has.
   */
  drain(dbs: Dbs): number {
    const key = Buffer.allocUnsafe(10);
    let written = 0;
    for (const [kind, e] of this.kinds) {
      if (e.len === 0) continue;
      const sorted = new BigUint64Array(e.len);
      new Uint32Array(sorted.buffer).set(e.words.subarray(0, 2 * e.len));
      sorted.sort();
      const w = new Uint32Array(sorted.buffer);
      key.writeUInt16BE(kind, 0);
      for (let i = 0; i < e.len; i++) {
        const followee = w[2 * i + 1]!;
        if (followee === DEAD) break; // taken-out edges sort last
        key.writeUInt32BE(followee, 2);
        key.writeUInt32BE(w[2 * i]!, 6);
        dbs.graph.graph.putSync(key, EMPTY);
        written++;
      }
    }
    return written;
  }

  /** Empties the spool (its edges are in the graph: drain() committed). */
  clear(): void {
    for (const e of this.kinds.values()) e.len = 0;
    this.runs.clear();
    this.size = 0;
    this.from = 0;
    this.mark = null;
  }
}

