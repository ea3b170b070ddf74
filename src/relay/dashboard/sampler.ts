// The last hour of the relay's figures for the status page's charts: every `stepMs` a snapshot of
// the metrics registry's counters, gauges and histograms goes into a ring buffer of `keep`
// entries (10 s × 360 = one hour, a few kilobytes). Rates and latencies are differences between
// snapshots, so the charts cost nothing on the hot path; the last point runs from the newest
// snapshot to now, so a chart moves as soon as something happens.
//
// Latency has one definition for the card and the chart: the mean and the 95th percentile (upper
// bound of its histogram bucket) of the queries in the LATENCY_WINDOW_MS ending at the point. The
// chart's last point and the card (window()) end at the same instant, so they show the same figure.
import type { HistogramSnapshot } from '../metrics.js';

export interface Probe {
  /** totals that only grow (events stored, refusals, REQs): charted as per-second rates */
  counters: Record<string, () => number>;
  /** instantaneous values (connections) */
  gauges: Record<string, () => number>;
  /** latency histograms in seconds: charted as mean and 95th percentile in ms */
  histograms: Record<string, () => HistogramSnapshot>;
}

interface Snap {
  t: number;
  c: Record<string, number>;
  g: Record<string, number>;
  h: Record<string, HistogramSnapshot>;
}

/** The window of every latency figure (card and chart points): one minute. */
export const LATENCY_WINDOW_MS = 60_000;

/** Column-wise series: t (seconds since epoch, end of each step) and one array per figure. */
export interface Series {
  stepSeconds: number;
  /** the window each latency point covers (ending at its t) */
  latencyWindowSeconds: number;
  t: number[];
  [figure: string]: Array<number | null> | number[] | number;
}

export interface Window {
  seconds: number;
  /** per second over the window */
  rates: Record<string, number>;
  /** ms; null when nothing was observed in the window */
  mean: Record<string, number | null>;
  p95: Record<string, number | null>;
}

const round = (v: number, d = 2) => Math.round(v * 10 ** d) / 10 ** d;

/** Mean and 95th percentile (upper bound of its bucket) in ms of the observations between two snapshots. */
function latency(a: HistogramSnapshot | undefined, b: HistogramSnapshot): { mean: number | null; p95: number | null } {
  const n = b.total - (a?.total ?? 0);
  if (n <= 0) return { mean: null, p95: null };
  const mean = ((b.sum - (a?.sum ?? 0)) / n) * 1000;
  const want = 0.95 * n;
  let cum = 0;
  let p95 = b.buckets[b.buckets.length - 1];
  for (let i = 0; i < b.buckets.length; i++) {
    cum += b.counts[i] - (a?.counts[i] ?? 0);
    if (cum >= want) { p95 = b.buckets[i]; break; }
  }
  return { mean: round(mean, 3), p95: round(p95 * 1000, 3) };
}

export class Sampler {
  private ring: Snap[] = [];
  private timer: NodeJS.Timeout | null = null;

  constructor(private probe: Probe, readonly stepMs = 10_000, readonly keep = 360) {
    this.sample();
  }

  private snap(t: number): Snap {
    const map = <T>(o: Record<string, () => T>) => Object.fromEntries(Object.entries(o).map(([k, f]) => [k, f()])) as Record<string, T>;
    return { t, c: map(this.probe.counters), g: map(this.probe.gauges), h: map(this.probe.histograms) };
  }

  /** Takes a snapshot now (the timer calls it every step). */
  sample(now = Date.now()): void {
    this.ring.push(this.snap(now));
    if (this.ring.length > this.keep + 1) this.ring.splice(0, this.ring.length - this.keep - 1);
  }

  start(): void {
    this.timer ??= setInterval(() => this.sample(), this.stepMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** The newest snapshot at least `windowMs` older than `end`, else the oldest. */
  private startOf(end: number, windowMs: number): Snap {
    let from = this.ring[0];
    for (const s of this.ring) if (end - s.t >= windowMs) from = s;
    return from;
  }

  /** Rates over one step (a to b); latencies over the window ending at b. */
  private point(a: Snap, b: Snap, out: Record<string, Array<number | null>>): void {
    const dt = Math.max(0.001, (b.t - a.t) / 1000);
    for (const k of Object.keys(b.c)) (out[k] ??= []).push(round(Math.max(0, b.c[k] - (a.c[k] ?? 0)) / dt));
    for (const k of Object.keys(b.g)) (out[k] ??= []).push(b.g[k]);
    const from = this.startOf(b.t, LATENCY_WINDOW_MS);
    for (const k of Object.keys(b.h)) {
      const l = latency(from === b ? undefined : from.h[k], b.h[k]);
      (out[`${k}Ms`] ??= []).push(from === b ? null : l.mean);
      (out[`${k}P95Ms`] ??= []).push(from === b ? null : l.p95);
    }
  }

  /** The end of the newest point: now, unless the newest snapshot is less than a second old. */
  private end(now: number): Snap {
    const last = this.ring[this.ring.length - 1];
    return now - last.t >= 1000 ? this.snap(now) : last;
  }

  /** One point per step over the last hour, and a last one from the newest snapshot to now. */
  series(now = Date.now()): Series {
    const cols: Record<string, Array<number | null>> = {};
    const t: number[] = [];
    for (let i = 1; i < this.ring.length; i++) {
      this.point(this.ring[i - 1], this.ring[i], cols);
      t.push(Math.round(this.ring[i].t / 1000));
    }
    const last = this.ring[this.ring.length - 1];
    const end = this.end(now);
    if (end !== last) {
      this.point(last, end, cols);
      t.push(Math.round(end.t / 1000));
    }
    return { stepSeconds: this.stepMs / 1000, latencyWindowSeconds: LATENCY_WINDOW_MS / 1000, t, ...cols };
  }

  /**
   * Rates and latencies over (about) the last `windowMs`, ending where the series' last point ends:
   * from the newest snapshot at least that old, else since the oldest.
   */
  window(now = Date.now(), windowMs = LATENCY_WINDOW_MS): Window {
    const to = this.end(now);
    const from = this.startOf(to.t, windowMs);
    const dt = Math.max(0.001, (to.t - from.t) / 1000);
    const rates: Record<string, number> = {};
    for (const k of Object.keys(to.c)) rates[k] = round(Math.max(0, to.c[k] - (from.c[k] ?? 0)) / dt);
    const mean: Record<string, number | null> = {};
    const p95: Record<string, number | null> = {};
    for (const k of Object.keys(to.h)) ({ mean: mean[k], p95: p95[k] } = latency(from.h[k], to.h[k]));
    return { seconds: Math.round(dt), rates, mean, p95 };
  }
}
