// fan-out: S idle subscriber connections, each with one subscription (varied filters: some match
// the published events, some do not), and P publisher connections publishing pre-signed events at
// a fixed total rate. Reports deliveries/s, completeness against the exactly computed expected
// deliveries, and delivery latency (publisher send -> subscriber receive, p50/p99).
//
// The signed content of each event carries the run marker, its sequence number and its planned
// send time (ms after the start of publishing). Signing happens before the clock, so the actual
// send time cannot be inside the signed content: the publisher records it per sequence number and
// the subscribers (same process) measure latency from it; lag behind the plan is reported too.
//
// --mode isolation instead checks that the cost of a publish does not grow with unrelated
// subscriptions: the same paced publishing with no subscribers, then with S non-matching ones.
import { randomBytes } from 'node:crypto';
import { COMMON_OPTS, num, str, UsageError, type Opts } from './lib/args.js';
import type { Bench } from './lib/bench.js';
import { closeAll, connectMany, msgType, sendBatch, type WebSocket } from './lib/client.js';
import { fakeHex, makeKeys, matches, signAll, type Filter, type KeyPair, type NostrEvent } from './lib/events.js';
import { Histogram, round } from './lib/histogram.js';

const withoutLimit = <F extends { limit?: number }>(f: F): Omit<F, 'limit'> => {
  const { limit: _limit, ...rest } = f;
  return rest;
};
import { CpuSampler, emit, log, machine, table, waitForQuiet, type CpuReading } from './lib/report.js';

const FAN_TAGS = 5;

function subscriberFilter(j: number, pubs: string[], seed: string, unrelatedOnly: boolean): Filter {
  const cat = unrelatedOnly ? 7 + (j % 3) : j % 10;
  const a = pubs[j % pubs.length]!;
  switch (cat) {
    case 0:
    case 1:
    case 2:
    case 3:
      return { kinds: [1], limit: 0 };
    case 4:
      return { authors: [a], limit: 0 };
    case 5:
      return { '#t': [`fan${j % FAN_TAGS}`], limit: 0 };
    case 6:
      return { kinds: [1], '#p': [a], limit: 0 };
    case 7:
      return { kinds: [7], authors: [a], limit: 0 };
    case 8:
      return { authors: [fakeHex(seed, 'fan-unknown', j)], limit: 0 };
    default:
      return { '#t': [`nomatch${j}`], limit: 0 };
  }
}

interface Prepared {
  events: NostrEvent[];
  frames: Buffer[];
  marker: Buffer;
}

async function prepareEvents(keys: KeyPair[], n: number, rate: number): Promise<Prepared> {
  const nonce = randomBytes(6).toString('hex');
  const now = Math.floor(Date.now() / 1000);
  const items = [];
  for (let i = 0; i < n; i++) {
    const key = keys[i % keys.length]!;
    const plannedMs = round((i * 1000) / rate, 3);
    items.push({
      key,
      t: {
        kind: 1,
        created_at: now,
        tags: [
          ['t', `fan${i % FAN_TAGS}`],
          ['p', keys[(i + 1) % keys.length]!.pubkey],
        ],
        content: `fanout-${nonce} seq=${i} at=${plannedMs}ms fan-out benchmark event, a short note of ordinary size`,
      },
    });
  }
  const events = await signAll(items, 'fan-out events');
  return { events, frames: events.map((e) => Buffer.from(`["EVENT",${JSON.stringify(e)}]`)), marker: Buffer.from(`fanout-${nonce} seq=`) };
}

interface Subscribers {
  conns: WebSocket[];
  filters: Filter[];
  storedBeforeEose: number;
}

async function openSubscribers(url: string, n: number, filterOf: (j: number) => Filter): Promise<Subscribers> {
  const conns = await connectMany(url, n);
  const filters = conns.map((_, j) => filterOf(j));
  let storedBeforeEose = 0;
  await Promise.all(
    conns.map(
      (ws, j) =>
        new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`subscriber ${j}: no EOSE within 30 s`)), 30_000);
          const onMsg = (data: Buffer): void => {
            const t = msgType(data);
            if (t === 'EVENT') storedBeforeEose++;
            else if (t === 'EOSE' || t === 'CLOSED') {
              if (t === 'CLOSED') log(`  subscriber ${j}: ${data.toString().slice(0, 200)}`);
              clearTimeout(timer);
              ws.removeListener('message', onMsg);
              resolve();
            }
          };
          ws.on('message', onMsg);
          ws.send(JSON.stringify(['REQ', `f${j}`, filters[j]]));
        }),
    ),
  );
  return { conns, filters, storedBeforeEose };
}

interface PhaseResult {
  published: number;
  okTrue: number;
  okFalse: number;
  okLatency: Histogram;
  delivered: number;
  expected: number;
  deliveryLatency: Histogram;
  lagP99: number;
  publishSecs: number;
  deliverSecs: number;
  cpu: CpuReading;
}

/** Publishes `prep` at `rate`/s over the publishers and collects deliveries on the subscribers. */
async function runPhase(pubs: WebSocket[], subs: Subscribers | undefined, prep: Prepared, rate: number, drainMs: number, pid: number | undefined, quietWait = 0): Promise<PhaseResult> {
  const n = prep.events.length;
  // expected deliveries, computed exactly before the clock
  let expected = 0;
  if (subs) {
    const memo = new Map<string, number>();
    for (const e of prep.events) {
      const k = `${e.pubkey}|${e.tags[0]![1]}|${e.tags[1]![1]}`;
      let m = memo.get(k);
      if (m === undefined) {
        m = 0;
        // without its limit (a live subscription has none after EOSE); a key set to undefined is a
        // key the filter parser refuses, so it is left out, not blanked
        for (const f of subs.filters) if (matches(withoutLimit(f), e)) m++;
        memo.set(k, m);
      }
      expected += m;
    }
  }
  const sentAt = new Float64Array(n);
  const idToSeq = new Map<string, number>();
  prep.events.forEach((e, i) => idToSeq.set(e.id, i));
  const r: PhaseResult = { published: 0, okTrue: 0, okFalse: 0, okLatency: new Histogram(), delivered: 0, expected, deliveryLatency: new Histogram(), lagP99: 0, publishSecs: 0, deliverSecs: 0, cpu: { client_cpu_pct: 0 } };
  const lag = new Histogram();
  let lastDelivery = 0;
  let acked = 0;
  const marker = prep.marker;
  const onDelivery = (data: Buffer): void => {
    if (msgType(data) !== 'EVENT') return;
    const k = data.indexOf(marker);
    if (k < 0) return;
    let seq = 0;
    for (let p = k + marker.length; p < data.length; p++) {
      const c = data[p]!;
      if (c < 48 || c > 57) break;
      seq = seq * 10 + (c - 48);
    }
    const now = performance.now();
    const t0 = sentAt[seq]!;
    if (t0 > 0) r.deliveryLatency.record(now - t0);
    r.delivered++;
    lastDelivery = now;
  };
  const onOk = (data: Buffer): void => {
    if (msgType(data) !== 'OK') return;
    const m = JSON.parse(data.toString()) as [string, string, boolean, string];
    const seq = idToSeq.get(m[1]);
    if (seq === undefined) return;
    r.okLatency.record(performance.now() - sentAt[seq]!);
    if (m[2]) r.okTrue++;
    else {
      r.okFalse++;
      if (r.okFalse <= 3) log(`  publish rejected: ${m[3]}`);
    }
    acked++;
  };
  subs?.conns.forEach((ws) => ws.on('message', onDelivery));
  pubs.forEach((ws) => ws.on('message', onOk));

  await waitForQuiet(quietWait);
  const cpu = new CpuSampler(pid);
  const epoch = performance.now();
  let next = 0;
  await new Promise<void>((resolve) => {
    const tick = (): void => {
      const now = performance.now();
      const due = Math.min(n, Math.floor(((now - epoch) * rate) / 1000) + 1);
      if (due > next) {
        const batches: Buffer[][] = pubs.map(() => []);
        for (; next < due; next++) {
          sentAt[next] = now;
          lag.record(Math.max(0.001, now - (epoch + (next * 1000) / rate)));
          batches[next % pubs.length]!.push(prep.frames[next]!);
        }
        batches.forEach((b, p) => b.length && sendBatch(pubs[p]!, b));
      }
      if (next >= n) resolve();
      else setTimeout(tick, 1);
    };
    tick();
  });
  r.published = n;
  r.publishSecs = (performance.now() - epoch) / 1000;
  // drain: wait for every OK and every expected delivery, or drainMs without progress
  let lastProgress = performance.now();
  let lastCount = -1;
  while (acked < n || r.delivered < expected) {
    await new Promise((res) => setTimeout(res, 20));
    const progress = acked + r.delivered;
    if (progress !== lastCount) {
      lastCount = progress;
      lastProgress = performance.now();
    } else if (performance.now() - lastProgress > drainMs) {
      log(`  gave up waiting: ${n - acked} OKs and ${expected - r.delivered} deliveries missing after ${drainMs / 1000} s without progress`);
      break;
    }
  }
  r.cpu = cpu.read();
  r.deliverSecs = ((lastDelivery || performance.now()) - epoch) / 1000;
  r.lagP99 = lag.quantile(0.99);
  subs?.conns.forEach((ws) => ws.removeListener('message', onDelivery));
  pubs.forEach((ws) => ws.removeListener('message', onOk));
  return r;
}

export const fanout: Bench = {
  name: 'fanout',
  summary: 'S idle subscribers (varied filters), P publishers at a fixed rate; deliveries/s, p50/p99 delivery latency; --mode isolation: publish cost with/without unrelated subscriptions',
  options: [
    ...COMMON_OPTS,
    { name: 'mode', type: 'string', default: 'deliver', help: 'deliver | isolation' },
    { name: 'subscribers', type: 'int', default: 1000, help: 'subscriber connections, one subscription each' },
    { name: 'publishers', type: 'int', default: 4, help: 'publisher connections' },
    { name: 'rate', type: 'number', default: 250, help: 'published events/s, all publishers together (deliver mode; ~45% of subscribers match each event, so 250/s asks ~110k deliveries/s of 1,000 subscribers)' },
    { name: 'isolation-rate', type: 'number', default: 1000, help: 'published events/s in isolation mode' },
    { name: 'duration', type: 'number', default: 10, help: 'seconds of publishing (events = rate x duration, signed before the clock)' },
    { name: 'keys', type: 'int', default: 8, help: 'publishing keys' },
    { name: 'drain', type: 'number', default: 10, help: 'after publishing, wait at most this many seconds without progress for OKs and deliveries' },
  ],
  async run(o: Opts) {
    const url = str(o, 'url');
    const mode = str(o, 'mode');
    if (mode !== 'deliver' && mode !== 'isolation') throw new UsageError('--mode must be deliver or isolation');
    const seed = str(o, 'seed');
    const S = num(o, 'subscribers');
    const keys = await makeKeys(seed, 'fanout', num(o, 'keys'));
    const pubkeys = keys.map((k) => k.pubkey);
    const pid = o.pid as number | undefined;
    const drainMs = num(o, 'drain') * 1000;
    const pubs = await connectMany(url, num(o, 'publishers'));
    const common = { label: str(o, 'label') || undefined, url, machine: machine() };

    if (mode === 'deliver') {
      const rate = num(o, 'rate');
      const prep = await prepareEvents(keys, Math.max(1, Math.round(rate * num(o, 'duration'))), rate);
      log(`fanout: opening ${S} subscribers`);
      const subs = await openSubscribers(url, S, (j) => subscriberFilter(j, pubkeys, seed, false));
      if (subs.storedBeforeEose) log(`  note: subscribers received ${subs.storedBeforeEose} stored events before EOSE despite limit 0`);
      log(`fanout: publishing ${prep.events.length} events at ${rate}/s over ${pubs.length} publishers`);
      const r = await runPhase(pubs, subs, prep, rate, drainMs, pid, num(o, 'quiet-wait'));
      const lat = r.deliveryLatency.summary();
      const ok = r.okLatency.summary();
      const dps = r.delivered / r.deliverSecs;
      emit({
        bench: 'fanout',
        mode,
        ...common,
        time: new Date().toISOString(),
        subscribers: S,
        publishers: pubs.length,
        rate,
        published: r.published,
        publish_ok: r.okTrue,
        publish_rejected: r.okFalse,
        expected_deliveries: r.expected,
        delivered: r.delivered,
        completeness: round(r.expected ? r.delivered / r.expected : 1, 4),
        deliveries_per_s: Math.round(dps),
        asked_deliveries_per_s: Math.round(r.expected / (r.published / rate)),
        delivery_p50_ms: lat.p50_ms,
        delivery_p99_ms: lat.p99_ms,
        delivery_max_ms: lat.max_ms,
        publish_ok_p50_ms: ok.p50_ms,
        publish_ok_p99_ms: ok.p99_ms,
        publisher_lag_p99_ms: round(r.lagP99),
        ...r.cpu,
      });
      table(`fanout (${S} subscribers, ${pubs.length} publishers, ${rate} events/s asked)`, [
        { measure: 'deliveries/s', value: Math.round(dps) },
        { measure: 'delivered / expected', value: `${r.delivered} / ${r.expected}` },
        { measure: 'delivery latency p50, ms', value: lat.p50_ms },
        { measure: 'delivery latency p99, ms', value: lat.p99_ms },
        { measure: 'publish OK p50 / p99, ms', value: `${ok.p50_ms} / ${ok.p99_ms}` },
        { measure: 'publisher lag behind plan p99, ms', value: round(r.lagP99) },
        { measure: 'client CPU, % of a core', value: r.cpu.client_cpu_pct },
        { measure: 'relay CPU, % of a core', value: r.cpu.relay_cpu_pct ?? '-' },
        { measure: 'relay threads', value: r.cpu.relay_threads ?? '-' },
        { measure: 'machine busy, % of all cores', value: r.cpu.machine_busy_pct ?? '-' },
      ]);
      if (r.cpu.client_cpu_pct > 85) log('note: the benchmark client used most of a core: the figure may be limited by the client, not the relay');
      closeAll(subs.conns);
    } else {
      const rate = num(o, 'isolation-rate');
      const n = Math.max(1, Math.round(rate * num(o, 'duration')));
      const rows: Record<string, string | number>[] = [];
      // unmeasured warm-up (JIT, store growth) so the first measured phase is not penalised
      log(`fanout isolation: warm-up, ${Math.min(n, rate * 2)} events at ${rate}/s`);
      await runPhase(pubs, undefined, await prepareEvents(keys, Math.min(n, rate * 2), rate), rate, drainMs, undefined);
      for (const withSubs of [false, true]) {
        const prep = await prepareEvents(keys, n, rate);
        let subs: Subscribers | undefined;
        if (withSubs) {
          log(`fanout isolation: opening ${S} subscribers whose filters match none of the events`);
          subs = await openSubscribers(url, S, (j) => subscriberFilter(j, pubkeys, seed, true));
        }
        log(`fanout isolation: publishing ${n} events at ${rate}/s with ${withSubs ? S : 0} unrelated subscriptions`);
        const r = await runPhase(pubs, subs, prep, rate, drainMs, pid, num(o, 'quiet-wait'));
        const ok = r.okLatency.summary();
        const relayUsPerPublish = r.cpu.relay_cpu_pct !== undefined ? round(((r.cpu.relay_cpu_pct / 100) * (r.cpu.cpu_window_s ?? r.publishSecs) * 1e6) / n, 1) : undefined;
        emit({
          bench: 'fanout',
          mode,
          ...common,
          time: new Date().toISOString(),
          unrelated_subscribers: withSubs ? S : 0,
          rate,
          published: n,
          publish_ok: r.okTrue,
          publish_rejected: r.okFalse,
          unexpected_deliveries: r.delivered,
          publish_ok_p50_ms: ok.p50_ms,
          publish_ok_p99_ms: ok.p99_ms,
          relay_cpu_us_per_publish: relayUsPerPublish,
          ...r.cpu,
        });
        rows.push({
          'unrelated subs': withSubs ? S : 0,
          'events/s': rate,
          'OK p50 ms': ok.p50_ms,
          'OK p99 ms': ok.p99_ms,
          'relay CPU µs/publish': relayUsPerPublish ?? '-',
          'relay CPU%': r.cpu.relay_cpu_pct ?? '-',
          deliveries: r.delivered,
        });
        if (subs) closeAll(subs.conns);
      }
      table('fanout isolation: cost of a publish with and without unrelated subscriptions', rows);
    }
    closeAll(pubs);
  },
};
