// The import's time and tag index entries, held back and written many to a transaction (spool.ts).
//
// The created, kind, pubkey, pubkind and tag+kind indexes are read only by queries, never by the
// storage rules, so an import can write them later: every key of these indexes ends in created_at
// and serial, the stored events are ordered by serial, and an entry held here belongs to an event
// whose serial is at least `from`. An event removed while its entries are held (a list replaced
// again in the same import) is remembered as dead, and the merge skips its entries.
import type { Visit } from './indexer.js';
import { EMPTY, readSerial, SERIAL_BYTES } from './keys.js';
import type { BinDb, Dbs } from './schema.js';

/**
 * Keys that agree in their first bits are sorted further only when there are more of them than
 * this: a few leaf pages' worth lands in a few pages in any order. (It does not make the sort
 * cheaper: the first merge of 4,800,000 entries took 10.4 s with it and 10.6 s without.)
 */
const TIED_RUN = 256;

/** bytes of one chunk of an arena (a power of two: a key's offset names its chunk by its high bits) */
const CHUNK_BITS = 20;
const CHUNK = 1 << CHUNK_BITS;

/**
 * Keys of one index, back to back in chunks of CHUNK bytes, and where each starts (an offset over
 * the chunks; a key never straddles two: one that does not fit starts the next chunk). Chunks
 * rather than one buffer doubled as it fills: the doubled buffer was up to twice the keys, kept at
 * its largest between merges, and both it and its copy were alive while it grew.
 */
class Arena {
  chunks: Buffer[] = [];
  /** bytes used of each chunk */
  fill: number[] = [];
  /** where the next key goes, as an offset over the chunks */
  len = 0;
  starts = new Uint32Array(1 << 16);
  n = 0;

  push(key: Buffer): void {
    if (key.length > CHUNK) throw new RangeError(`index key of ${key.length} bytes`);
    let c = this.len >>> CHUNK_BITS;
    let at = this.len & (CHUNK - 1);
    // the current chunk's fill already ends at `at` (kept by every push and by truncate)
    if (at + key.length > CHUNK) {
      c++;
      at = 0;
    }
    if (c === this.chunks.length) {
      this.chunks.push(Buffer.allocUnsafe(CHUNK));
      this.fill.push(0);
    }
    if (this.n === this.starts.length) {
      const grown = new Uint32Array(this.starts.length * 2);
      grown.set(this.starts);
      this.starts = grown;
    }
    this.starts[this.n++] = c * CHUNK + at;
    key.copy(this.chunks[c]!, at);
    this.len = c * CHUNK + at + key.length;
    this.fill[c] = at + key.length;
  }

  /** Key i, as a view of its chunk. */
  key(i: number): Buffer {
    const start = this.starts[i]!;
    const c = start >>> CHUNK_BITS;
    return this.chunks[c]!.subarray(start & (CHUNK - 1), this.end(i) - c * CHUNK);
  }

  /** Where key i ends, as an offset over the chunks. */
  private end(i: number): number {
    const start = this.starts[i]!;
    const c = start >>> CHUNK_BITS;
    const next = i + 1 < this.n ? this.starts[i + 1]! : this.len;
    return next >>> CHUNK_BITS === c && next > start ? next : c * CHUNK + this.fill[c]!;
  }

  /** Bytes at..at+3 of key i as a big-endian number, zeros past its end (no view made). */
  private word(i: number, at: number): number {
    const start = this.starts[i]!;
    const chunk = this.chunks[start >>> CHUNK_BITS]!;
    const from = (start & (CHUNK - 1)) + at;
    const left = this.end(i) - start - at;
    if (left >= 4) return chunk.readUInt32BE(from);
    let w = 0;
    for (let b = 0; b < 4; b++) w = w * 256 + (b < left ? chunk[from + b]! : 0);
    return w;
  }

  /**
   * The keys' indexes in key order (but within runs of at most TIED_RUN). A merge writes them so,
   * in parts of consecutive key ranges: a part dirties the index's pages of its range only, and
   * each page of the index once in the whole merge. In the order held, the pubkey-led indexes' keys
   * land anywhere, and every part rewrote nearly every leaf page of those indexes (at 1,500,000
   * events of the 5,000,000 set, one part dirtied 117 MB of pages, which LMDB keeps for reuse for
   * as long as the store is open).
   *
   * Sorted as doubles: a key's first bits, as many as fit beside its index in a double's 53 (29 at
   * 16 M keys). Keys that agree in those bits are sorted again by their next bits, and so on (a
   * radix sort by the most significant bits that goes only as deep as the keys agree). The first
   * bits alone left ties in the order held, and some ranges tie on them: every relay-list `r` tag
   * begins with "r", its length and "ws" (tag+kind keys), so each part of those wrote across the
   * whole `r` range, a part dirtied the range's pages whatever its size, and LMDB kept them
   * (docs/storage.md, "The staircase found").
   */
  order(): Float64Array {
    const n = this.n;
    const indexBits = Math.max(1, Math.ceil(Math.log2(n + 1)));
    // at least 24: a run that agrees in them agrees in three whole bytes, and goes on three bytes on
    const prefixBits = Math.min(32, 53 - indexBits);
    const scale = 2 ** indexBits;
    const drop = 2 ** (32 - prefixBits);
    const sorted = new Float64Array(n);
    for (let i = 0; i < n; i++) sorted[i] = Math.floor(this.word(i, 0) / drop) * scale + i;
    sorted.sort();
    // runs [lo, hi) whose keys agree up to byte `at`, to be sorted by bytes at.. (three bytes a step)
    const runs: number[] = [];
    this.pushTies(sorted, 0, n, 3, scale, runs);
    while (runs.length > 0) {
      const at = runs.pop()!;
      const hi = runs.pop()!;
      const lo = runs.pop()!;
      let longest = 0;
      for (let k = lo; k < hi; k++) {
        const i = sorted[k]! % scale;
        longest = Math.max(longest, this.end(i) - this.starts[i]!);
        sorted[k] = Math.floor(this.word(i, at) / drop) * scale + i;
      }
      sorted.subarray(lo, hi).sort();
      if (at + 3 < longest) this.pushTies(sorted, lo, hi, at + 3, scale, runs);
    }
    for (let i = 0; i < n; i++) sorted[i] = sorted[i]! % scale;
    return sorted;
  }

  /** Pushes each run of more than TIED_RUN in sorted[lo, hi) that agrees in its prefix, to be sorted from byte `at`. */
  private pushTies(sorted: Float64Array, lo: number, hi: number, at: number, scale: number, runs: number[]): void {
    let first = lo;
    let prefix = lo < hi ? Math.floor(sorted[lo]! / scale) : 0;
    for (let k = lo + 1; k <= hi; k++) {
      const p = k < hi ? Math.floor(sorted[k]! / scale) : -1;
      if (p === prefix) continue;
      if (k - first > TIED_RUN) runs.push(first, k, at);
      first = k;
      prefix = p;
    }
  }

  truncate(n: number): void {
    if (n >= this.n) return;
    this.n = n;
    this.len = n === 0 ? 0 : this.starts[n]!;
    const c = this.len >>> CHUNK_BITS;
    if (c < this.fill.length) this.fill[c] = this.len & (CHUNK - 1);
  }
}

/** Where the spool stood: what an operation or a transaction that is taken back returns to. */
export interface IndexSpoolMark {
  counts: Map<BinDb, number>;
  deadLog: number;
  from: number;
}

export class IndexSpool {
  private readonly arenas = new Map<BinDb, Arena>();
  /** serials of events removed while their entries were held */
  private readonly dead = new Set<number>();
  /** the dead serials in the order they were added (a mark is a length of it) */
  private deadLog: number[] = [];
  /** the first serial held since the spool was last empty (0: empty) */
  from = 0;
  private txnMark: IndexSpoolMark | null = null;

  constructor(
    dbs: Dbs,
    /** bytes of keys held before the writer merges them */
    readonly maxBytes: number,
  ) {
    for (const db of [dbs.created, dbs.kind, dbs.pubkey, dbs.pubkind, dbs.tagkind]) this.arenas.set(db, new Arena());
  }

  /** Whether this index's entries are held here. */
  holds(db: BinDb): boolean {
    return this.arenas.has(db);
  }

  /** Whether an event's entries are here rather than in the indexes (it was stored since the spool was last empty). */
  holdsSerial(serial: number): boolean {
    return this.from !== 0 && serial >= this.from;
  }

  get bytes(): number {
    let b = 0;
    for (const a of this.arenas.values()) b += a.len;
    return b;
  }

  /** keys held (dead ones included) */
  get size(): number {
    let n = 0;
    for (const a of this.arenas.values()) n += a.n;
    return n;
  }

  get full(): boolean {
    return this.bytes >= this.maxBytes;
  }

  /** Holds one entry of the event with this serial (the key is copied). */
  add(db: BinDb, key: Buffer, serial: number): void {
    this.arenas.get(db)!.push(key);
    if (this.from === 0) this.from = serial;
  }

  /** A visit that holds the event's entries of the held indexes and writes the others (indexer.ts putEntries). */
  putVisit(serial: number): Visit {
    return (db, key, value) => (this.arenas.has(db) ? this.add(db, key, serial) : db.putSync(key, value ?? EMPTY));
  }

  /**
   * A visit that removes the event's entries, for an event being removed (indexer.ts
   * removeEntries): if they are held, the event is marked dead instead and only the others are
   * removed; undefined when they are in the indexes (the usual removal).
   */
  removeVisit(serial: number): Visit | undefined {
    if (!this.holdsSerial(serial)) return undefined;
    this.kill(serial);
    return (db, key) => void (this.arenas.has(db) || db.removeSync(key));
  }

  /** The event with this serial was removed: its held entries are not to be written. */
  kill(serial: number): void {
    if (this.dead.has(serial)) return;
    this.dead.add(serial);
    this.deadLog.push(serial);
  }

  mark(): IndexSpoolMark {
    const counts = new Map<BinDb, number>();
    for (const [db, a] of this.arenas) counts.set(db, a.n);
    return { counts, deadLog: this.deadLog.length, from: this.from };
  }

  /** Back to a mark: the entries held and the events killed since are forgotten. */
  restore(m: IndexSpoolMark): void {
    for (const [db, a] of this.arenas) a.truncate(m.counts.get(db) ?? 0);
    for (let i = m.deadLog; i < this.deadLog.length; i++) this.dead.delete(this.deadLog[i]!);
    this.deadLog.length = Math.min(this.deadLog.length, m.deadLog);
    this.from = m.from;
  }

  begin(): void {
    this.txnMark = this.mark();
  }

  commit(): void {
    this.txnMark = null;
  }

  rollback(): void {
    if (this.txnMark) this.restore(this.txnMark);
    this.txnMark = null;
  }

  /** the merge under way: the index it is at (in arena order), its keys' order and the next key in it */
  private merging: { d: number; order: Float64Array | null; i: number } | null = null;

  /**
   * Writes held entries of live events into their indexes, index by index, at most `limit` (dead
   * ones skipped uncounted), inside the caller's write transaction, continuing where the last call
   * stopped; `done` once every one is written. The spool is left as it is: clear() once every part
   * has committed, restartDrain() if one did not.
   */
  drain(limit = Infinity): { written: number; done: boolean } {
    const m = (this.merging ??= { d: 0, order: null, i: 0 });
    const arenas = [...this.arenas];
    let written = 0;
    while (m.d < arenas.length && written < limit) {
      const [db, a] = arenas[m.d]!;
      const order = (m.order ??= a.order());
      for (; m.i < a.n && written < limit; m.i++) {
        const key = a.key(order[m.i]!);
        if (this.dead.size > 0 && this.dead.has(readSerial(key, key.length - SERIAL_BYTES))) continue;
        db.putSync(key, EMPTY);
        written++;
      }
      if (m.i >= a.n) {
        m.d++;
        m.i = 0;
        m.order = null;
      }
    }
    return { written, done: m.d >= arenas.length };
  }

  /** A part of the merge did not commit: the next drain() starts over. */
  restartDrain(): void {
    this.merging = null;
  }

  clear(): void {
    this.merging = null;
    for (const a of this.arenas.values()) a.truncate(0);
    this.dead.clear();
    this.deadLog = [];
    this.from = 0;
    this.txnMark = null;
  }
}
