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

/** Keys of one index, back to back, and where each starts. */
class Arena {
  buf = Buffer.allocUnsafe(1 << 20);
  len = 0;
  starts = new Uint32Array(1 << 16);
  n = 0;

  push(key: Buffer): void {
    if (this.len + key.length > this.buf.length) {
      const grown = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.len + key.length));
      this.buf.copy(grown, 0, 0, this.len);
      this.buf = grown;
    }
    if (this.n === this.starts.length) {
      const grown = new Uint32Array(this.starts.length * 2);
      grown.set(this.starts);
      this.starts = grown;
    }
    this.starts[this.n++] = this.len;
    this.len += key.copy(this.buf, this.len);
  }

  truncate(n: number): void {
    if (n >= this.n) return;
    this.n = n;
    this.len = n === 0 ? 0 : this.starts[n]!;
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

  /** the merge under way: the index it is at (in arena order) and the next key */
  private merging: { d: number; i: number } | null = null;

  /**
   * Writes held entries of live events into their indexes, index by index, at most `limit` (dead
   * ones skipped uncounted), inside the caller's write transaction, continuing where the last call
   * stopped; `done` once every one is written. The spool is left as it is: clear() once every part
   * has committed, restartDrain() if one did not.
   */
  drain(limit = Infinity): { written: number; done: boolean } {
    const m = (this.merging ??= { d: 0, i: 0 });
    const arenas = [...this.arenas];
    let written = 0;
    while (m.d < arenas.length && written < limit) {
      const [db, a] = arenas[m.d]!;
      for (; m.i < a.n && written < limit; m.i++) {
        const end = m.i + 1 < a.n ? a.starts[m.i + 1]! : a.len;
        if (this.dead.size > 0 && this.dead.has(readSerial(a.buf, end - SERIAL_BYTES))) continue;
        db.putSync(a.buf.subarray(a.starts[m.i]!, end), EMPTY);
        written++;
      }
      if (m.i >= a.n) {
        m.d++;
        m.i = 0;
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
