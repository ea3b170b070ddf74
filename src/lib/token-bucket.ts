// Token buckets: `rate` tokens per second up to `capacity`; a message takes one token, and with
// none left it is refused. Keyed buckets forget keys whose bucket has refilled (idle clients), so
// memory follows the number of recently active clients. Pure apart from the clock you pass in.

export class TokenBucket {
  private tokens: number;
  private last: number;
  constructor(readonly rate: number, readonly capacity: number, now: number) {
    this.tokens = capacity;
    this.last = now;
  }

  /** Takes `n` tokens at time `now` (ms); false when there are not enough. */
  take(now: number, n = 1): boolean {
    this.refill(now);
    if (this.tokens < n) return false;
    this.tokens -= n;
    return true;
  }

  /** Puts back tokens taken by a check that later failed elsewhere. */
  give(n = 1): void { this.tokens = Math.min(this.capacity, this.tokens + n); }

  full(now: number): boolean {
    this.refill(now);
    return this.tokens >= this.capacity;
  }

  private refill(now: number): void {
    if (now > this.last) {
      this.tokens = Math.min(this.capacity, this.tokens + ((now - this.last) / 1000) * this.rate);
      this.last = now;
    }
  }
}

export class KeyedBuckets<K> {
  private buckets = new Map<K, TokenBucket>();
  private lastSweep = 0;
  /** rate <= 0 means unlimited */
  constructor(readonly rate: number, readonly capacity: number) {}

  get unlimited(): boolean { return this.rate <= 0; }

  take(key: K, now: number, n = 1): boolean {
    if (this.rate <= 0) return true;
    // sweep first: a sweep after the lookup dropped the (full) bucket just taken from, and the
    // key's next take found a full one again, a capacity's worth more than the rate allows
    if (now - this.lastSweep > 60_000) this.sweep(now);
    let b = this.buckets.get(key);
    if (!b) this.buckets.set(key, (b = new TokenBucket(this.rate, this.capacity, now)));
    return b.take(now, n);
  }

  /** Puts back `n` tokens taken from `key` by a check that later failed elsewhere. */
  give(key: K, n = 1): void { this.buckets.get(key)?.give(n); }

  delete(key: K): void { this.buckets.delete(key); }

  get size(): number { return this.buckets.size; }

  /** Drops buckets that are full again: their owners have been quiet long enough. */
  sweep(now: number): void {
    this.lastSweep = now;
    for (const [k, b] of this.buckets) if (b.full(now)) this.buckets.delete(k);
  }
}
