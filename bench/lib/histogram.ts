// Log-bucketed latency histogram (1% resolution from 1 µs to ~100 s): constant memory however many
// samples, mergeable, exact enough for p50/p99.

const GROWTH = 1.01;
const LOG_GROWTH = Math.log(GROWTH);
const BUCKETS = Math.ceil(Math.log(1e8) / LOG_GROWTH) + 2; // 1 µs .. 100 s

export interface LatencySummary {
  count: number;
  mean_ms: number;
  p50_ms: number;
  p90_ms: number;
  p99_ms: number;
  max_ms: number;
}

export class Histogram {
  readonly counts = new Float64Array(BUCKETS);
  count = 0;
  sum = 0;
  max = 0;

  /** Records one sample in milliseconds. */
  record(ms: number): void {
    const us = ms * 1000;
    const idx = us <= 1 ? 0 : Math.min(BUCKETS - 1, Math.floor(Math.log(us) / LOG_GROWTH) + 1);
    this.counts[idx]!++;
    this.count++;
    this.sum += ms;
    if (ms > this.max) this.max = ms;
  }

  merge(other: Histogram): void {
    for (let i = 0; i < BUCKETS; i++) this.counts[i]! += other.counts[i]!;
    this.count += other.count;
    this.sum += other.sum;
    if (other.max > this.max) this.max = other.max;
  }

  /** Value (ms) at quantile q in [0, 1]: the upper edge of the bucket holding it, capped at max. */
  quantile(q: number): number {
    if (this.count === 0) return 0;
    const rank = Math.max(1, Math.ceil(q * this.count));
    let seen = 0;
    for (let i = 0; i < BUCKETS; i++) {
      seen += this.counts[i]!;
      if (seen >= rank) {
        const upperUs = i === 0 ? 1 : Math.pow(GROWTH, i);
        return Math.min(upperUs / 1000, this.max);
      }
    }
    return this.max;
  }

  summary(): LatencySummary {
    return {
      count: this.count,
      mean_ms: round(this.count ? this.sum / this.count : 0),
      p50_ms: round(this.quantile(0.5)),
      p90_ms: round(this.quantile(0.9)),
      p99_ms: round(this.quantile(0.99)),
      max_ms: round(this.max),
    };
  }
}

export function round(x: number, digits = 3): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}
