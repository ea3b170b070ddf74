// crawl-scale: the spider against N relays that each hold a random share of a directory data set
// (bench/lib/directory-data.ts), as on the real network where one profile or follow list sits on
// many relays. Starts the relays itself (our own relay processes, or strfry with --strfry), then runs
// `orbweaver spider --once --local --json` as its own process and records wall time, events fetched
// vs stored, signature checks, bytes received and the spider's peak anonymous memory (RssAnon,
// sampled from /proc every 50 ms), and checks that every event held by at least one relay was stored.
//
//   node dist/bench/crawl-scale.js [--authors 18000] [--relays 10] [--share 0.6] [--concurrency 4]
//                                  [--scenarios single,spread] [--strfry /path/to/strfry]
//
// "single" is the baseline: one relay holding every event once. "spread": --relays relays, each
// holding each event with probability --share. Relay stores are prepared once and cached under
// $TMPDIR/orbweaver-bench/crawl-scale/ (written straight into LMDB, or `strfry import`).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync, createWriteStream } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { formatHelp, parseArgs, UsageError, type OptSpec } from './lib/args.js';
import { cacheDir, deriveKey, getSigner } from './lib/events.js';
import { DIRECTORY_DEFAULTS, directoryData, eachEvent, holds, type DirectoryData } from './lib/directory-data.js';
import { freePort } from './lib/ports.js';
import { emit, log, machine, table } from './lib/report.js';
import { openStore } from '../src/store/index.js';

const ROOT = resolve(fileURLToPath(import.meta.url), '../../..');
const CLI = join(ROOT, 'dist/src/cli.js');

const OPTIONS: OptSpec[] = [
  { name: 'authors', type: 'int', default: DIRECTORY_DEFAULTS.authors, help: 'authors in the data set (3 events each: kinds 0, 3, 10002)' },
  { name: 'seed', type: 'string', default: '1', help: 'data set seed' },
  { name: 'follow-mean', type: 'int', default: DIRECTORY_DEFAULTS.followMean, help: 'mean follows per kind 3 list (Zipf-drawn)' },
  { name: 'relays', type: 'int', default: 10, help: 'relays in the spread scenario' },
  { name: 'share', type: 'number', default: 0.6, help: 'probability that a relay of the spread holds a given event' },
  { name: 'scenarios', type: 'list', default: ['single', 'spread'], help: 'single (one relay with every event) and/or spread' },
  { name: 'concurrency', type: 'list', default: [], help: 'spider.concurrency values to run (default: the spider\'s default)' },
  { name: 'strfry', type: 'string', default: '', help: 'path of a strfry binary: the relays are strfry instead of orbweaver' },
  { name: 'strfry-config', type: 'string', default: '', help: 'strfry config file (db, port and nofiles are set on the command line); default: a minimal one' },
  { name: 'spider-env', type: 'list', default: [], help: 'extra KEY=VALUE settings for the spider process' },
  { name: 'spider-node-args', type: 'list', default: [], help: 'extra node options for the spider process, e.g. --cpu-prof' },
  { name: 'heap-mb', type: 'list', default: [], help: 'spider.heapMb values to run the spider with (the V8 heap limit it runs itself with; 0: node\'s default; none given: the setting\'s default)' },
  { name: 'repeat', type: 'int', default: 1, help: 'crawls per configuration' },
  { name: 'home-share', type: 'number', default: 0, help: 'the spider\'s store holds each event with this probability before the crawl (e.g. 0.99: an incremental run where 1% is new)' },
  { name: 'negentropy', type: 'list', default: [], help: 'spider.negentropy values to run (listed, probe, off; default: the spider\'s default)' },
  { name: 'regen', type: 'bool', default: false, help: 'regenerate the data set and the relay stores' },
  { name: 'keep', type: 'bool', default: false, help: 'keep the spider\'s data directory (printed)' },
  { name: 'label', type: 'string', default: '', help: 'copied into every JSON result' },
  { name: 'prepare-only', type: 'bool', default: false, help: 'generate the data set and prepare the relay stores, then exit (no crawl: run it without the exclusive lock)' },
];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------------
// Relays

interface Relay { url: string; proc: ChildProcess; stop(): Promise<void> }

interface Impl {
  name: string;
  /** Prepares `n` stores (cached), relay i holding the events that holds(id, i, share) picks. */
  prepare(d: DirectoryData, dirs: string[], pick: (id: string, i: number) => boolean): Promise<void>;
  start(dir: string): Promise<Relay>;
}

async function waitReady(url: string, proc: ChildProcess): Promise<void> {
  const http = url.replace(/^ws/, 'http');
  // up to 10 minutes: a relay opening a large store may build an index first (not measured)
  for (let i = 0; i < 6000; i++) {
    if (proc.exitCode !== null) throw new Error(`relay exited with ${proc.exitCode}`);
    try { if ((await fetch(http, { headers: { accept: 'application/nostr+json' } })).ok) return; } catch { /* not yet */ }
    await sleep(100);
  }
  throw new Error(`relay at ${url} did not answer`);
}

function stopper(proc: ChildProcess): () => Promise<void> {
  return () => new Promise((r) => {
    if (proc.exitCode !== null) return r();
    proc.once('exit', () => r());
    proc.kill('SIGTERM');
    setTimeout(() => proc.kill('SIGKILL'), 10_000).unref();
  });
}

const orbweaver: Impl = {
  name: 'orbweaver',
  async prepare(d, dirs, pick) {
    // Straight into LMDB (the relay's own store code, no signature checks: the set was signed here).
    const stores = await Promise.all(dirs.map((dir) => openStore({ dir, mapSize: 64 * 1024 ** 3 })));
    let pending: Promise<unknown>[] = [];
    let n = 0;
    for await (const { json, ev } of eachEvent(d)) {
      for (let i = 0; i < stores.length; i++) if (pick(ev.id, i)) pending.push(stores[i]!.write(ev, json));
      if (pending.length >= 20_000) { await Promise.all(pending); pending = []; }
      if (++n % 50_000 === 0) log(`  ... ${n}/${d.events} events written`);
    }
    await Promise.all(pending);
    await Promise.all(stores.map((s) => s.close()));
  },
  async start(dir) {
    const port = await freePort();
    const proc = spawn(process.execPath, [CLI, 'relay', '--port', String(port), '--host', '127.0.0.1', '--data', dir], {
      env: { ...process.env, ORBWEAVER_LOG_LEVEL: 'warn' }, stdio: ['ignore', 'ignore', 'inherit'],
    });
    const url = `ws://127.0.0.1:${port}`;
    await waitReady(url, proc).catch((e: unknown) => { proc.kill('SIGKILL'); throw e; });
    return { url, proc, stop: stopper(proc) };
  },
};

/**
 * strfry relays: `strfry import --no-verify` into each store, then `strfry relay`. The config is
 * --strfry-config (e.g. a peer build's shipped config) with db, port and nofiles set on the
 * command line, or a minimal one written beside the store.
 */
function strfry(bin: string, config: string): Impl {
  const args = (dir: string, port?: number) => {
    let conf = config;
    if (!conf) {
      conf = join(dir, 'strfry.conf');
      writeFileSync(conf, 'relay {\n  bind = "127.0.0.1"\n  nofiles = 0\n}\n');
    }
    return [`--config=${conf}`, `--set`, `db=${join(dir, 'db')}/`, ...(port ? ['--set', `relay.port=${port}`, '--set', 'relay.nofiles=0'] : [])];
  };
  return {
    name: 'strfry',
    async prepare(d, dirs, pick) {
      const { createReadStream } = await import('node:fs');
      const outs = dirs.map((dir) => { mkdirSync(join(dir, 'db'), { recursive: true }); return createWriteStream(join(dir, 'share.jsonl')); });
      for await (const { json, ev } of eachEvent(d)) for (let i = 0; i < outs.length; i++) if (pick(ev.id, i)) outs[i]!.write(json + '\n');
      await Promise.all(outs.map((o) => new Promise((r) => o.end(r))));
      for (const dir of dirs) {
        const proc = spawn(bin, [...args(dir), 'import', '--no-verify'], { stdio: ['pipe', 'ignore', 'ignore'] });
        createReadStream(join(dir, 'share.jsonl')).pipe(proc.stdin!);
        const code = await new Promise((r) => proc.once('exit', r));
        if (code !== 0) throw new Error(`strfry import exited with ${code}`);
        rmSync(join(dir, 'share.jsonl'));
      }
    },
    async start(dir) {
      const port = await freePort();
      const proc = spawn(bin, [...args(dir, port), 'relay'], { stdio: ['ignore', 'ignore', 'ignore'] });
      const url = `ws://127.0.0.1:${port}`;
      await waitReady(url, proc).catch((e: unknown) => { proc.kill('SIGKILL'); throw e; });
      return { url, proc, stop: stopper(proc) };
    },
  };
}

/** The relays' store directories, prepared once per (data set, implementation, count, share). */
async function relayDirs(impl: Impl, d: DirectoryData, n: number, share: number, regen: boolean): Promise<string[]> {
  const base = join(cacheDir(), 'crawl-scale', `${impl.name}-${d.file.replace(/^.*\//, '').replace(/\.jsonl$/, '')}-n${n}-s${share}`);
  const done = join(base, 'complete');
  const dirs = Array.from({ length: n }, (_, i) => join(base, `relay${i}`));
  if (!regen && existsSync(done)) return dirs;
  rmSync(base, { recursive: true, force: true });
  for (const dir of dirs) mkdirSync(dir, { recursive: true });
  log(`  preparing ${n} ${impl.name} store(s), each holding ${share === 1 ? 'every event' : `a random ${share * 100}%`}: ${base}`);
  const t0 = performance.now();
  await impl.prepare(d, dirs, share === 1 ? () => true : (id, i) => holds(id, i, share));
  writeFileSync(done, new Date().toISOString());
  log(`  prepared in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
  return dirs;
}

// ---------------------------------------------------------------------------------------------
// The spider process

interface ProcSample {
  rssAnonKb: number; hwmKb: number; ticks: number;
  /** CPU of descendants that have exited and been waited for (cutime + cstime) */
  waitedTicks: number;
}

function sample(pid: number): ProcSample | null {
  try {
    const st = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+) kB`).exec(st)?.[1] ?? 0);
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return { rssAnonKb: kb('RssAnon'), hwmKb: kb('VmHWM'), ticks: Number(f[11]) + Number(f[12]), waitedTicks: Number(f[13]) + Number(f[14]) };
  } catch { return null; }
}

const cpuTicks = (pid: number) => sample(pid)?.ticks ?? 0;

const heapLabel = (heap: string) => (heap === '' ? 'default' : Number(heap) > 0 ? `${heap} MB` : 'node default');

/** A process and its descendants (the standalone spider runs itself again with a heap limit). */
function tree(pid: number): number[] {
  const out = [pid];
  for (let i = 0; i < out.length; i++) {
    try {
      for (const t of readdirSync(`/proc/${out[i]}/task`)) {
        for (const c of readFileSync(`/proc/${out[i]}/task/${t}/children`, 'utf8').split(' ')) if (c.trim()) out.push(Number(c));
      }
    } catch { /* gone */ }
  }
  return out;
}

/** The sum over a process tree: what the operator's machine pays for one `orbweaver spider`. */
function treeSample(pid: number): ProcSample | null {
  const top = sample(pid);
  if (!top) return null;
  const all = { ...top, ticks: top.ticks + top.waitedTicks };
  for (const c of tree(pid).slice(1)) {
    const s = sample(c);
    if (!s) continue;
    all.rssAnonKb += s.rssAnonKb;
    all.hwmKb += s.hwmKb;
    all.ticks += s.ticks;
  }
  return all;
}

interface Counts {
  fetched: number; stored: number; duplicate: number; rejected: number; invalid: number; truncated: number; truncatedSlices: number; verified?: number; bytes?: number;
  nip77Relays?: number; nip77Kinds?: number; nip77Fallbacks?: number; nip77Ids?: number; nip77Bytes?: number;
}
interface Summary { durationMs: number; relays: { total: number; reached: number; failed: number }; events: Counts }

/** Index of the spider's own store in holds(): it is no relay. */
const HOME_INDEX = 1_000_000;

async function crawl(urls: string[], env: Record<string, string>, nodeArgs: string[], preload?: { d: DirectoryData; share: number }): Promise<{ summary: Summary; wallMs: number; peakAnonMb: number; hwmMb: number; cpuS: number; dir: string; preloaded: number }> {
  const dir = join(cacheDir(), 'crawl-scale', `spider-${process.pid}-${Date.now()}`);
  mkdirSync(dir, { recursive: true });
  let preloaded = 0;
  // The seed's relay list names every relay: they are all hop 0.
  const signer = await getSigner();
  const sk = deriveKey('crawl-scale', 'seed', 0);
  const pk = signer.pubkey(sk);
  const list = signer.sign({ kind: 10002, created_at: Math.floor(Date.now() / 1000) - 10, tags: urls.map((u) => ['r', u]), content: '' }, sk, pk);
  const store = await openStore({ dir, mapSize: 64 * 1024 ** 3 });
  await store.write(list, JSON.stringify(list));
  if (preload && preload.share > 0) {
    // Not timed: the home as an earlier run left it (straight into LMDB, as the relays' stores).
    let pending: Promise<unknown>[] = [];
    for await (const { json, ev } of eachEvent(preload.d)) {
      if (!holds(ev.id, HOME_INDEX, preload.share)) continue;
      pending.push(store.write(ev, json));
      preloaded++;
      if (pending.length >= 20_000) { await Promise.all(pending); pending = []; }
    }
    await Promise.all(pending);
  }
  await store.close();
  const t0 = performance.now();
  const proc = spawn(process.execPath, [...nodeArgs, CLI, 'spider', '--once', '--local', '--json', '--data', dir], {
    env: {
      ...process.env, ORBWEAVER_LOG_LEVEL: 'warn', ORBWEAVER_SPIDER_SEEDS: pk, ORBWEAVER_SPIDER_HOPS: '0',
      ORBWEAVER_SPIDER_ALLOW_PRIVATE: '1', ORBWEAVER_SPIDER_PAUSE: '0', ...env,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  proc.stdout!.on('data', (b: Buffer) => { out += b.toString(); });
  let peak = 0, hwm = 0, ticks = 0;
  const timer = setInterval(() => {
    const s = treeSample(proc.pid!);
    if (!s) return;
    peak = Math.max(peak, s.rssAnonKb);
    hwm = Math.max(hwm, s.hwmKb);
    ticks = s.ticks;
  }, 50);
  const code = await new Promise<number | null>((r) => proc.once('exit', r));
  clearInterval(timer);
  const wallMs = performance.now() - t0;
  if (code !== 0) throw new Error(`spider exited with ${code}: ${out.slice(0, 500)}`);
  return { summary: JSON.parse(out) as Summary, wallMs, peakAnonMb: peak / 1024, hwmMb: hwm / 1024, cpuS: ticks / 100, dir, preloaded };
}

/** Events held by at least one relay that the spider's store lacks. */
async function missing(d: DirectoryData, dir: string, held: (id: string) => boolean): Promise<{ expected: number; missing: number }> {
  const store = await openStore({ dir });
  let expected = 0, miss = 0;
  try {
    for await (const { ev } of eachEvent(d)) {
      if (!held(ev.id)) continue;
      expected++;
      if (!store.get(ev.id)) miss++;
    }
  } finally { await store.close(); }
  return { expected, missing: miss };
}

// ---------------------------------------------------------------------------------------------

async function main(argv: string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) { console.log(`crawl-scale options:\n${formatHelp(OPTIONS)}`); return 0; }
  const o = parseArgs(argv, OPTIONS);
  const impl = o.strfry ? strfry(String(o.strfry), String(o['strfry-config'])) : orbweaver;
  const d = await directoryData({ ...DIRECTORY_DEFAULTS, authors: Number(o.authors), seed: String(o.seed), followMean: Number(o['follow-mean']) }, Boolean(o.regen));
  log(`data set: ${d.events} events, ${(d.bytes / 1e6).toFixed(0)} MB (${d.file})`);
  const extra = Object.fromEntries((o['spider-env'] as string[]).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
  const concs = (o.concurrency as string[]).length ? (o.concurrency as string[]) : [''];
  const negs = (o.negentropy as string[]).length ? (o.negentropy as string[]) : [''];
  const homeShare = Number(o['home-share']);
  const rows: Record<string, string | number>[] = [];
  for (const scenario of o.scenarios as string[]) {
    if (scenario !== 'single' && scenario !== 'spread') throw new UsageError(`unknown scenario ${scenario}`);
    const n = scenario === 'single' ? 1 : Number(o.relays);
    const share = scenario === 'single' ? 1 : Number(o.share);
    const dirs = await relayDirs(impl, d, n, share, Boolean(o.regen));
    if (o['prepare-only']) continue;
    const held = share === 1 ? () => true : (id: string) => dirs.some((_, i) => holds(id, i, share));
    const heaps = (o['heap-mb'] as string[]).length ? (o['heap-mb'] as string[]) : [''];
    for (const c of concs) for (const neg of negs) for (const heap of heaps) {
      const nodeArgs = o['spider-node-args'] as string[];
      for (let rep = 0; rep < Number(o.repeat); rep++) {
        const started = await Promise.allSettled(dirs.map((dir) => impl.start(dir)));
        const relays = started.flatMap((x) => (x.status === 'fulfilled' ? [x.value] : []));
        const failed = started.find((x): x is PromiseRejectedResult => x.status === 'rejected');
        if (failed) { await Promise.all(relays.map((x) => x.stop())); throw failed.reason; }
        try {
          const relayTicks0 = relays.map((r) => cpuTicks(r.proc.pid!));
          const env = { ...extra, ...(c ? { ORBWEAVER_SPIDER_CONCURRENCY: c } : {}), ...(neg ? { ORBWEAVER_SPIDER_NEGENTROPY: neg } : {}), ...(heap ? { ORBWEAVER_SPIDER_HEAP_MB: heap } : {}) };
          log(`crawl: ${scenario}, ${n} ${impl.name} relay(s), concurrency ${c || 'default'}, negentropy ${neg || 'default'}, heap ${heapLabel(heap)}${homeShare ? `, home holding ${homeShare * 100}%` : ''}${Object.keys(extra).length ? `, ${JSON.stringify(extra)}` : ''}`);
          const r = await crawl(relays.map((x) => x.url), env, nodeArgs, { d, share: homeShare });
          const relayCpu = relays.reduce((a, x, i) => a + cpuTicks(x.proc.pid!) - relayTicks0[i]!, 0) / 100;
          const check = await missing(d, r.dir, held);
          if (!o.keep) rmSync(r.dir, { recursive: true, force: true }); else log(`  spider data: ${r.dir}`);
          const e = r.summary.events;
          const result = {
            bench: 'crawl-scale', label: o.label, impl: impl.name, scenario, relays: n, share, events: d.events, expected: check.expected,
            missing: check.missing, concurrency: c || 'default', negentropy: neg || 'default', home_share: homeShare, home_preloaded: r.preloaded,
            heap_mb: heapLabel(heap), spider_env: extra,
            wall_s: +(r.wallMs / 1000).toFixed(2), run_s: +(r.summary.durationMs / 1000).toFixed(2),
            fetched: e.fetched, stored: e.stored, duplicate: e.duplicate, rejected: e.rejected, invalid: e.invalid, truncated: e.truncated,
            sig_checks: e.verified ?? null, mb_received: e.bytes !== undefined ? +(e.bytes / 1e6).toFixed(1) : null,
            peak_rss_anon_mb: +r.peakAnonMb.toFixed(1), peak_rss_mb: +r.hwmMb.toFixed(1), spider_cpu_s: +r.cpuS.toFixed(1), relays_cpu_s: +relayCpu.toFixed(1),
            relays_reached: r.summary.relays.reached,
            nip77_relays: e.nip77Relays ?? null, nip77_kinds: e.nip77Kinds ?? null, nip77_fallbacks: e.nip77Fallbacks ?? null, nip77_ids: e.nip77Ids ?? null,
            nip77_mb: e.nip77Bytes !== undefined ? +(e.nip77Bytes / 1e6).toFixed(2) : null, machine: machine(),
          };
          emit(result);
          rows.push({
            scenario: `${scenario} ${n}x${share}${homeShare ? ` home ${homeShare}` : ''}`, conc: c || 'def', neg: neg || 'def', heap: heapLabel(heap), 'wall s': result.wall_s, stored: e.stored, missing: check.missing, fetched: e.fetched, dup: e.duplicate,
            'sig checks': e.verified ?? '-', 'MB in': result.mb_received ?? '-', 'nip77 relays/ids': `${e.nip77Relays ?? '-'}/${e.nip77Ids ?? '-'}`,
            'RssAnon MB': result.peak_rss_anon_mb, 'spider cpu s': result.spider_cpu_s, 'relays cpu s': result.relays_cpu_s,
          });
        } finally {
          await Promise.all(relays.map((r) => r.stop()));
        }
      }
    }
  }
  table(`crawl-scale: ${d.events} directory events (${d.params.authors} authors), ${impl.name} relays`, rows);
  return 0;
}

main(process.argv.slice(2)).then((code) => process.exit(code), (err: unknown) => {
  console.error(err instanceof UsageError ? err.message : err instanceof Error ? (err.stack ?? err.message) : err);
  process.exit(err instanceof UsageError ? 2 : 1);
});
