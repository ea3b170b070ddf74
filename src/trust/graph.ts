// The follow and mute graphs as compressed sparse rows over pubkey ids: each list is one row
// (its author and a run of target ids in a chunked Uint32Array), so 100 M edges take 400 MB of
// typed arrays and no JavaScript object per edge. Rows come in whatever order the store gives
// them; a pubkey has at most one row per graph (kinds 3 and 10000 are replaceable).

/** Target ids are kept in chunks of this many, so growing never copies what is there. */
const CHUNK_BITS = 22;
const CHUNK = 1 << CHUNK_BITS;

/** A growable Uint32Array. */
export class U32List {
  data = new Uint32Array(1024);
  length = 0;
  push(v: number): void {
    if (this.length === this.data.length) {
      const bigger = new Uint32Array(this.data.length * 2);
      bigger.set(this.data);
      this.data = bigger;
    }
    this.data[this.length++] = v;
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
