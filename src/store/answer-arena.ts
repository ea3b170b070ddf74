// The shared memory that kept answers live in (answer-cache.ts): one SharedArrayBuffer per answer
// cache, the size of its budget, cut into extents by first fit. Kept answers are lent to the main
// thread as they are, without a copy, so they must be shared memory; and shared memory must not be
// let go to the garbage collector one answer at a time, because V8 does not count it towards its
// next collection (dropped answers once piled up to 3.8 GB that way). One buffer that lives as long
// as the cache is never let go: an extent freed is taken again by the next answer that fits. The
// operating system commits its pages as they are first written, so an idle cache costs nothing.

/** Extents start at multiples of this: an answer's bytes are long, its alignment costs nothing. */
const ALIGN = 64;

export class AnswerArena {
  readonly sab: SharedArrayBuffer;
  /** free extents [start, end), sorted by start, none adjacent (they are merged) */
  private free: Array<[number, number]>;

  constructor(readonly size: number) {
    this.sab = new SharedArrayBuffer(size);
    this.free = [[0, size]];
  }

  /** The start of a new extent of `n` bytes, or -1 when no free extent is large enough. */
  alloc(n: number): number {
    const need = Math.ceil(n / ALIGN) * ALIGN;
    for (let i = 0; i < this.free.length; i++) {
      const ext = this.free[i]!;
      if (ext[1] - ext[0] < need) continue;
      const start = ext[0];
      if (ext[1] - ext[0] === need) this.free.splice(i, 1);
      else ext[0] += need;
      return start;
    }
    return -1;
  }

  /** Gives back the extent alloc(n) returned at `start`. */
  release(start: number, n: number): void {
    const end = start + Math.ceil(n / ALIGN) * ALIGN;
    let i = 0;
    while (i < this.free.length && this.free[i]![0] < start) i++;
    const prev = i > 0 ? this.free[i - 1]! : null;
    const next = i < this.free.length ? this.free[i]! : null;
    if (prev && prev[1] > start) throw new Error(`answer arena: extent ${start} released twice`);
    if (next && next[0] < end) throw new Error(`answer arena: extent ${start} released twice`);
    if (prev && prev[1] === start) {
      prev[1] = end;
      if (next && next[0] === end) {
        prev[1] = next[1];
        this.free.splice(i, 1);
      }
    } else if (next && next[0] === end) next[0] = start;
    else this.free.splice(i, 0, [start, end]);
  }

  /** bytes in free extents */
  freeBytes(): number {
    let n = 0;
    for (const [s, e] of this.free) n += e - s;
    return n;
  }

  /** the largest free extent */
  largestFree(): number {
    let n = 0;
    for (const [s, e] of this.free) n = Math.max(n, e - s);
    return n;
  }
}
