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
import { hllAdd, HLL_REGISTERS } from '../nostr/nip45.js';
import { addRegistersToCounter, counterOffset, isCountedPair } from './counters.js';
import { counterKey, idPubkey } from './graph.js';
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
  /**
   * author id -> the author's run. One map per kind keyed by the id alone (a small integer): the
   * merge looks a run up for every edge it counts, and a key of kind and id together was a heap
   * number, hashed as such.
   */
  readonly runs = new Map<number, Run>();

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

/**
 * The pubkeys of the authors whose edges are held, 32 bytes each side by side, found by the
 * author's id through a dense array (4 bytes per pubkey id up to the largest held author's). The
 * merge reads one for every edge it counts: through a map of runs to a Buffer per author it was
 * three or four cache misses an edge, most of the merge's own time.
 */
class HeldAuthors {
  /** author id -> slot + 1 (0: none) */
  slotOf = new Int32Array(1 << 16);
  bytes = Buffer.allocUnsafe(32 * 4096);
  private slots = 0;

  note(author: number, pubkeyHex: string): void {
    if (author >= this.slotOf.length) {
      const grown = new Int32Array(Math.max(author + 1, 2 * this.slotOf.length));
      grown.set(this.slotOf);
      this.slotOf = grown;
    }
    if (this.slotOf[author] !== 0) return;
    if (32 * (this.slots + 1) > this.bytes.length) {
      const grown = Buffer.allocUnsafe(2 * this.bytes.length);
      this.bytes.copy(grown, 0, 0, 32 * this.slots);
      this.bytes = grown;
    }
    this.bytes.write(pubkeyHex, 32 * this.slots, 32, 'hex');
    this.slotOf[author] = ++this.slots;
  }

  clear(): void {
    this.slotOf.fill(0);
    this.slots = 0;
  }
}

/** the registers of one followee's new followers, gathered by a merge (drain) */
const mergeRegisters = new Uint8Array(HLL_REGISTERS);

/** A pubkey id never allocated (graph.ts allocId stops below it): a taken-out edge, which sorts last. */
const DEAD = 0xffffffff;

export class EdgeSpool {
  private readonly kinds = new Map<number, KindEdges>();
  private readonly authors = new HeldAuthors();
  /** the first serial spooled since the spool was last empty (0: empty) */
  from = 0;
  /** the spool's state when the write transaction began, to go back to if it does not commit */
  private mark: { lens: Map<number, number>; from: number; added: Run[]; taken: Run[] } | null = null;
  /** a part of a merge did not commit (restartDrain): some held edges may be in the graph already */
  private restarted = false;

  constructor(
    /** edges held before the writer merges them */
    readonly max: number,
    /**
     * filled again from the stored events after a kill (spool.ts recoverSpool): some of its edges
     * were written and counted with their events (a list replaced within the import)
     */
    private readonly refilled = false,
  ) {}

  /** edges held (taken-out ones included until the next merge) */
  get size(): number {
    let n = 0;
    for (const e of this.kinds.values()) n += e.len;
    return n;
  }

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
    return this.kinds.get(kind)?.runs.has(author) === true;
  }

  /** A write transaction begins (writer.ts): what rollback() takes back starts here. */
  begin(): void {
    const lens = new Map<number, number>();
    for (const [k, e] of this.kinds) lens.set(k, e.len);
    this.mark = { lens, from: this.from, added: [], taken: [] };
  }

  /** The transaction committed. */
  commit(): void {
    this.mark = null;
  }

  /** The transaction did not commit: the edges it spooled go, the ones it took out come back. */
  rollback(): void {
    const m = this.mark;
    if (!m) return;
    for (const run of m.added) {
      const runs = this.edges(run.kind).runs;
      if (runs.get(run.author) === run) runs.delete(run.author);
    }
    for (const [k, e] of this.kinds) e.len = m.lens.get(k) ?? 0;
    for (const run of m.taken) this.restore(run);
    this.from = m.from;
    this.mark = null;
  }

  /** Holds the edges of a new list (its author has none in the graph or here). Returns what takes them back. */
  add(kind: number, author: number, pubkey: string, followees: number[], serial: number): () => void {
    const e = this.edges(kind);
    const run: Run = { kind, author, start: e.len, ids: followees };
    this.authors.note(author, pubkey);
    const from = this.from;
    for (const f of followees) e.push(f, author);
    if (this.from === 0) this.from = serial;
    e.runs.set(author, run);
    this.mark?.added.push(run);
    // an operation that throws is taken back alone, its last write first (txn.ts run)
    return () => {
      e.len = run.start;
      e.runs.delete(author);
      this.from = from;
    };
  }

  /**
   * Takes the author's spooled edges out: returns their followee ids (the caller writes them to the
   * graph) and what puts them back if the operation is taken back.
   */
  take(kind: number, author: number): { followees: number[]; undo: () => void } {
    const e = this.edges(kind);
    const run = e.runs.get(author)!;
    const w = e.words;
    for (let i = 0; i < run.ids.length; i++) w[2 * (run.start + i)] = w[2 * (run.start + i) + 1] = DEAD;
    e.runs.delete(author);
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
    e.runs.set(run.author, run);
  }

  /** the merge under way: each kind's edges sorted (a copy: the spool stays as it is until clear()), and how far it got */
  private merging: { kinds: Array<{ kind: number; words: Uint32Array; len: number }>; k: number; i: number } | null = null;

  /**
   * Writes held edges into the graph in key order, at most `limit`, inside the caller's write
   * transaction, continuing where the last call stopped; `done` once every edge is written. The
   * spool itself is left as it is (a transaction may still not commit): clear() once every part
   * has committed, restartDrain() if one did not.
   */
  drain(dbs: Dbs, limit = Infinity): { written: number; done: boolean } {
    if (!this.merging) {
      const kinds: Array<{ kind: number; words: Uint32Array; len: number }> = [];
      for (const [kind, e] of [...this.kinds].sort((a, b) => a[0] - b[0])) {
        if (e.len === 0) continue;
        const sorted = new BigUint64Array(e.len);
        new Uint32Array(sorted.buffer).set(e.words.subarray(0, 2 * e.len));
        sorted.sort();
        kinds.push({ kind, words: new Uint32Array(sorted.buffer), len: e.len });
      }
      this.merging = { kinds, k: 0, i: 0 };
    }
    const m = this.merging;
    // otherwise a held edge's author had none in the graph
    const mayExist = this.refilled || this.restarted;
    const key = Buffer.allocUnsafe(10);
    const graph = dbs.graph.graph;
    let written = 0;
    while (m.k < m.kinds.length && written < limit) {
      const { kind, words: w, len } = m.kinds[m.k]!;
      const pks = this.authors.bytes;
      const slotOf = this.authors.slotOf;
      key.writeUInt16BE(kind, 0);
      // The edges are counted here, a followee's new followers at once (graph.ts noted none of
      // them): their registers gathered from the followers' pubkey bytes, then added to the
      // followee's counter in one write.
      const counted = isCountedPair('p', kind);
      let followee = -1;
      let counterOf: Buffer | null = null;
      let offset = 0;
      let followers = 0;
      const count = () => {
        if (counterOf && followers > 0) addRegistersToCounter(dbs.tagcount, counterOf, mergeRegisters, followers);
        followers = 0;
      };
      const start = (f: number) => {
        followee = f;
        if (!counted) return;
        const pk = idPubkey(dbs, f);
        counterOf = pk === undefined ? null : Buffer.from(counterKey(pk, kind));
        if (counterOf) offset = counterOffset(counterOf);
        mergeRegisters.fill(0);
      };
      for (; m.i < len && written < limit; m.i++) {
        const f = w[2 * m.i + 1]!;
        if (f === DEAD) {
          m.i = len; // taken-out edges sort last
          break;
        }
        if (f !== followee) {
          count();
          start(f);
        }
        const follower = w[2 * m.i]!;
        key.writeUInt32BE(f, 2);
        key.writeUInt32BE(follower, 6);
        // an edge that may be there already (mayExist) is looked up, so that it is not counted twice
        if (counted && mayExist && graph.doesExist(key)) continue;
        graph.putSync(key, EMPTY);
        if (counterOf) {
          hllAdd(mergeRegisters, pks, 32 * (slotOf[follower]! - 1), offset);
          followers++;
        }
        written++;
      }
      count();
      if (m.i >= len) {
        m.k++;
        m.i = 0;
      }
    }
    return { written, done: m.k >= m.kinds.length };
  }

  /** A part of the merge did not commit: the next drain() starts over (writing an edge twice is harmless, counting it twice is not). */
  restartDrain(): void {
    this.merging = null;
    this.restarted = true;
  }

  /** Empties the spool (its edges are in the graph: drain() committed). */
  clear(): void {
    this.merging = null;
    this.restarted = false;
    for (const e of this.kinds.values()) {
      e.len = 0;
      e.runs.clear();
    }
    this.authors.clear();
    this.from = 0;
    this.mark = null;
  }
}

