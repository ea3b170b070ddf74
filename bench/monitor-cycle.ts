// monitor-cycle: one NIP-66 monitor over N relays on a loopback test network — the wall time of
// its cycles and its peak memory, with the probes on or off (issue 43: the probes may add at most
// 50% to a cycle and 10% to peak memory). The relays are bench/lib/light-relay.ts stand-ins in a
// child process (their CPU and memory are not the monitor's), each with a NIP-11 document claiming
// 1, 11, 45, 50, 77, one kind 0 profile that says "nostr" and a few kind 1 notes, answering REQ,
// search, COUNT and NEG-OPEN. The monitor is the project's (createMonitor) on a fresh store with
// the real ingest path, `spider.monitorConcurrency` checks at a time, validation off.
//
//   node dist/bench/monitor-cycle.js [--relays 1000] [--probes on|off] [--cycles 2] [--concurrency 8] [--timeout 10s]
//
// Works on trees from before the probes (no spider.monitorProbes: reported as probes "absent").
// Prints one JSON line on stdout, a summary on stderr.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { LightRelay } from './lib/light-relay.js';

const hex = (i: number, salt: number) => (i.toString(16).padStart(8, '0') + salt.toString(16).padStart(8, '0')).repeat(4);

async function serve(n: number): Promise<void> {
  const relays: LightRelay[] = [];
  for (let i = 0; i < n; i++) {
    const r = new LightRelay({ name: `bench ${i}`, software: 'light-relay', supported_nips: [1, 11, 45, 50, 77], limitation: { max_limit: 500, max_filters: 10 } });
    r.add({ id: hex(i, 0), pubkey: hex(i, 1), kind: 0, created_at: 1_700_000_000, content: JSON.stringify({ name: `nostr user ${i}` }) });
    for (let k = 0; k < 5; k++) r.add({ id: hex(i, 10 + k), pubkey: hex(i, 1), kind: 1, created_at: 1_700_000_100 + k, content: `note ${k}` });
    relays.push(await r.start());
  }
  process.stdout.write(JSON.stringify(relays.map((r) => r.url)) + '\n');
  process.stdin.on('end', () => process.exit(0));
  process.stdin.resume();
}

function arg(name: string, dflt: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : dflt;
}

function rssAnonMb(): number {
  const m = /RssAnon:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
  return m ? Math.round(Number(m[1]) / 1024) : 0;
}

async function main(): Promise<void> {
  const n = Number(arg('relays', '1000'));
  const probes = arg('probes', 'on');
  const cycles = Number(arg('cycles', '2'));
  const { openHome, quietLog } = await import('../test/spider/harness.js');
  const { createMonitor } = await import('../src/monitor/monitor.js');
  const { RelayDirectory } = await import('../src/directory/records.js');
  const { configSchema } = await import('../src/config/schema.js');

  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--serve', String(n)], { stdio: ['pipe', 'pipe', 'inherit'] });
  const first = await new Promise<string>((resolve) => createInterface({ input: child.stdout! }).once('line', resolve));
  const urls = JSON.parse(first) as string[];
  const home = await openHome();
  let peakAnon = rssAnonMb();
  const sampler = setInterval(() => { peakAnon = Math.max(peakAnon, rssAnonMb()); }, 50);
  try {
    const directory = new RelayDirectory(home.store.env);
    for (const u of urls) await directory.discovered(u, 0, ['seed'], 1);
    const hasProbes = 'monitorProbes' in configSchema.parse({}).spider;
    const spider: Record<string, unknown> = { monitor: true, allowPrivate: true, monitorInterval: '1h', monitorTimeout: arg('timeout', '10s'), monitorConcurrency: Number(arg('concurrency', '8')) };
    if (hasProbes) spider.monitorProbes = probes === 'on';
    const config = configSchema.parse({ dataDir: home.dir, spider });
    const monitor = createMonitor({ config, store: home.store, put: async (ev) => (await home.ingest(ev, { source: 'monitor' })).status, logger: quietLog, validate: false });
    const baseAnon = rssAnonMb();
    const runs: Array<{ ms: number; checked: number; online: number; published: number; cpuMs: number; peakRssAnonMb: number; heapMb: number }> = [];
    for (let c = 0; c < cycles; c++) {
      peakAnon = rssAnonMb();
      const cpu = process.cpuUsage();
      const t0 = performance.now();
      const s = await monitor.runOnce();
      const ms = Math.round(performance.now() - t0);
      const used = process.cpuUsage(cpu);
      peakAnon = Math.max(peakAnon, rssAnonMb());
      runs.push({ ms, checked: s.checked, online: s.online, published: s.published, cpuMs: Math.round((used.user + used.system) / 1000), peakRssAnonMb: peakAnon, heapMb: Math.round(process.memoryUsage().heapTotal / 1048576) });
    }
    peakAnon = Math.max(...runs.map((r) => r.peakRssAnonMb));
    await monitor.stop();
    peakAnon = Math.max(peakAnon, rssAnonMb());
    const result = {
      bench: 'monitor-cycle', relays: n, probes: hasProbes ? probes : 'absent', concurrency: config.spider.monitorConcurrency, node: process.version,
      cycles: runs, peakRssAnonMb: peakAnon, rssAnonBeforeCyclesMb: baseAnon, maxRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
    };
    process.stdout.write(JSON.stringify(result) + '\n');
    process.stderr.write(`monitor-cycle: ${n} relays, probes ${result.probes}: cycles ${runs.map((r) => `${r.ms} ms (${r.online}/${r.checked} online, cpu ${r.cpuMs} ms, peak RssAnon ${r.peakRssAnonMb} MB, heap ${r.heapMb} MB)`).join(', ')}; peak RssAnon ${peakAnon} MB (${baseAnon} MB before the cycles), max RSS ${result.maxRssMb} MB\n`);
  } finally {
    clearInterval(sampler);
    child.stdin!.end();
    await home.close();
  }
}

if (process.argv[2] === '--serve') void serve(Number(process.argv[3]));
else main().then(() => process.exit(0), (e) => { console.error(e); process.exit(1); });
