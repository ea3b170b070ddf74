// idle: memory per idle connection. Opens N connections (optionally one subscription each), lets
// them settle, and reports the relay's RSS growth per connection when --pid is given (Linux /proc),
// else only the client side.
import { COMMON_OPTS, flag, num, str, type Opts } from './lib/args.js';
import type { Bench } from './lib/bench.js';
import { closeAll, connectMany, msgType } from './lib/client.js';
import { round } from './lib/histogram.js';
import { emit, log, machine, relayRssMb, table } from './lib/report.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Median of five RSS readings 400 ms apart: RSS moves with the relay's GC, one reading is noisy. */
async function steadyRss(pid: number | undefined): Promise<number | undefined> {
  if (!pid) return undefined;
  const xs: number[] = [];
  for (let i = 0; i < 5; i++) {
    const v = relayRssMb(pid);
    if (v !== undefined) xs.push(v);
    await sleep(400);
  }
  xs.sort((a, b) => a - b);
  return xs[Math.floor(xs.length / 2)];
}

export const idle: Bench = {
  name: 'idle',
  summary: 'memory per idle connection: open N connections, relay RSS growth per connection (needs --pid), client-side otherwise',
  options: [
    ...COMMON_OPTS,
    { name: 'connections', type: 'int', default: 2000, help: 'idle connections to open (mind ulimit -n on both sides; more connections, steadier figure)' },
    { name: 'with-sub', type: 'bool', default: false, help: 'each connection also holds one live subscription ({"kinds":[1],"limit":0})' },
    { name: 'settle', type: 'number', default: 3, help: 'seconds to wait before each memory reading' },
  ],
  async run(o: Opts) {
    const url = str(o, 'url');
    const pid = o.pid as number | undefined;
    const n = num(o, 'connections');
    const settle = num(o, 'settle') * 1000;
    if (!pid) log('idle: no --pid given, so only client-side memory is reported (the relay\'s own cost per connection needs its pid)');
    // warm-up round: the relay's first connections allocate pools and JIT code once; open and close
    // some first so the reading below is the steady cost per connection
    closeAll(await connectMany(url, Math.min(n, 500)));
    await sleep(settle);
    const relayBefore = await steadyRss(pid);
    const clientBefore = process.memoryUsage().rss;
    const t0 = performance.now();
    const conns = await connectMany(url, n);
    const openSecs = (performance.now() - t0) / 1000;
    if (flag(o, 'with-sub')) {
      await Promise.all(
        conns.map(
          (ws, i) =>
            new Promise<void>((resolve) => {
              const timer = setTimeout(() => {
                log(`  connection ${i}: no EOSE within 30 s`);
                resolve();
              }, 30_000);
              const onMsg = (d: Buffer): void => {
                const t = msgType(d);
                if (t === 'EOSE' || t === 'CLOSED') {
                  clearTimeout(timer);
                  ws.removeListener('message', onMsg);
                  resolve();
                }
              };
              ws.on('message', onMsg);
              ws.send(`["REQ","idle${i}",{"kinds":[1],"limit":0}]`);
            }),
        ),
      );
    }
    log(`idle: ${n} connections open (${Math.round(n / openSecs)}/s)${flag(o, 'with-sub') ? ' with one subscription each' : ''}; settling`);
    await sleep(settle);
    const relayOpen = await steadyRss(pid);
    const clientOpen = process.memoryUsage().rss;
    const alive = conns.filter((ws) => ws.readyState === ws.OPEN).length;
    closeAll(conns);
    await sleep(settle);
    const relayAfter = await steadyRss(pid);
    const perConnKb = relayBefore !== undefined && relayOpen !== undefined ? round(((relayOpen - relayBefore) * 1024) / n, 2) : undefined;
    const clientPerConnKb = round((clientOpen - clientBefore) / 1024 / n, 2);
    emit({
      bench: 'idle',
      label: str(o, 'label') || undefined,
      url,
      time: new Date().toISOString(),
      connections: n,
      with_subscription: flag(o, 'with-sub'),
      still_open_after_settle: alive,
      connect_per_s: Math.round(n / openSecs),
      relay_rss_before_mb: relayBefore,
      relay_rss_open_mb: relayOpen,
      relay_rss_after_close_mb: relayAfter,
      relay_kb_per_connection: perConnKb,
      client_kb_per_connection: clientPerConnKb,
      machine: machine(),
    });
    table(`idle: ${n} connections`, [
      { measure: 'relay RSS before / open / after close, MB', value: relayBefore !== undefined ? `${relayBefore} / ${relayOpen} / ${relayAfter}` : 'n/a (no --pid)' },
      { measure: 'relay KB per idle connection', value: perConnKb ?? 'n/a (no --pid)' },
      { measure: 'client KB per connection (ws)', value: clientPerConnKb },
      { measure: 'still open after settling', value: alive },
    ]);
  },
};
