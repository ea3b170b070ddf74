// A set of kinds given as numbers and ranges ("30000-39999"). Pure.

export class KindSet {
  private single = new Set<number>();
  private ranges: Array<[number, number]> = [];

  constructor(entries: Iterable<number | string> = []) {
    for (const e of entries) if (!this.add(e)) throw new Error(`not a kind or kind range: ${JSON.stringify(e)}`);
  }

  /** false when malformed */
  add(e: number | string): boolean {
    if (typeof e === 'number') {
      if (!Number.isInteger(e) || e < 0 || e > 65535) return false;
      this.single.add(e);
      return true;
    }
    const m = /^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$/.exec(e);
    if (!m) return false;
    const a = Number(m[1]);
    const b = m[2] === undefined ? a : Number(m[2]);
    if (a > 65535 || b > 65535 || b < a) return false;
    if (a === b) this.single.add(a);
    else this.ranges.push([a, b]);
    return true;
  }

  delete(k: number): void { this.single.delete(k); }

  has(k: number): boolean {
    if (this.single.has(k)) return true;
    for (const [a, b] of this.ranges) if (k >= a && k <= b) return true;
    return false;
  }

  get size(): number { return this.single.size + this.ranges.length; }

  list(): Array<number | string> { return [...[...this.single].sort((x, y) => x - y), ...this.ranges.map(([a, b]) => `${a}-${b}`)]; }
}
