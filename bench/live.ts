// live: freshness of live mode — the time from an update's publication on a remote relay to its
// arrival on a live subscription of the home relay, which follows the remotes live (spider live
// mode). Any relays: `--url` is the home (it must follow the remotes live), `--remotes` the relays
// the updates are published to. Or `--spawn N`: N orbweaver remotes and an orbweaver home with the
// spider (one seed whose relay list names every remote, hops 0) and live mode are started on
// loopback with temporary data directories, the home's first crawl is awaited, then the stream runs.
//
// Updates are kind 0 profiles of `--authors` keys, signed before the clock starts, published
// round-robin to the remotes at `--rate` per second; created_at is each update's planned second.
//   node dist/bench/live.js --spawn 20 --authors 10000 --updates 2000 --rate 50
//   node dist/bench/live.js --url ws://home:7447 --remotes wss://a,wss://b --pid <home pid>
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import { finalizeEvent, generateSecretKey, getPublicKey } from 'nostr-tools/pure';
import { flag, formatHelp, list, num, parseArgs, str, UsageError, type OptSpec } from './lib/args.js';
import { Histogram } from './lib/histogram.js';
import { freePort } from './lib/ports.js';
import { emit, log, machine, relayRssMb, table, CpuSampler } from './lib/report.js';
import { LightRelay } from './lib/light-relay.js';

const ROOT = resolve(fileURLToPath(import.meta.url), '../../..');
const CLI = join(ROOT, 'dist/src/cli.js');

const OPTIONS: OptSpec[] = [
  { name: 'url', type: 'string', default: '', help: 'home relay WebSocket URL (it follows the remotes live); not with --spawn' },
  { name: 'remotes', type: 'list', default: [], help: 'relays the updates are published to; not with --spawn' },
  { name: 'pid', type: 'int', help: "home relay's process id: its RSS and CPU are reported (Linux /proc)" },
  { name: 'spawn', type: 'int', default: 0, help: 'start this many orbweaver remotes and an orbweaver home on loopback' },
  { name: 'light', type: 'bool', default: false, help: 'with --spawn: the remotes are minimal relays inside this process (hundreds fit a small machine: measures the home\'s cost per live relay)' },
  { name: 'idle', type: 'int', default: 0, help: 'with --spawn: before the stream, measure the home\'s RSS and CPU this many seconds with the live set idle, and with live mode off (a second home)' },
  { name: 'authors', type: 'int', default: 1000, help: 'keys whose profiles are updated' },
  { name: 'updates', type: 'int', default: 500, help: 'updates published' },
  { name: 'rate', type: 'number', default: 20, help: 'updates per second, all remotes together' },
  { name: 'wait', type: 'int', default: 30, help: 'seconds to wait for the last updates after the stream ends' },
  { name: 'label', type: 'string', default: '', help: 'free text copied into the JSON result' },
];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Proc { url: string; proc: ChildProcess; dir: string }

async function startRelay(env: Record<string, string> = {}): Promise<Proc> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'orbweaver-live-bench-'));
  const proc = spawn(process.execPath, [CLI, 'relay', '--port', String(port), '--host', '127.0.0.1', '--data', dir], {
    env: { ...process.env, ORBWEAVER_LOG_LEVEL: 'warn', ...env }, stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `ws://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if (proc.exitCode !== null) throw new Error(`relay exited with ${proc.exitCode}`);
    try { if ((await fetch(url.replace(/^ws/, 'http'), { headers: { accept: 'application/nostr+json' } })).ok) break; } catch { /* not yet */ }
    if (i > 600) throw new Error(`relay at ${url} did not answer`);
    await sleep(100);
  }
  return { url, proc, dir };
}

async function stop(p: Proc): Promise<void> {
  if (p.proc.exitCode === null) {
    await new Promise<void>((r) => { p.proc.once('exit', () => r()); p.proc.kill('SIGTERM'); setTimeout(() => p.proc.kill('SIGKILL'), 10_000).unref(); });
  }
  rmSync(p.dir, { recursive: true, force: true });
}

function open(url: string): Promise<WebSocket> {
  return new Promise((res, rej) => {
    const ws = new WebSocket(url, { perMessageDeflate: false });
    ws.once('open', () => res(ws));
    ws.once('error', rej);
  });
}

async function publish(url: string, evs: object[]): Promise<void> {
  const ws = await open(url);
  let left = evs.length;
  await new Promise<void>((res) => {
    ws.on('message', (d) => { if (d.toString().startsWith('["OK"') && --left === 0) res(); });
    for (const ev of evs) ws.send(JSON.stringify(['EVENT', ev]));
  });
  ws.close();
}

async function liveCount(home: string): Promise<number> {
  try {
    const st = (await (await fetch(home.replace(/^ws/, 'http') + '/status.json')).json()) as { sections: Array<{ title: string; rows: Array<[string, string]> }> };
    const row = st.sections.find((s) => s.title === 'Live directory')?.rows.find((r) => r[0] === 'live relays')?.[1] ?? '';
    return Number(/^(\d+) live/.exec(row)?.[1] ?? 0);
  } catch { return 0; }
}

async function main(argv: string[]): Promise<number> {
  if (argv.includes('--help')) { console.error(`live: freshness of live mode\n${formatHelp(OPTIONS)}`); return 0; }
  const o = parseArgs(argv, OPTIONS);
  const n = num(o, 'spawn');
  const procs: Proc[] = [];
  const lights: LightRelay[] = [];
  const idleFigures: { off?: { rss_mb: number | null; cpu_pct: number | null }; on?: { rss_mb: number | null; cpu_pct: number | null } } = {};
  let home = str(o, 'url');
  let remotes = list(o, 'remotes');
  let pid = o.pid === undefined ? undefined : num(o, 'pid');
  try {
    if (n > 0) {
      log(`starting ${n} ${flag(o, 'light') ? 'light remotes (in this process)' : 'remotes'} and a home on loopback`);
      if (flag(o, 'light')) {
        const ls = await Promise.all(Array.from({ length: n }, () => new LightRelay().start()));
        lights.push(...ls);
        remotes = ls.map((r) => r.url);
      } else {
        const rs = await Promise.all(Array.from({ length: n }, () => startRelay()));
        procs.push(...rs);
        remotes = rs.map((r) => r.url);
      }
      const seed = generateSecretKey();
      await publish(remotes[0]!, [finalizeEvent({ kind: 10002, created_at: Math.floor(Date.now() / 1000) - 60, tags: remotes.map((u) => ['r', u]), content: '' }, seed)]);
      const homeEnv = (live: number) => ({
        ORBWEAVER_SPIDER: '1', ORBWEAVER_SPIDER_SEEDS: getPublicKey(seed), ORBWEAVER_SPIDER_BOOTSTRAP_RELAYS: remotes[0]!,
        ORBWEAVER_SPIDER_ALLOW_PRIVATE: '1', ORBWEAVER_SPIDER_HOPS: '0', ORBWEAVER_SPIDER_PAUSE: '0', ORBWEAVER_SPIDER_IDLE_TIMEOUT: '2s',
        // one seed list names every remote: above spider.maxRelayTagsPerList (200) it would be ignored
        ORBWEAVER_SPIDER_MAX_RELAY_TAGS_PER_LIST: String(Math.max(200, n)),
        ORBWEAVER_SPIDER_MAX_RELAYS_PER_HOP: String(Math.max(500, n)), ORBWEAVER_SPIDER_LIVE_MAX_RELAYS: String(live),
        // the stream is the measurement, not an attack: per-remote bounds above it
        ORBWEAVER_SPIDER_LIVE_EVENTS_PER_SECOND: String(Math.max(50, Math.ceil(num(o, 'rate')))),
      });
      const idle = num(o, 'idle');
      if (idle > 0) {
        // the same home with live mode off: its crawl, then idle — the baseline
        const base = await startRelay(homeEnv(0));
        procs.push(base);
        await sleep(5000);
        const c = new CpuSampler(base.proc.pid);
        await sleep(idle * 1000);
        idleFigures.off = { rss_mb: relayRssMb(base.proc.pid) ?? null, cpu_pct: c.read().relay_cpu_pct ?? null };
        await stop(base);
        procs.splice(procs.indexOf(base), 1);
      }
      const h = await startRelay(homeEnv(n));
      procs.push(h);
      home = h.url;
      pid = h.proc.pid;
      for (let i = 0; (await liveCount(home)) < n; i++) {
        if (i > 3000) throw new Error(`the home did not follow every remote live within 300 s`);
        await sleep(100);
      }
      log(`home follows ${n} remotes live`);
      if (idle > 0) {
        await sleep(3000);
        const c = new CpuSampler(pid);
        await sleep(idle * 1000);
        idleFigures.on = { rss_mb: relayRssMb(pid) ?? null, cpu_pct: c.read().relay_cpu_pct ?? null };
        log(`idle: live off ${JSON.stringify(idleFigures.off)}, ${n} live ${JSON.stringify(idleFigures.on)}`);
      }
    }
    if (!home || remotes.length === 0) throw new UsageError('give --url and --remotes, or --spawn N');
    const authors = Array.from({ length: num(o, 'authors') }, () => generateSecretKey());
    const count = num(o, 'updates');
    const rate = num(o, 'rate');
    const start = Math.floor(Date.now() / 1000) + 2;
    log(`signing ${count} updates`);
    const updates = Array.from({ length: count }, (_, i) => finalizeEvent({ kind: 0, created_at: start + Math.floor(i / rate), tags: [], content: JSON.stringify({ name: `bench ${i}` }) }, authors[i % authors.length]!));
    const pubs = await Promise.all(remotes.map(open));
    const sub = await open(home);
    const sent = new Map<string, number>();
    const hist = new Histogram();
    sub.on('message', (d) => {
      const s = d.toString();
      if (!s.startsWith('["EVENT"')) return;
      const id = /"id":"([0-9a-f]{64})"/.exec(s)?.[1];
      const t = id ? sent.get(id) : undefined;
      if (t !== undefined) { hist.record(performance.now() - t); sent.delete(id!); }
    });
    sub.send(JSON.stringify(['REQ', 'bench', { kinds: [0], since: start }]));
    await sleep(500);
    const cpu = new CpuSampler(pid);
    const t0 = performance.now();
    for (let i = 0; i < count; i++) {
      const due = t0 + (i * 1000) / rate;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      const ev = updates[i]!;
      sent.set(ev.id, performance.now());
      pubs[i % pubs.length]!.send(JSON.stringify(['EVENT', ev]));
    }
    const end = Date.now() + num(o, 'wait') * 1000;
    while (sent.size > 0 && Date.now() < end) await sleep(100);
    const cpuReading = cpu.read();
    const s = hist.summary();
    const result = {
      bench: 'live', label: str(o, 'label'), remotes: remotes.length, authors: authors.length, updates: count, rate,
      delivered: s.count, missing: sent.size, p50_ms: s.p50_ms, p90_ms: s.p90_ms, p99_ms: s.p99_ms, max_ms: s.max_ms, mean_ms: s.mean_ms,
      p95_ms: Math.round(hist.quantile(0.95) * 1000) / 1000,
      light: flag(o, 'light'), idle_s: num(o, 'idle'), idle_live_off: idleFigures.off ?? null, idle_live_on: idleFigures.on ?? null,
      home_rss_mb: relayRssMb(pid) ?? null, home_cpu: cpuReading, machine: machine(),
    };
    emit(result);
    table('live: publish on a remote -> home live subscription', [{ remotes: remotes.length, updates: count, 'rate/s': rate, delivered: s.count, missing: sent.size, 'p50 ms': s.p50_ms, 'p95 ms': result.p95_ms, 'p99 ms': s.p99_ms, 'max ms': s.max_ms, 'home RSS MB': result.home_rss_mb ?? '-' }]);
    for (const p of pubs) p.close();
    sub.close();
    return sent.size === 0 ? 0 : 1;
  } finally {
    await Promise.all(procs.map(stop));
    await Promise.all(lights.map((l) => l.close()));
  }
}

main(process.argv.slice(2)).then((code) => process.exit(code), (err: unknown) => {
  console.error(err instanceof UsageError ? err.message : err instanceof Error ? (err.stack ?? err.message) : err);
  process.exit(err instanceof UsageError ? 2 : 1);
});
