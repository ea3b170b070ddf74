// An order-free digest of the entries of an index (verify.ts compares the one the events call for
// with the one the index holds), and the hash it sums.

// The hash of a key (and value) for the fingerprints: two 32-bit lanes, mixed per byte and finished
// (a cyrb53-style hash). Module state, not an object per key: it runs for every index entry.
let H1 = 0;
let H2 = 0;
const seed = (): void => {
  H1 = 0x9e3779b9;
  H2 = 0x85ebca6b;
};
function mixBytes(b: Uint8Array): void {
  let h1 = Math.imul(H1 ^ b.length, 2654435761);
  let h2 = Math.imul(H2 ^ b.length, 1597334677);
  for (let i = 0; i < b.length; i++) {
    const ch = b[i]!;
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  H1 = h1;
  H2 = h2;
}
function mixInt(x: number): void {
  H1 = Math.imul(H1 ^ x, 2654435761);
  H2 = Math.imul(H2 ^ x, 1597334677);
}
function finish(): void {
  const h1 = Math.imul(H1 ^ (H1 >>> 16), 2246822507) ^ Math.imul(H2 ^ (H2 >>> 13), 3266489909);
  H2 = Math.imul(H2 ^ (H2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  H1 = h1;
}

/** Buckets of a fingerprint: a difference is then looked for only among the keys of the buckets that differ. */
const BUCKETS = 4096;

/**
 * An order-free digest of a multiset of keys (with their values where they matter): per bucket (by
 * the key's hash) the count and two 32-bit sums of a hash of key and value. Two indexes with equal
 * buckets hold the same entries but for a chance of about 2^-64 per differing bucket; a difference
 * found is always real. A graph edge is hashed from its three numbers (addEdge), on both sides.
 */
export class Fingerprint {
  n = 0;
  private readonly cells = new Uint32Array(BUCKETS * 3);

  private put(bucket: number): void {
    const o = bucket * 3;
    this.cells[o]!++;
    this.cells[o + 1] = (this.cells[o + 1]! + H1) >>> 0;
    this.cells[o + 2] = (this.cells[o + 2]! + H2) >>> 0;
    this.n++;
  }

  static bucketOf(key: Uint8Array): number {
    seed();
    mixBytes(key);
    finish();
    return H1 & (BUCKETS - 1);
  }

  static bucketOfEdge(kind: number, followee: number, follower: number): number {
    seed();
    mixInt(kind);
    mixInt(followee);
    mixInt(follower);
    finish();
    return H1 & (BUCKETS - 1);
  }

  add(key: Uint8Array, value?: Uint8Array): void {
    const bucket = Fingerprint.bucketOf(key);
    if (value) {
      mixBytes(value);
      finish();
    }
    this.put(bucket);
  }

  addEdge(kind: number, followee: number, follower: number): void {
    this.put(Fingerprint.bucketOfEdge(kind, followee, follower));
  }

  /** The buckets that differ from `o` (flags), or null when none does. */
  diff(o: Fingerprint): Uint8Array | null {
    let out: Uint8Array | null = null;
    for (let b = 0; b < BUCKETS; b++) {
      const i = b * 3;
      if (this.cells[i] === o.cells[i] && this.cells[i + 1] === o.cells[i + 1] && this.cells[i + 2] === o.cells[i + 2]) continue;
      (out ??= new Uint8Array(BUCKETS))[b] = 1;
    }
    return out;
  }
}
