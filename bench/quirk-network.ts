// quirk-network: one `orbweaver spider --once` over a loopback network of relays that behave as the
// network does (issue 73), built from the test fixtures (test/fixtures/test-relay.ts and its quirk
// switches, test/fixtures/path-host.ts): plain relays; one store reached under 40 paths of one host;
// an indexer that caps answers at 100 and ignores `limit` (its NIP-11 says 500); one that reads
// `until <= 0` as no until (and holds events dated 0); one that lists NIP-77 and refuses NEG-OPEN;
// one that answers only REQs naming authors; one that limits REQs per address; one that sends events
// outside the filter's window; and one that never answers (accepts the TCP connection, says nothing).
// The switches the fixture lacks (an older tree) are reported as such and the relay behaves plainly.
//
// N authors (default 1,200) each publish kinds 0, 3 (following some others) and 10002 to the relays
// their relay lists name (3 of the network, one of the 40 paths for the host). A seed whose list
// names the first plain relay (also the bootstrap relay) starts the crawl. The spider runs as its
// own process (`node dist/src/cli.js spider --once --local --json`, defaults apart from
// allowPrivate, the seed and the bootstrap relay) on a temporary data directory, once with the
// silent relay there and once with its port closed (a relay that is simply down), and the bench
// reports, one JSON line each: per relay the REQs received, events sent and held (REQs per event
// held), events lost; the 40-path host's REQs per event against the plain relays' (ratio); events
// held by answering relays vs stored; wall time of each crawl and how long the silent relay held
// the spider; the spider's own summary.
//
//   npm run bench -- quirk-network [--authors 1200] [--paths 40] [--plain 4] [--nip67] [--again]
import { spawn } from 'node:child_process';
import { createServer, type Server, type Socket } from 'node:net';
import { rmSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Bench } from './lib/bench.js';
import type { Opts, OptSpec } from './lib/args.js';
import { emit, log, machine, table } from './lib/report.js';
import { TestRelay, keypair, sign, relayList, type TestRelayOptions } from '../test/fixtures/test-relay.js';
import { PathHost } from '../test/fixtures/path-host.js';
import { IDENTITY_KINDS, IDENTITY_LIMIT } from '../src/remote/identity.js';
import { openStore } from '../src/store/index.js';
import type { NostrEvent } from '../src/nostr/event.js';
import type { SpiderSummary } from '../src/spider/status.js';

const ROOT = resolve(fileURLToPath(import.meta.url), '../../..');
const CLI = join(ROOT, 'dist/src/cli.js');

const OPTIONS: OptSpec[] = [
  { name: 'authors', type: 'int', default: 1200, help: 'authors, each publishing kinds 0, 3 and 10002 to the relays its list names' },
  { name: 'plain', type: 'int', default: 4, help: 'plain relays (the first is the seed\'s relay and the bootstrap relay)' },
  { name: 'paths', type: 'int', default: 40, help: 'paths of the one host that serves one store under all of them' },
  { name: 'relays-per-author', type: 'int', default: 3, help: 'relays named by each author\'s relay list (distinct, of the whole network)' },
  { name: 'follows', type: 'int', default: 30, help: 'authors followed by each kind 3 list (random)' },
  { name: 'dated-zero', type: 'number', default: 0.05, help: 'share of the until<=0 relay\'s authors whose profile is dated 0' },
  { name: 'silent', type: 'bool', default: true, help: 'a relay that never answers (TCP accepted, nothing said) is part of the network' },
  { name: 'without-silent', type: 'bool', default: true, help: 'also crawl with the silent relay\'s port closed (the crawl as it would be without it)' },
  { name: 'again', type: 'bool', default: false, help: 'a second spider run on the same data directory after the first (aliases on record, cursors)' },
  { name: 'nip67', type: 'bool', default: false, help: 'the answering relays end stored answers with ["finish"] when they sent every match (NIP-67)' },
  { name: 'cli', type: 'string', default: '', help: 'the orbweaver CLI to run the spider with (another build\'s dist/src/cli.js: the spider before a change); default: this tree\'s' },
  { name: 'timeout', type: 'int', default: 1200, help: 'seconds one spider run may take before it is killed' },
  { name: 'spider-env', type: 'list', default: [], help: 'extra KEY=VALUE settings for the spider process (ORBWEAVER_SPIDER_...)' },
  { name: 'keep', type: 'bool', default: false, help: 'keep the spider\'s data directories (printed)' },
  { name: 'label', type: 'string', default: '', help: 'copied into every JSON result' },
];

type Role = 'plain' | 'host' | 'cap100' | 'untilZero' | 'refuseNeg' | 'authorsOnly' | 'rateLimited' | 'outsideWindow' | 'silent';

/** One relay of the network: a TestRelay (the host: one store behind a PathHost), or the silent server. */
interface Node {
  name: string;
  role: Role;
  relay?: TestRelay;
  urls: string[];
  /** the quirk asked for is known to the fixture (an older fixture ignores it: the relay is plain) */
  quirkSupported: boolean;
  /** instrumented counters */
  c: Counters;
}

interface Counters { reqs: number; sent: number; probeReqs: number; connections: number; crawlPaths: Set<string>; lastReqAt: number }

const zero = (): Counters => ({ reqs: 0, sent: 0, probeReqs: 0, connections: 0, crawlPaths: new Set(), lastReqAt: 0 });

const isProbe = (f: Record<string, unknown>) => f.limit === IDENTITY_LIMIT && JSON.stringify(f.kinds) === JSON.stringify(IDENTITY_KINDS);

/** Counts REQ messages (and identity probes, and the paths crawled) and EVENT frames sent, by wrapping the fixture's own methods. */
function instrument(relay: TestRelay, c: Counters): void {
  const r = relay as unknown as {
    onMessage(ws: unknown, text: string): void;
    send(ws: unknown, text: string): void;
    pathOf: WeakMap<object, string>;
  };
  const onMessage = r.onMessage.bind(relay);
  const send = r.send.bind(relay);
  r.onMessage = (ws, text) => {
    if (text.startsWith('["REQ"')) {
      c.reqs++;
      c.lastReqAt = Date.now();
      try {
        const msg = JSON.parse(text) as unknown[];
        const filters = msg.slice(2) as Array<Record<string, unknown>>;
        if (filters.length === 1 && isProbe(filters[0]!)) c.probeReqs++;
        else c.crawlPaths.add(r.pathOf.get(ws as object) ?? '');
      } catch { /* the fixture ignores it too */ }
    }
    onMessage(ws, text);
  };
  r.send = (ws, text) => {
    if (text.startsWith('["EVENT"')) c.sent++;
    send(ws, text);
  };
}

/** A relay that accepts TCP connections and never says anything (nor closes them). */
class SilentRelay {
  private server?: Server;
  private sockets = new Set<Socket>();
  port = 0;
  connections = 0;
  firstAt = 0;
  lastCloseAt = 0;
  /** sum over connections of the time each was held open (by the spider) */
  heldMs = 0;

  get url(): string { return `ws://127.0.0.1:${this.port}`; }

  async start(port = 0): Promise<this> {
    const server = (this.server = createServer((s) => {
      const at = Date.now();
      this.connections++;
      if (!this.firstAt) this.firstAt = at;
      this.sockets.add(s);
      s.on('data', () => {});
      s.on('error', () => {});
      s.on('close', () => { this.sockets.delete(s); this.lastCloseAt = Date.now(); this.heldMs += Date.now() - at; });
    }));
    await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
    this.port = (server.address() as { port: number }).port;
    return this;
  }

  reset(): void { this.connections = 0; this.firstAt = 0; this.lastCloseAt = 0; this.heldMs = 0; }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise<void>((r) => server.close(() => r()));
  }
}

const ROLES_ORDER: Role[] = ['plain', 'host', 'cap100', 'untilZero', 'refuseNeg', 'authorsOnly', 'rateLimited', 'outsideWindow', 'silent'];

/** The fixture options of each quirky relay, and the field an older fixture lacks (then the switch is ignored). */
function quirkOptions(role: Role, nip67: boolean): { opts: TestRelayOptions; needs?: string } {
  const nip11 = (name: string, nips: number[], extra: Record<string, unknown> = {}) => ({ name, supported_nips: nips, software: 'test-relay', ...extra });
  const base = { nip67 };
  switch (role) {
    case 'cap100':
      // strfry's page cap at 100, whatever limit is asked; its NIP-11 claims 500
      return { opts: { ...base, flavour: 'strfry', cap: 100, nip11: nip11('capped indexer', [1, 11], { limitation: { max_limit: 500 } }) } };
    case 'untilZero':
      return { opts: { ...base, flavour: 'strfry', untilZeroIsNone: true, nip11: nip11('until<=0 indexer', [1, 11]) } as TestRelayOptions, needs: 'untilZeroIsNone' };
    case 'refuseNeg':
      return { opts: { ...base, neg: 'notice', nip11: nip11('lists 77, refuses NEG', [1, 11, 77]) } };
    case 'authorsOnly':
      return { opts: { ...base, authorsRequired: { reason: 'blocked: filters must name authors' }, nip11: nip11('authors only', [1, 11]) } as TestRelayOptions, needs: 'authorsRequired' };
    case 'rateLimited':
      return { opts: { ...base, minReqGap: 250, nip11: nip11('rate limit per address', [1, 11]) } as TestRelayOptions, needs: 'minReqGap' };
    case 'outsideWindow':
      return { opts: { ...base, outsideWindow: 5, nip11: nip11('events outside the window', [1, 11]) } as TestRelayOptions, needs: 'outsideWindow' };
    default:
      return { opts: { ...base, nip11: nip11(role, [1, 11]) } };
  }
}

/** Whether the fixture knows the switch: the fields it adds with it exist on a new instance. */
function fixtureHas(needs: string | undefined): boolean {
  if (!needs) return true;
  const probe = new TestRelay() as unknown as Record<string, unknown>;
  // authorsRequired came with refusedNoAuthors; the other three with refusedTooSoon (one commit of the fixture)
  const marker: Record<string, string> = { authorsRequired: 'refusedNoAuthors', minReqGap: 'refusedTooSoon', untilZeroIsNone: 'refusedTooSoon', outsideWindow: 'refusedTooSoon' };
  return marker[needs] ? marker[needs] in probe : true;
}

const rand = (n: number) => Math.floor(Math.random() * n);

function pickDistinct<T>(from: T[], k: number): T[] {
  const copy = [...from];
  const out: T[] = [];
  while (out.length < k && copy.length) out.push(copy.splice(rand(copy.length), 1)[0]!);
  return out;
}

interface Network {
  nodes: Node[];
  host: PathHost;
  silent?: SilentRelay;
  silentNode?: Node;
  seedPk: string;
  bootstrap: string;
  /** every event placed on an answering relay (the union), by id */
  held: Map<string, NostrEvent>;
  datedZero: number;
  close(): Promise<void>;
}

async function buildNetwork(o: Opts): Promise<Network> {
  const nip67 = Boolean(o.nip67);
  const nodes: Node[] = [];
  for (let i = 0; i < Number(o.plain); i++) {
    const relay = new TestRelay(quirkOptions('plain', nip67).opts);
    nodes.push({ name: `plain-${i}`, role: 'plain', relay, urls: [], quirkSupported: true, c: zero() });
  }
  // one store under many made-up paths (its NIP-11 names no path)
  const store = new TestRelay(quirkOptions('host', nip67).opts);
  const paths = ['/', ...Array.from({ length: Number(o.paths) - 1 }, (_, i) => (i % 3 === 0 ? `/r/${(i * 7919).toString(36)}` : i % 3 === 1 ? `/nostr${i}` : `/u/${i}/inbox`))];
  const host = new PathHost(Object.fromEntries(paths.map((p) => [p, store])));
  nodes.push({ name: `host-${paths.length}-paths`, role: 'host', relay: store, urls: [], quirkSupported: true, c: zero() });
  for (const role of ['cap100', 'untilZero', 'refuseNeg', 'authorsOnly', 'rateLimited', 'outsideWindow'] as Role[]) {
    const { opts, needs } = quirkOptions(role, nip67);
    nodes.push({ name: role, role, relay: new TestRelay(opts), urls: [], quirkSupported: fixtureHas(needs), c: zero() });
  }
  let silent: SilentRelay | undefined;
  let silentNode: Node | undefined;
  if (o.silent) {
    silent = await new SilentRelay().start();
    silentNode = { name: 'silent', role: 'silent', urls: [silent.url], quirkSupported: true, c: zero() };
  }
  await Promise.all(nodes.filter((n) => n.role !== 'host').map((n) => n.relay!.start()));
  await host.start();
  for (const n of nodes) {
    n.urls = n.role === 'host' ? paths.map((p) => host.url(p)) : [n.relay!.url];
    instrument(n.relay!, n.c);
  }
  const all = silentNode ? [...nodes, silentNode] : nodes;

  // authors: keys first (follow lists name them), then each author's relays and events
  const T0 = Math.floor(Date.now() / 1000) - 3600;
  const n = Number(o.authors);
  log(`signing ${n * 3} events of ${n} authors ...`);
  const keys = Array.from({ length: n }, () => keypair());
  const held = new Map<string, NostrEvent>();
  let hostPath = 0;
  let datedZero = 0;
  for (let i = 0; i < n; i++) {
    const k = keys[i]!;
    const mine = pickDistinct(all, Math.min(Number(o['relays-per-author']), all.length));
    // the host's URL: the paths in turn, so every path is named by some list
    const urls = mine.map((m) => (m.role === 'host' ? m.urls[hostPath++ % m.urls.length]! : m.urls[0]!));
    const t = T0 - i;
    const zeroProfile = mine.some((m) => m.role === 'untilZero') && Math.random() < Number(o['dated-zero']);
    if (zeroProfile) datedZero++;
    const follows = pickDistinct(keys, Number(o.follows)).filter((f) => f !== k).map((f) => ['p', f.pk]);
    const evs = [
      sign(k.sk, 0, zeroProfile ? 0 : t, [], JSON.stringify({ name: `author ${i}` })),
      sign(k.sk, 3, t, follows),
      relayList(k.sk, t, urls),
    ];
    for (const m of mine) {
      if (!m.relay) continue;
      m.relay.add(...evs);
      for (const ev of evs) held.set(ev.id, ev);
    }
  }
  // the seed: its relay list names the first plain relay, which holds it and is the bootstrap relay
  const seed = keypair();
  const hub = nodes[0]!;
  const seedList = relayList(seed.sk, T0 + 60, [hub.urls[0]!]);
  hub.relay!.add(seedList);
  held.set(seedList.id, seedList);
  return {
    nodes: all, host, silent, silentNode, seedPk: seed.pk, bootstrap: hub.urls[0]!, held, datedZero,
    async close() {
      await Promise.all([...nodes.filter((x) => x.role !== 'host').map((x) => x.relay!.close()), host.close(), silent?.close()]);
    },
  };
}

interface RunResult {
  ok: boolean;
  startedAt: number;
  code: number | null;
  wallMs: number;
  summary?: SpiderSummary;
  stderrTail: string;
}

/** `orbweaver spider --once --local --json` in its own process group (killed whole at the timeout). */
function spiderOnce(dir: string, net: Network, o: Opts): Promise<RunResult> {
  const extra: Record<string, string> = {};
  for (const kv of (o['spider-env'] as string[]) ?? []) {
    const eq = kv.indexOf('=');
    if (eq > 0) extra[kv.slice(0, eq)] = kv.slice(eq + 1);
  }
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('ORBWEAVER_')) env[k] = v;
  Object.assign(env, {
    ORBWEAVER_LOG_LEVEL: 'warn', ORBWEAVER_SPIDER_SEEDS: net.seedPk, ORBWEAVER_SPIDER_BOOTSTRAP_RELAYS: net.bootstrap,
    ORBWEAVER_SPIDER_ALLOW_PRIVATE: '1', ...extra,
  });
  const started = Date.now();
  const proc = spawn(process.execPath, [String(o.cli || CLI), 'spider', '--once', '--local', '--json', '--data', dir], { env, cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let out = '', err = '';
  proc.stdout!.on('data', (d: Buffer) => { out += d.toString(); });
  proc.stderr!.on('data', (d: Buffer) => { err += d.toString(); if (err.length > 1 << 20) err = err.slice(-(1 << 19)); });
  const killGroup = () => { try { process.kill(-proc.pid!, 'SIGKILL'); } catch { /* gone */ } };
  const timer = setTimeout(() => { log(`spider run over ${o.timeout} s: killed`); killGroup(); }, Number(o.timeout) * 1000);
  return new Promise((res) => {
    proc.once('close', (code) => {
      clearTimeout(timer);
      killGroup(); // anything it left behind in its group
      const wallMs = Date.now() - started;
      let summary: SpiderSummary | undefined;
      try { summary = JSON.parse(out) as SpiderSummary; } catch { /* printed nothing or died */ }
      res({ ok: code === 0 && summary !== undefined, startedAt: started, code, wallMs, summary, stderrTail: err.slice(-2000) });
    });
  });
}

function snapshot(net: Network): Map<string, Counters> {
  return new Map(net.nodes.map((n) => [n.name, { ...n.c, crawlPaths: new Set(n.c.crawlPaths) }]));
}

function resetCounters(net: Network): void {
  for (const n of net.nodes) {
    n.c.reqs = 0; n.c.sent = 0; n.c.probeReqs = 0; n.c.crawlPaths.clear(); n.c.lastReqAt = 0;
    if (n.relay) n.c.connections = n.relay.connections;
  }
  net.silent?.reset();
}

const median = (xs: number[]) => { const s = [...xs].sort((a, b) => a - b); return s.length ? (s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2) : NaN; };
const r4 = (x: number) => Math.round(x * 10_000) / 10_000;

async function crawl(net: Network, o: Opts, scenario: string, dir: string): Promise<Record<string, unknown>> {
  resetCounters(net);
  log(`\n[${scenario}] spider --once on ${dir} ...`);
  const run = await spiderOnce(dir, net, o);
  const s = run.summary;
  log(`[${scenario}] exit ${run.code} after ${(run.wallMs / 1000).toFixed(1)} s`);
  if (!run.ok) log(run.stderrTail);

  // what the home store holds of what the answering relays hold
  const store = await openStore({ dir, readOnly: true });
  const stored = new Set<string>();
  try { for (const id of net.held.keys()) if (store.get(id)) stored.add(id); } finally { await store.close(); }

  const rows: Array<Record<string, string | number>> = [];
  const relays: Array<Record<string, unknown>> = [];
  for (const n of net.nodes) {
    if (!n.relay) continue;
    const heldHere = n.relay.events.length;
    const lost = n.relay.events.filter((e) => !stored.has(e.id)).length;
    const connections = n.relay.connections - n.c.connections;
    const rpe = heldHere ? n.c.reqs / heldHere : NaN;
    relays.push({
      relay: n.name, role: n.role, quirk_supported: n.quirkSupported, urls: n.urls.length, held: heldHere, reqs: n.c.reqs, probe_reqs: n.c.probeReqs,
      events_sent: n.c.sent, reqs_per_event: r4(rpe), sent_per_held: r4(heldHere ? n.c.sent / heldHere : NaN), lost, connections,
      paths_crawled: n.c.crawlPaths.size,
    });
    rows.push({ relay: n.name + (n.quirkSupported ? '' : ' (switch absent)'), held: heldHere, reqs: n.c.reqs, probes: n.c.probeReqs, sent: n.c.sent, 'reqs/event': r4(rpe), lost, conns: connections, paths: n.c.crawlPaths.size });
  }
  const plainRpe = median(relays.filter((r) => r.role === 'plain').map((r) => r.reqs_per_event as number));
  const hostRow = relays.find((r) => r.role === 'host')!;
  const hostRatio = (hostRow.reqs_per_event as number) / plainRpe;
  const lost = [...net.held.keys()].filter((id) => !stored.has(id)).length;
  const silent = net.silent && scenario !== 'silent-down'
    ? {
      connections: net.silent.connections, span_ms: net.silent.firstAt ? (net.silent.lastCloseAt || Date.now()) - net.silent.firstAt : 0, held_ms: net.silent.heldMs,
      first_at_ms: net.silent.firstAt ? net.silent.firstAt - run.startedAt : null,
    }
    : undefined;
  // when the answering relays got their last REQ (from the spider's start): the rest of the crawl done
  const lastReq = Math.max(...net.nodes.filter((x) => x.relay).map((x) => x.c.lastReqAt));
  const answeringDoneMs = lastReq ? lastReq - run.startedAt : null;
  table(`${scenario}: per relay (REQs received, of them identity probes; EVENT frames sent; events lost = held there, not stored)`, rows);
  const result = {
    bench: 'quirk-network', scenario, label: o.label, ok: run.ok, exit: run.code,
    wall_ms: run.wallMs, spider_ms: s?.durationMs, last_answering_req_ms: answeringDoneMs,
    held: net.held.size, stored: stored.size, lost,
    host_reqs_per_event: hostRow.reqs_per_event, plain_reqs_per_event_median: r4(plainRpe), host_ratio: r4(hostRatio),
    host_paths_crawled: hostRow.paths_crawled, host_probe_reqs: hostRow.probe_reqs,
    silent,
    summary: s ? { relays: s.relays, events: s.events, hops: s.hops.map((h) => ({ hop: h.hop, relays: h.relays, reached: h.reached, failed: h.failed, aliases: h.aliases, fetched: h.events.fetched, stored: h.events.stored })), failures: s.failures, aborted: s.aborted } : undefined,
  };
  log(`[${scenario}] held by answering relays ${net.held.size}, stored ${stored.size}, lost ${lost}; host ${hostRow.reqs_per_event} REQs/event vs plain ${r4(plainRpe)} (${r4(hostRatio)}x)` +
    (silent ? `; silent relay: ${silent.connections} connections over ${(silent.span_ms / 1000).toFixed(1)} s` : ''));
  emit(result);
  for (const r of relays) emit({ bench: 'quirk-network', scenario, label: o.label, ...r });
  return result;
}

async function run(o: Opts): Promise<void> {
  const dirs: string[] = [];
  const tmp = (p: string) => { const d = mkdtempSync(join(tmpdir(), p)); dirs.push(d); return d; };
  const net = await buildNetwork(o);
  const onSignal = () => { void net.close().finally(() => { if (!o.keep) for (const d of dirs) rmSync(d, { recursive: true, force: true }); process.exit(130); }); };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const switches = Object.fromEntries(net.nodes.map((n) => [n.name, n.quirkSupported]));
    emit({
      bench: 'quirk-network', scenario: 'network', label: o.label, cli: o.cli || CLI, machine: machine(), authors: o.authors, relays: net.nodes.length,
      urls: net.nodes.reduce((a, n) => a + n.urls.length, 0), held: net.held.size, dated_zero: net.datedZero, nip67: o.nip67, switches,
    });
    log(`network: ${net.nodes.length} relays under ${net.nodes.reduce((a, n) => a + n.urls.length, 0)} URLs, ${net.held.size} events held by answering relays` +
      `${Object.values(switches).every(Boolean) ? '' : `; switches absent from this fixture: ${Object.entries(switches).filter(([, v]) => !v).map(([k]) => k).join(', ')}`}`);
    const first = tmp('orbweaver-quirk-');
    const a = await crawl(net, o, net.silent ? 'with-silent' : 'network', first);
    if (o.again) await crawl(net, o, 'again', first);
    if (net.silent && o['without-silent']) {
      // the same network with the silent relay's port closed: a relay that is simply not there
      await net.silent.close();
      const b = await crawl(net, o, 'silent-down', tmp('orbweaver-quirk-'));
      const wa = a.wall_ms as number, wb = b.wall_ms as number;
      const la = a.last_answering_req_ms as number, lb = b.last_answering_req_ms as number;
      emit({
        bench: 'quirk-network', scenario: 'silent-cost', label: o.label, wall_with_ms: wa, wall_without_ms: wb, extra_ms: wa - wb,
        last_answering_req_with_ms: la, last_answering_req_without_ms: lb, silent: a.silent,
      });
      log(`silent relay: crawl ${(wa / 1000).toFixed(1)} s with it, ${(wb / 1000).toFixed(1)} s with its port closed; ` +
        `last REQ to an answering relay at ${(la / 1000).toFixed(1)} s and ${(lb / 1000).toFixed(1)} s`);
    }
  } finally {
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
    await net.close();
    if (o.keep) log(`kept: ${dirs.join(' ')}`);
    else for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }
}

export const quirkNetwork: Bench = {
  name: 'quirk-network',
  summary: 'starts a loopback network of quirky fixture relays (40 paths to one store, caps, until<=0, refused NEG, authors only, rate limit, silence), runs `spider --once` over it and reports events held vs stored and REQs per event per relay (no --url: it starts its own relays)',
  options: OPTIONS,
  run,
};
