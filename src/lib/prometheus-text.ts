// Prometheus text exposition for the figures services hand to /metrics as text (the relay's own
// registry is relay/metrics.ts): one metric, its HELP and TYPE lines, then one sample per label set.

export type MetricType = 'counter' | 'gauge';

/** Collects metrics and writes them out as one text block (ending in a newline). */
export class MetricsText {
  private readonly lines: string[] = [];

  /** One metric with one sample. */
  metric(name: string, type: MetricType, help: string, value: number): this {
    return this.samples(name, type, help, [['', value]]);
  }

  /** One metric with a sample per label set, e.g. [['{budget="address"}', 3], …]. */
  samples(name: string, type: MetricType, help: string, values: ReadonlyArray<readonly [labels: string, value: number]>): this {
    this.lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    for (const [labels, value] of values) this.lines.push(`${name}${labels} ${value}`);
    return this;
  }

  toString(): string {
    return this.lines.join('\n') + '\n';
  }
}
