// Reverse range scans and their k-way merge, newest first.
//
// A cursor reads its range in chunks (getKeys with a limit, resuming after the last key) rather
// than holding an LMDB iterator open: no read transaction stays pinned across the scan's yields
// to the event loop, and many ranges cost little up front (chunks start small and double).
import { SERIAL_BYTES, SUFFIX_BYTES } from './keys.js';
import type { ScanRange } from './planner.js';
import type { BinDb } from './schema.js';

/** Most keys one read of a cursor takes (its chunks start small and double). */
export const MAX_CHUNK = 1024;

/** The range options of a cursor's next chunk, newest first: from the range's start, or after the last key read. */
export function nextChunk(range: { start: Buffer; end: Buffer }, last: Buffer | null, chunk: number) {
  const { start, end } = range;
  return last ? { start: last, exclusiveStart: true, end, reverse: true, limit: chunk } : { start, end, reverse: true, limit: chunk };
}

/**
 * A newest-first source of time-ordered keys (created_at + serial at the end) for the merge: a
 * range of an index (RangeCursor) or a follower set of the graph (graph.ts). `ca` and `serial`
 * describe the key head() returns, valid once head() has returned it.
 */
export interface KeyCursor {
  ca: number;
  serial: number;
  /** The current key, or undefined at the end. */
  head(): Buffer | undefined;
  advance(): void;
}

export class RangeCursor implements KeyCursor {
  private keys: Buffer[] = [];
  private i = 0;
  private last: Buffer | null = null;
  private exhausted = false;
  /** created_at and serial of the head key, decoded once: the merge compares numbers, not Buffers */
  ca = 0;
  serial = 0;

  constructor(
    private readonly db: BinDb,
    private readonly range: ScanRange,
    private chunk: number,
  ) {}

  /** The current key, or undefined at the end of the range. */
  head(): Buffer | undefined {
    if (this.i < this.keys.length) return this.keys[this.i];
    if (this.exhausted) return undefined;
    this.refill();
    return this.keys[this.i];
  }

  advance(): void {
    this.i++;
    this.decodeHead();
  }

  private decodeHead(): void {
    const k = this.keys[this.i];
    if (k === undefined) return;
    this.ca = k.readUInt32BE(k.length - SUFFIX_BYTES);
    this.serial = k.readUIntBE(k.length - SERIAL_BYTES, SERIAL_BYTES);
  }

  private refill(): void {
    const opts = nextChunk(this.range, this.last, this.chunk);
    // a plain loop: Array.from over lmdb-js's iterator showed in the profile of a 2,000-range scan
    const keys: Buffer[] = [];
    for (const k of this.db.getKeys(opts)) keys.push(k);
    this.keys = keys;
    this.i = 0;
    if (this.keys.length < this.chunk) this.exhausted = true;
    if (this.keys.length > 0) this.last = this.keys[this.keys.length - 1];
    this.chunk = Math.min(this.chunk * 2, MAX_CHUNK);
    this.decodeHead();
  }
}

const firstChunk = (wanted: number, sources: number): number => Math.max(2, Math.min(MAX_CHUNK, Math.ceil((wanted + 1) / Math.max(1, sources)) + 1));

/** Orders cursors by their head's created_at, then serial (larger = newer). */
const newer = (a: KeyCursor, b: KeyCursor): number => a.ca - b.ca || a.serial - b.serial;

/**
 * Merges the ranges' keys newest first (created_at desc, then serial desc). A key present in
 * several ranges (an event with two of the wanted tag values) comes out once: equal suffixes are
 * adjacent in this order.
 */
export class MergeScan {
  private readonly heap: KeyCursor[] = [];
  private lastSerial = -1;

  /** `more`: other sources to merge in (the graph's, graph.ts), made with the first chunk size. */
  constructor(db: BinDb, ranges: ScanRange[], wanted: number, more?: (firstChunk: number) => KeyCursor[]) {
    // First chunks sized so that all ranges together read about what the limit needs.
    const extra = more ? more(firstChunk(wanted, ranges.length + 1)) : [];
    const first = firstChunk(wanted, ranges.length + extra.length);
    for (const r of ranges) {
      const c = new RangeCursor(db, r, first);
      if (c.head() !== undefined) this.push(c);
    }
    for (const c of extra) if (c.head() !== undefined) this.push(c);
  }

  /** The next key, or undefined when every range is done. */
  next(): Buffer | undefined {
    for (;;) {
      const top = this.heap[0];
      if (top === undefined) return undefined;
      const key = top.head()!;
      const serial = top.serial;
      top.advance();
      if (top.head() === undefined) this.popTop();
      else this.siftDown(0);
      if (serial === this.lastSerial) continue;
      this.lastSerial = serial;
      return key;
    }
  }

  private push(c: KeyCursor): void {
    const h = this.heap;
    h.push(c);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (newer(h[i], h[p]) <= 0) break;
      [h[i], h[p]] = [h[p], h[i]];
      i = p;
    }
  }

  private popTop(): void {
    const h = this.heap;
    const last = h.pop()!;
    if (h.length > 0) {
      h[0] = last;
      this.siftDown(0);
    }
  }

  private siftDown(i: number): void {
    const h = this.heap;
    const n = h.length;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < n && newer(h[l], h[m]) > 0) m = l;
      if (r < n && newer(h[r], h[m]) > 0) m = r;
      if (m === i) return;
      [h[i], h[m]] = [h[m], h[i]];
      i = m;
    }
  }
}
