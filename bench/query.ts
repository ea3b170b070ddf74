// query: load the data set (unless --no-load), then C connections in a closed loop (one REQ at a
// time per connection: send REQ, wait for EOSE, CLOSE it and send the next) for a fixed time per
// query shape; queries/s and p50/p99 time from REQ to EOSE (COUNT: to the COUNT reply).
import { COMMON_OPTS, flag, list, num, str, UsageError, type OptSpec, type Opts } from './lib/args.js';
import { DATASET_OPTS, LOAD_OPTS, type Bench } from './lib/bench.js';
import { connectMany, closeAll, msgType, publishAll, sendBatch, type WebSocket } from './lib/client.js';
import { eventFrames, fakeHex, loadDataset, prng, TAG_VALUES, type Dataset, type NostrEvent } from './lib/events.js';
import { Histogram, round } from './lib/histogram.js';
import { CpuSampler, emit, log, machine, table, waitForQuiet } from './lib/report.js';
import { orderOf, roundsOf, sidesOf, summaryTable, VS_OPTS, type Sample, type Side } from './lib/compare.js';
import { startWriteLoad, type EventSource } from './lib/paced-writer.js';

export interface Shape {
  name: string;
  describe: string;
  /** builds the frame for subscription id `sid` */
  frame(sid: string, rnd: () => number): string;
  count?: boolean;
  /** events each query should return when the relay holds the data set and honours the limit */
  expect?: string;
}

export function shapes(ds: Dataset, manyAuthors: number): Shape[] {
  const ids = ds.events.map((e) => e.id);
  const authors64 = JSON.stringify(ds.pubkeys);
  const many: string[] = [...ds.pubkeys];
  for (let i = many.length; i < manyAuthors; i++) many.push(fakeHex(ds.params.seed, 'home-authors', i));
  const authorsMany = JSON.stringify(many);
  const windowStart = ds.minCreatedAt;
  const windowRange = Math.max(1, ds.maxCreatedAt - ds.minCreatedAt - 600);
  return [
    { name: 'by-id', describe: '{"ids":[one id]}', expect: '1', frame: (sid, r) => `["REQ","${sid}",{"ids":["${ids[Math.floor(r() * ids.length)]}"]}]` },
    {
      name: 'home-64',
      describe: `{"authors":[${ds.pubkeys.length} authors],"kinds":[1,7],"limit":500}`,
      expect: '500',
      frame: (sid) => `["REQ","${sid}",{"authors":${authors64},"kinds":[1,7],"limit":500}]`,
    },
    {
      name: `home-${many.length}`,
      describe: `{"authors":[${many.length} authors, ${ds.pubkeys.length} with events],"kinds":[1,7],"limit":500}`,
      expect: '500',
      frame: (sid) => `["REQ","${sid}",{"authors":${authorsMany},"kinds":[1,7],"limit":500}]`,
    },
    { name: 'tag', describe: '{"#t":[one of bench0..49],"limit":100}', expect: '100', frame: (sid, r) => `["REQ","${sid}",{"#t":["bench${Math.floor(r() * TAG_VALUES)}"],"limit":100}]` },
    {
      name: 'window',
      describe: '{"kinds":[1],"since":T,"until":T+600,"limit":100}',
      expect: '100',
      frame: (sid, r) => {
        const since = windowStart + Math.floor(r() * windowRange);
        return `["REQ","${sid}",{"kinds":[1],"since":${since},"until":${since + 600},"limit":100}]`;
      },
    },
    {
      name: 'count',
      describe: 'COUNT {"#t":[one of bench0..49]} (NIP-45)',
      expect: `count ${Math.round(ds.params.count / TAG_VALUES)}`,
      count: true,
      frame: (sid, r) => `["COUNT","${sid}",{"#t":["bench${Math.floor(r() * TAG_VALUES)}"]}]`,
    },
  ];
}

export interface ShapeResult {
  queries: number;
  events: number;
  errors: number;
  timeouts: number;
  notices: number;
  latency: Histogram;
  closedReasons: Record<string, number>;
}

/** Runs one shape on `conns` for warmup + duration seconds in a closed loop. */
export async function runShape(conns: WebSocket[], shape: Shape, warmupMs: number, durationMs: number, queryTimeoutMs: number, sendClose: boolean, seed: number): Promise<ShapeResult> {
  const res: ShapeResult = { queries: 0, events: 0, errors: 0, timeouts: 0, notices: 0, latency: new Histogram(), closedReasons: {} };
  const t0 = performance.now();
  const measureStart = t0 + warmupMs;
  const measureEnd = measureStart + durationMs;
  let seq = 0;
  let active = conns.length;
  let resolveDone!: () => void;
  const done = new Promise<void>((r) => (resolveDone = r));
  const states = conns.map((ws, c) => {
    if (ws.readyState !== ws.OPEN) throw new Error(`query connection ${c} is not open (closed by the relay during an earlier shape?)`);
    const rnd = prng(seed * 1000 + c);
    const st = { sid: '', start: 0, events: 0, busy: false };
    const issue = (prev: string[]): void => {
      const now = performance.now();
      if (now >= measureEnd) {
        if (prev.length) sendBatch(ws, prev);
        st.busy = false;
        if (--active === 0) resolveDone();
        return;
      }
      // with --no-close every REQ reuses the connection's subscription id, replacing the previous one (NIP-01)
      st.sid = sendClose ? `q${(seq++).toString(36)}` : `c${c}`;
      st.start = now;
      st.events = 0;
      st.busy = true;
      prev.push(shape.frame(st.sid, rnd));
      sendBatch(ws, prev);
    };
    const finish = (ok: boolean): void => {
      const now = performance.now();
      if (st.start >= measureStart && now <= measureEnd) {
        if (ok) {
          res.queries++;
          res.events += st.events;
          res.latency.record(now - st.start);
        } else res.errors++;
      }
      issue(sendClose && !shape.count && ok ? [`["CLOSE","${st.sid}"]`] : []);
    };
    const onMessage = (data: Buffer): void => {
      if (!st.busy) return;
      switch (msgType(data)) {
        case 'EVENT':
          st.events++;
          return;
        case 'EOSE':
          if (!shape.count) finish(true);
          return;
        case 'COUNT':
          if (shape.count) {
            // the count itself goes where events go for REQs: events_per_query is then the mean count
            const m = /"count"\s*:\s*(\d+)/.exec(data.toString());
            st.events = m ? Number(m[1]) : 0;
            finish(true);
          }
          return;
        case 'CLOSED': {
          const reason = String((JSON.parse(data.toString()) as unknown[])[2] ?? '').split(':')[0] || '(empty)';
          res.closedReasons[reason] = (res.closedReasons[reason] ?? 0) + 1;
          if (res.errors < 3) log(`  ${shape.name}: ${data.toString().slice(0, 200)}`);
          finish(false);
          return;
        }
        case 'NOTICE':
          res.notices++;
          if (res.notices <= 3) log(`  ${shape.name}: ${data.toString().slice(0, 200)}`);
          return;
        default:
      }
    };
    ws.on('message', onMessage);
    const onClose = (): void => {
      log(`  ${shape.name}: connection ${c} closed by the relay`);
      if (st.busy) res.errors++;
      st.busy = false;
      if (--active === 0) resolveDone();
    };
    ws.on('close', onClose);
    return { ws, st, onMessage, onClose, issue };
  });
  const timer = setInterval(() => {
    const now = performance.now();
    for (const s of states) {
      if (s.st.busy && now - s.st.start > queryTimeoutMs) {
        res.timeouts++;
        s.issue(shape.count ? [] : [`["CLOSE","${s.st.sid}"]`]);
      }
    }
  }, 100);
  for (const s of states) s.issue([]);
  // bounded even if a relay stops answering: the per-query timeout plus a margin
  let hardStop: NodeJS.Timeout | undefined;
  await Promise.race([done, new Promise<void>((r) => (hardStop = setTimeout(r, warmupMs + durationMs + queryTimeoutMs + 5000)))]);
  clearTimeout(hardStop);
  clearInterval(timer);
  for (const s of states) {
    s.ws.removeListener('message', s.onMessage);
    s.ws.removeListener('close', s.onClose);
  }
  return res;
}

/** Options of the closed query loop (measureShapes), shared with the directory benchmark. */
export const LOOP_OPTS: OptSpec[] = [
  { name: 'connections', type: 'int', default: 8, help: 'querying connections (closed loop, one query outstanding on each)' },
  { name: 'duration', type: 'number', default: 10, help: 'measured seconds per shape' },
  { name: 'warmup', type: 'number', default: 2, help: 'unmeasured seconds per shape before measuring' },
  { name: 'close', type: 'bool', default: true, help: 'send CLOSE after each EOSE; --no-close instead reuses one subscription id per connection, so each REQ replaces the previous subscription' },
  { name: 'query-timeout', type: 'number', default: 10, help: 'seconds before an unanswered query counts as a timeout' },
];

export const query: Bench = {
  name: 'query',
  summary: 'load M events, then C connections in a closed loop per query shape; queries/s, p50/p99 time to EOSE',
  options: [
    ...COMMON_OPTS,
    ...DATASET_OPTS,
    ...LOAD_OPTS,
    ...LOOP_OPTS,
    ...VS_OPTS,
    { name: 'shapes', type: 'list', default: ['by-id', 'home-64', 'home-1000', 'tag', 'window', 'count'], help: 'shapes to run: by-id, home-64, home-1000, tag, window, count' },
    { name: 'many-authors', type: 'int', default: 1000, help: 'authors in the large home feed (the data set\'s authors plus random keys)' },
  ],
  async run(o: Opts) {
    const ds = await loadDataset({ count: num(o, 'count'), authors: num(o, 'authors'), seed: str(o, 'seed'), spanSec: num(o, 'span') }, flag(o, 'regen'));
    const all = shapes(ds, num(o, 'many-authors'));
    const wanted = list(o, 'shapes').map((s) => (s === 'home-1000' ? `home-${Math.max(num(o, 'many-authors'), ds.pubkeys.length)}` : s));
    const run = wanted.map((w) => {
      const s = all.find((x) => x.name === w);
      if (!s) throw new UsageError(`unknown shape ${w}; known: ${all.map((x) => x.name).join(', ')}`);
      return s;
    });
    const targets = await openTargets('query', o, ds.events);
    await measureShapes('query', targets, run, o, { store_events: ds.events.length });
    for (const t of targets) closeAll(t.conns);
  },
};

/** Publishes the data set (options load-connections, load-inflight) and logs what the relay did with it. */
export async function loadEvents(bench: string, url: string, events: NostrEvent[], o: Opts): Promise<void> {
  log(`${bench}: loading ${events.length} events into ${url}`);
  const r = await publishAll(url, eventFrames(events), events.map((e) => e.id), {
    connections: num(o, 'load-connections'),
    inflight: num(o, 'load-inflight'),
    timeoutMs: 600_000,
    progress: true,
  });
  log(`  loaded: ${r.stored} stored, ${r.duplicates} already there, ${r.rejectedTotal} rejected, ${r.missing} missing, ${Math.round((r.stored + r.duplicates) / (r.elapsedMs / 1000))}/s`);
}

/** A relay to measure (compare.ts) with its open querying connections. */
export interface Target extends Side {
  conns: WebSocket[];
}

/** Opens `connections` querying connections to each relay (after loading them unless --no-load). */
export async function openTargets(bench: string, o: Opts, events: NostrEvent[]): Promise<Target[]> {
  const out: Target[] = [];
  for (const side of sidesOf(o)) {
    if (flag(o, 'load')) await loadEvents(bench, side.url, events, o);
    out.push({ ...side, conns: await connectMany(side.url, num(o, 'connections')) });
  }
  return out;
}

/**
 * Runs each shape in turn on the open connections (options: duration, warmup, query-timeout,
 * close, quiet-wait, rounds) and emits one JSON result per shape, relay and round; prints the
 * table, and with --vs or --rounds the summary of medians and ratios (compare.ts). Within a round
 * both relays get the same sequence of queries.
 */
export async function measureShapes(bench: string, targets: Target[], run: Shape[], o: Opts, extra: Record<string, unknown>, writes?: { source: EventSource; rate: number }): Promise<void> {
  const rounds = roundsOf(o);
  const sideBySide = targets.length > 1 || rounds > 1;
  const rows: Record<string, string | number>[] = [];
  const samples: Sample[] = [];
  // with a write load, each shape is measured idle and then while another client writes
  const phases: Array<'idle' | 'writing'> = writes ? ['idle', 'writing'] : ['idle'];
  for (let r = 1; r <= rounds; r++) {
    for (const [i, shape] of run.entries()) {
      for (const t of orderOf(targets, r)) for (const phase of phases) {
        const { conns } = t;
        const name = phase === 'writing' ? `${shape.name}+writes` : shape.name;
        log(`${bench} ${name}${sideBySide ? ` (round ${r}, ${t.label || t.url})` : ''}: ${shape.describe}, ${conns.length} connections, ${num(o, 'warmup')} s warm-up + ${num(o, 'duration')} s${phase === 'writing' ? `, while ${writes!.rate} events/s are written` : ''}`);
        await waitForQuiet(num(o, 'quiet-wait'));
        const load = phase === 'writing' ? await startWriteLoad(t.url, writes!.source, writes!.rate) : null;
        const cpu = new CpuSampler(t.pid);
        const res = await runShape(conns, shape, num(o, 'warmup') * 1000, num(o, 'duration') * 1000, num(o, 'query-timeout') * 1000, flag(o, 'close'), (r - 1) * run.length + i + 1);
        const reading = cpu.read();
        const written = load ? await load.stop() : null;
        const lat = res.latency.summary();
        const qps = res.queries / num(o, 'duration');
        emit({
          bench,
          label: t.label || undefined,
          url: t.url,
          ...(sideBySide ? { side: t.key, round: r } : {}),
          time: new Date().toISOString(),
          shape: shape.name,
          ...(writes ? { phase, ...(written ? { write_rate: writes.rate, writes_sent: written.sent, writes_ok: written.ok, writes_refused: written.refused } : {}) } : {}),
          filter: shape.describe,
          ...extra,
          connections: conns.length,
          duration_s: num(o, 'duration'),
          queries: res.queries,
          queries_per_s: Math.round(qps),
          events_per_query: res.queries ? round(res.events / res.queries, 1) : 0,
          expected_per_query: shape.expect,
          eose_p50_ms: lat.p50_ms,
          eose_p99_ms: lat.p99_ms,
          eose_max_ms: lat.max_ms,
          errors: res.errors,
          closed_reasons: Object.keys(res.closedReasons).length ? res.closedReasons : undefined,
          timeouts: res.timeouts,
          notices: res.notices,
          ...reading,
          machine: machine(),
        });
        samples.push({ shape: name, side: t.key, round: r, rate: qps, p50: lat.p50_ms, p99: lat.p99_ms });
        rows.push({
          shape: name,
          ...(sideBySide ? { relay: t.key, round: r } : {}),
          'q/s': Math.round(qps),
          'p50 ms': lat.p50_ms,
          'p99 ms': lat.p99_ms,
          'events/q': res.queries ? round(res.events / res.queries, 1) : 0,
          errors: res.errors + res.timeouts,
          'client CPU%': reading.client_cpu_pct,
          'relay CPU%': reading.relay_cpu_pct ?? '-',
          'machine busy%': reading.machine_busy_pct ?? '-',
        });
        if (res.queries === 0 && res.errors > 0) log(`  ${shape.name}: every query failed (${JSON.stringify(res.closedReasons)}) — the relay may not support it`);
      }
    }
  }
  const conns = targets[0]!.conns.length;
  table(`${bench} (${extra.store_events} events in store, ${conns} connections, closed loop)`, rows);
  if (sideBySide) summaryTable(`${bench}, queries/s`, 'q/s', targets, samples);
}
