// ingest: N pre-signed events over C connections with W events in flight each; events/s
// acknowledged with OK true, p50/p99 time from send to OK. With --rounds, each round publishes a
// new data set (seed S, S.2, S.3, ...); with --vs, to both relays in alternating order.
import { COMMON_OPTS, num, str, type Opts } from './lib/args.js';
import { DATASET_OPTS, type Bench } from './lib/bench.js';
import { publishAll } from './lib/client.js';
import { eventFrames, loadDataset } from './lib/events.js';
import { round } from './lib/histogram.js';
import { CpuSampler, emit, log, machine, table, waitForQuiet } from './lib/report.js';
import { orderOf, roundsOf, sidesOf, summaryTable, VS_OPTS, type Sample, type Side } from './lib/compare.js';

export const ingest: Bench = {
  name: 'ingest',
  summary: 'verified ingest: N pre-signed events, C connections x W in flight; events/s acked OK true, p50/p99 time to OK',
  options: [
    ...COMMON_OPTS,
    ...DATASET_OPTS,
    { name: 'connections', type: 'int', default: 16, help: 'publishing connections' },
    { name: 'inflight', type: 'int', default: 200, help: 'unacknowledged events per connection' },
    { name: 'timeout', type: 'int', default: 300, help: 'give up after this many seconds' },
    ...VS_OPTS,
  ],
  async run(o: Opts) {
    const sides = sidesOf(o);
    const rounds = roundsOf(o);
    const sideBySide = sides.length > 1 || rounds > 1;
    const samples: Sample[] = [];
    for (let r = 1; r <= rounds; r++) {
      // every round publishes events no relay has seen: round 1 the --seed set, round r seed "S.r"
      const seed = r === 1 ? str(o, 'seed') : `${str(o, 'seed')}.${r}`;
      const ds = await loadDataset({ count: num(o, 'count'), authors: num(o, 'authors'), seed, spanSec: num(o, 'span') }, o.regen === true);
      const frames = eventFrames(ds.events);
      const ids = ds.events.map((e) => e.id);
      const bytes = frames.reduce((a, f) => a + f.length, 0);
      for (const side of orderOf(sides, r)) {
        log(`ingest${sideBySide ? ` (round ${r}, ${side.label || side.url})` : ''}: ${frames.length} events (${Math.round(bytes / frames.length)} bytes per EVENT frame) -> ${side.url}, ${num(o, 'connections')} connections x ${num(o, 'inflight')} in flight`);
        const result = await publishOnce(o, side, frames, ids, sideBySide ? { side: side.key, round: r } : {});
        samples.push({ shape: 'ingest', side: side.key, round: r, rate: result.events_per_s, p50: result.ok_p50_ms, p99: result.ok_p99_ms });
      }
    }
    if (sideBySide) summaryTable('ingest, events/s stored', 'ev/s', sides, samples);
  },
};

/** Publishes the frames to one relay, emits the JSON result and prints its table. */
async function publishOnce(o: Opts, side: Side, frames: Buffer[], ids: string[], extra: Record<string, unknown>) {
  await waitForQuiet(num(o, 'quiet-wait'));
  const cpu = new CpuSampler(side.pid);
  const r = await publishAll(side.url, frames, ids, { connections: num(o, 'connections'), inflight: num(o, 'inflight'), timeoutMs: num(o, 'timeout') * 1000, progress: true });
  const res = cpu.read();
  const secs = r.elapsedMs / 1000;
  const lat = r.latency.summary();
  const result = {
    bench: 'ingest',
    label: side.label || undefined,
    url: side.url,
    ...extra,
    time: new Date().toISOString(),
    events: frames.length,
    connections: num(o, 'connections'),
    inflight: num(o, 'inflight'),
    stored: r.stored,
    duplicates: r.duplicates,
    rejected: r.rejectedTotal,
    rejected_by_reason: r.rejected,
    missing: r.missing,
    notices: r.notices,
    elapsed_s: round(secs),
    events_per_s: Math.round(r.stored / secs),
    acked_ok_per_s: Math.round((r.stored + r.duplicates) / secs),
    ok_p50_ms: lat.p50_ms,
    ok_p99_ms: lat.p99_ms,
    ok_max_ms: lat.max_ms,
    ...res,
    // On a machine both the relay and this client saturate, the rate follows the CPU each event
    // costs, so this is the figure to compare between builds (the rate moves with the hour).
    ...(res.relay_cpu_pct !== undefined && r.stored > 0 ? { relay_cpu_us_per_event: round(((res.relay_cpu_pct / 100) * (res.cpu_window_s ?? secs) * 1e6) / r.stored, 1) } : {}),
    machine: machine(),
  };
  emit(result);
  table(`ingest${side.label ? ` (${side.label})` : ''}`, [
    { measure: 'stored (OK true, new)', value: r.stored },
    { measure: 'duplicates (OK true, "duplicate:")', value: r.duplicates },
    { measure: 'rejected (OK false)', value: r.rejectedTotal },
    { measure: 'missing (no OK)', value: r.missing },
    { measure: 'elapsed, s', value: round(secs, 2) },
    { measure: 'events/s stored', value: result.events_per_s },
    { measure: 'time to OK p50, ms', value: lat.p50_ms },
    { measure: 'time to OK p99, ms', value: lat.p99_ms },
    { measure: 'client CPU, % of a core', value: res.client_cpu_pct },
    ...(res.relay_cpu_pct !== undefined ? [{ measure: 'relay CPU, % of a core', value: res.relay_cpu_pct }, { measure: 'relay CPU per event stored, µs', value: result.relay_cpu_us_per_event ?? '-' }, { measure: 'relay threads', value: res.relay_threads ?? '' }] : []),
    ...(res.machine_busy_pct !== undefined ? [{ measure: 'machine busy, % of all cores', value: res.machine_busy_pct }] : []),
  ]);
  if (r.duplicates > 0) log(`note: the relay already had ${r.duplicates} of these events, so this measured duplicate handling; use a fresh data directory or another --seed`);
  return result;
}
