// The follow and mute graphs as compressed sparse rows over pubkey ids: each list is one row
// (its author and a run of target ids in a chunked Uint32Array), so 100 M edges take 400 MB of
// typed arrays and no JavaScript object per edge. Rows come in whatever order the store gives
// them; a pubkey has at most one row per graph (kinds 3 and 10000 are replaceable). Rows are
// either added whole (add) or laid out from their lengths and filled in any order (layout, set,
// tidy): the store's graph comes followee-major, the rows are author-major.

/** Targets tidied between two pauses (Rows.tidy). */
const TIDY_SLICE = 1_000_000;

/** Target ids are kept in chunks of this many, so growing never copies what is there. */
const CHUNK_BITS = 22;
const CHUNK = 1 << CHUNK_BITS;

/** A growable typed array (grown by doubling: what is there is copied once per doubling). */
class Growable<A extends Uint32Array | Float64Array> {
  length = 0;
  constructor(public data: A) {}
  push(v: number): void {
    if (this.length === this.data.length) {
      const bigger = new (this.data.constructor as new (n: number) => A)(this.data.length * 2);
      bigger.set(this.data);
      this.data = bigger;
    }
    this.data[this.length++] = v;
  }
}

/** A growable Uint32Array. */
export class U32List extends Growable<Uint32Array> {
  constructor() {
    super(new Uint32Array(1024));
  }
}

/** A growable Float64Array (serials need more than 32 bits). */
export class F64List extends Growable<Float64Array> {
  constructor() {
    super(new Float64Array(1024));
  }
}

/** A growable Uint32Array in chunks: growing never copies (4 bytes an element, a chunk at most spare). */
export class U32Chunks {
  /** element i is chunks[i >>> BITS][i & MASK] */
  readonly chunks: Uint32Array[] = [];
  length = 0;
  static readonly BITS = 20;
  static readonly MASK = (1 << U32Chunks.BITS) - 1;
  push(v: number): void {
    const c = this.length >>> U32Chunks.BITS;
    if (c === this.chunks.length) this.chunks.push(new Uint32Array(1 << U32Chunks.BITS));
    this.chunks[c]![this.length & U32Chunks.MASK] = v;
    this.length++;
  }
  at(i: number): number {
    return this.chunks[i >>> U32Chunks.BITS]![i & U32Chunks.MASK]!;
  }
}

export class Rows {
  /** author id of each row */
  readonly src = new U32List();
  /** start of each row in the targets, plus one past the last */
  readonly start = new U32List();
  private chunks: Uint32Array[] = [];
  edges = 0;

  constructor() {
    this.start.push(0);
  }

  /** Adds a row; `targets` is sorted and de-duplicated here (a list naming someone twice counts once). */
  add(src: number, targets: Uint32Array): void {
    targets.sort();
    let prev = -1;
    for (let i = 0; i < targets.length; i++) {
      const t = targets[i]!;
      if (t === prev || t === src) continue; // duplicates, and following oneself
      prev = t;
      const c = this.edges >>> CHUNK_BITS;
      if (c === this.chunks.length) this.chunks.push(new Uint32Array(CHUNK));
      this.chunks[c]![this.edges & (CHUNK - 1)] = t;
      this.edges++;
    }
    this.src.push(src);
    this.start.push(this.edges);
  }

  /** Adds a row whose first n targets are sorted, distinct and not `src`: copied as they are (no sort). */
  addSorted(src: number, targets: Uint32Array, n: number): void {
    for (let i = 0; i < n; i++) {
      const c = this.edges >>> CHUNK_BITS;
      if (c === this.chunks.length) this.chunks.push(new Uint32Array(CHUNK));
      this.chunks[c]![this.edges & (CHUNK - 1)] = targets[i]!;
      this.edges++;
    }
    this.src.push(src);
    this.start.push(this.edges);
  }

  /**
   * Lays out one row per author whose length is not 0, in author order, to be filled with set()
   * and then tidy(). Returns the first slot of each author's row (advance it per target set).
   * Only on an empty Rows.
   */
  layout(lengths: Uint32Array): Uint32Array {
    if (this.src.length !== 0) throw new Error('Rows.layout: rows already added');
    const first = new Uint32Array(lengths.length);
    let e = 0;
    for (let a = 0; a < lengths.length; a++) {
      const len = lengths[a]!;
      if (len === 0) continue;
      first[a] = e;
      e += len;
      this.src.push(a);
      this.start.push(e);
    }
    while (this.chunks.length * CHUNK < e) this.chunks.push(new Uint32Array(CHUNK));
    this.edges = e;
    return first;
  }

  /** Puts target t at slot e of the layout. */
  set(e: number, t: number): void {
    this.chunks[e >>> CHUNK_BITS]![e & (CHUNK - 1)] = t;
  }

  /**
   * After layout() and set(): each row sorted, duplicates and self-follows dropped (what add()
   * does), the rows packed again. A row left with no targets stays, empty. `pause` is awaited every
   * TIDY_SLICE targets: a whole graph's rows (20 M follows) held the event loop ~400 ms.
   */
  async tidy(pause: () => Promise<void> = async () => {}): Promise<void> {
    const s = this.start.data;
    const src = this.src.data;
    let scratch = new Uint32Array(0);
    let w = 0;
    let from = s[0]!;
    let done = 0;
    for (let r = 0; r < this.src.length; r++) {
      const to = s[r + 1]!;
      const author = src[r]!;
      done += to - from;
      if (done >= TIDY_SLICE) {
        done = 0;
        await pause(); // nothing else touches these rows while they are tidied: only the loop waits
      }
      // sorted already when the ids were given in the graph's order (the usual case): checked first
      let sorted = true;
      for (let e = from + 1; e < to; e++) {
        if (this.at(e) < this.at(e - 1)) {
          sorted = false;
          break;
        }
      }
      if (!sorted) {
        const c0 = from >>> CHUNK_BITS;
        if (c0 === (to - 1) >>> CHUNK_BITS) this.chunks[c0]!.subarray(from & (CHUNK - 1), ((to - 1) & (CHUNK - 1)) + 1).sort();
        else {
          if (scratch.length < to - from) scratch = new Uint32Array(to - from);
          for (let e = from; e < to; e++) scratch[e - from] = this.at(e);
          scratch.subarray(0, to - from).sort();
          for (let e = from; e < to; e++) this.set(e, scratch[e - from]!);
        }
      }
      s[r] = w;
      let prev = -1;
      for (let e = from; e < to; e++) {
        const t = this.at(e);
        if (t === prev || t === author) continue;
        prev = t;
        this.set(w++, t); // w <= e: packing never overwrites what is still to be read
      }
      from = to;
    }
    s[this.src.length] = w;
    this.edges = w;
    this.chunks.length = Math.ceil(w / CHUNK);
  }

  private at(e: number): number {
    return this.chunks[e >>> CHUNK_BITS]![e & (CHUNK - 1)]!;
  }

  get rows(): number {
    return this.src.length;
  }

  /** Calls fn(target) for every target of row r. */
  forTargets(r: number, fn: (t: number) => void): void {
    const s = this.start.data;
    for (let e = s[r]!, end = s[r + 1]!; e < end; e++) fn(this.chunks[e >>> CHUNK_BITS]![e & (CHUNK - 1)]!);
  }

  /** The chunk array and mask, for the hot loop of the rank iteration. */
  raw(): { chunks: Uint32Array[]; bits: number; mask: number } {
    return { chunks: this.chunks, bits: CHUNK_BITS, mask: CHUNK - 1 };
  }
}
