// A small Prometheus text-format registry: counters, gauges (also computed on scrape) and
// histograms. No dependency: the few metric types a relay needs are a page of code.

type Labels = Record<string, string>;
const renderLabels = (l: Labels) => Object.entries(l).sort().map(([k, v]) => `${k}="${String(v).replace(/["\\\n]/g, '_')}"`).join(',');

/**
 * Rendered keys of one-label sets, by label name and value: the ingest path counts every event
 * under one label ({source}, {reason}), and rendering it each time was ~2% of the main thread.
 * Values come from small fixed sets; the cap keeps an unexpected one from growing the cache.
 */
const oneLabel = new Map<string, Map<string, string>>();
const ONE_LABEL_VALUES = 1000;

function labelKey(l: Labels): string {
  let name: string | undefined;
  let n = 0;
  for (const k in l) {
    name = k;
    if (++n > 1) return renderLabels(l);
  }
  if (name === undefined) return '';
  let byValue = oneLabel.get(name);
  if (!byValue) oneLabel.set(name, (byValue = new Map()));
  const v = l[name]!;
  let key = byValue.get(v);
  if (key === undefined) {
    key = renderLabels(l);
    if (byValue.size < ONE_LABEL_VALUES) byValue.set(v, key);
  }
  return key;
}

abstract class Metric {
  constructor(readonly name: string, readonly help: string, readonly type: string) {}
  abstract lines(): string[];
}

export class Counter extends Metric {
  private values = new Map<string, number>();
  constructor(name: string, help: string) { super(name, help, 'counter'); }
  inc(labels: Labels = {}, n = 1): void {
    const k = labelKey(labels);
    this.values.set(k, (this.values.get(k) ?? 0) + n);
  }
  get(labels: Labels = {}): number { return this.values.get(labelKey(labels)) ?? 0; }
  /** every label set with its value */
  entries(): Array<[string, number]> { return [...this.values]; }
  lines(): string[] {
    if (this.values.size === 0) return [`${this.name} 0`];
    return [...this.values].map(([k, v]) => `${this.name}${k ? `{${k}}` : ''} ${v}`);
  }
}

export class Gauge extends Metric {
  constructor(name: string, help: string, private read: () => number | Array<[Labels, number]>) { super(name, help, 'gauge'); }
  lines(): string[] {
    const v = this.read();
    if (typeof v === 'number') return [`${this.name} ${v}`];
    return v.map(([l, n]) => `${this.name}{${labelKey(l)}} ${n}`);
  }
}

export class Histogram extends Metric {
  private counts: number[];
  private sum = 0;
  private total = 0;
  constructor(name: string, help: string, private buckets: number[]) {
    super(name, help, 'histogram');
    this.counts = buckets.map(() => 0);
  }
  observe(v: number): void {
    this.sum += v;
    this.total++;
    for (let i = 0; i < this.buckets.length; i++) if (v <= this.buckets[i]) { this.counts[i]++; break; }
  }
  /** upper bounds, count per bucket (not cumulative; observations above the last bound are total minus their sum), sum, total */
  snapshot(): HistogramSnapshot {
    return { buckets: this.buckets, counts: [...this.counts], sum: this.sum, total: this.total };
  }
  lines(): string[] {
    let cum = 0;
    const out = this.buckets.map((b, i) => `${this.name}_bucket{le="${b}"} ${(cum += this.counts[i])}`);
    out.push(`${this.name}_bucket{le="+Inf"} ${this.total}`, `${this.name}_sum ${this.sum}`, `${this.name}_count ${this.total}`);
    return out;
  }
}

export interface HistogramSnapshot { buckets: number[]; counts: number[]; sum: number; total: number }

/** seconds: 100 µs .. 10 s */
export const LATENCY_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10];

export class Registry {
  private metrics: Metric[] = [];
  counter(name: string, help: string): Counter { return this.add(new Counter(name, help)); }
  gauge(name: string, help: string, read: () => number | Array<[Labels, number]>): Gauge { return this.add(new Gauge(name, help, read)); }
  histogram(name: string, help: string, buckets = LATENCY_BUCKETS): Histogram { return this.add(new Histogram(name, help, buckets)); }
  private add<M extends Metric>(m: M): M { this.metrics.push(m); return m; }
  text(): string {
    return this.metrics.flatMap((m) => [`# HELP ${m.name} ${m.help}`, `# TYPE ${m.name} ${m.type}`, ...m.lines()]).join('\n') + '\n';
  }
}

/** The relay's own figures; other modules (spider) add theirs to the same registry. */
export function relayMetrics(reg: Registry) {
  return {
    eventsReceived: reg.counter('orbweaver_events_received_total', 'EVENT messages received, by source'),
    eventsStored: reg.counter('orbweaver_events_stored_total', 'events stored, by source'),
    eventsRejected: reg.counter('orbweaver_events_rejected_total', 'events not stored, by reason'),
    reqs: reg.counter('orbweaver_reqs_total', 'REQ messages accepted'),
    counts: reg.counter('orbweaver_counts_total', 'COUNT messages answered'),
    refusals: reg.counter('orbweaver_refusals_total', 'CLOSED and NOTICE refusals, by reason'),
    deliveries: reg.counter('orbweaver_live_deliveries_total', 'live events sent to subscribers'),
    slowClosed: reg.counter('orbweaver_slow_connections_closed_total', 'connections closed for exceeding the output buffer cap'),
    queryLatency: reg.histogram('orbweaver_query_seconds', 'time from REQ to EOSE'),
    writeLatency: reg.histogram('orbweaver_write_seconds', 'time from EVENT to OK'),
  };
}
export type RelayMetrics = ReturnType<typeof relayMetrics>;
