// lookup-cost: what one client's REQs make the relay do to other relays (lookup amplification), and
// what hostile remotes do to the relay, on loopback remotes this benchmark controls.
//
//   node dist/bench/lookup-cost.js [--url ws://host:port --pid PID] [--remote-host 127.0.0.1]
//        [--authors 100] [--paths 3] [--hosts 30] [--minute 60] [--only paths,hosts,minute,flood,drip]
//
// Without --url it starts an orbweaver relay itself (`relay` with spider.lookup.enabled `on`,
// spider.allowPrivate on so it may reach the loopback remotes, every other setting at its default).
// With --url the relay must be able to reach --remote-host (allowPrivate for a loopback address).
// The attacker publishes the relay lists (kind 10002) of fresh authors that name the remotes, then
// asks for the authors' profiles; every remote counts the TCP connections, WebSocket upgrade
// requests, REQs and bytes it sees. Scenarios:
//   paths   one REQ for --authors authors whose lists name --paths paths each on ONE host
//   hosts   one REQ for --authors authors whose lists name --paths of --hosts hosts each
//   minute  one such REQ (paths on the --hosts hosts) every 2 s for --minute seconds, from one address
//   flood   one REQ for --authors authors x 100 kinds; their relay answers 4,000 events of 125 KB with
//           made-up signatures (the relay's RSS before, at its peak and after)
//   drip    240 authors on 8 relays that send one valid event every 3 s and never EOSE; meanwhile a
//           second address looks up honest authors (answered before EOSE or not)
// During every scenario a victim on 127.0.0.2 publishes a note and reads it back by id, every 50 ms,
// and the relay's RSS is sampled every 50 ms (with --pid, or the relay it started).
// Figures: outbound connection attempts (upgrade requests), REQs and bytes per inbound REQ and per
// address per minute; the most attempts at one host; RSS; the victim's times.
import WebSocket from 'ws';
import { randomBytes } from 'node:crypto';
import { formatHelp, num, parseArgs, UsageError, type OptSpec } from './lib/args.js';
import { emit, log, machine, table } from './lib/report.js';
import { startRelayProcess, type RelayProcess } from '../test/helpers/relay-process.js';
import { TestRelay, type TestRelayOptions } from '../test/fixtures/test-relay.js';
import { getSigner, type Signer } from './lib/events.js';
import { rssMb } from '../test/hostile/helpers.js';
import type { NostrEvent } from '../src/nostr/event.js';

const OPTIONS: OptSpec[] = [
  { name: 'url', type: 'string', help: 'relay to measure (default: start one with the lookup on)' },
  { name: 'pid', type: 'int', help: 'its process id, for RSS (with --url)' },
  { name: 'remote-host', type: 'string', default: '127.0.0.1', help: 'address the remotes listen on (the relay must reach it)' },
  { name: 'victim-address', type: 'string', default: '127.0.0.2', help: 'local address the victim (and the second client) connect from: another address than the attacker\'s' },
  { name: 'authors', type: 'int', default: 100, help: 'authors per REQ' },
  { name: 'paths', type: 'int', default: 3, help: 'relay URLs in each author\'s list' },
  { name: 'hosts', type: 'int', default: 30, help: 'remote hosts (ports) in the hosts and minute scenarios' },
  { name: 'minute', type: 'int', default: 60, help: 'seconds of the minute scenario' },
  { name: 'only', type: 'string', default: 'paths,hosts,minute,flood,drip', help: 'scenarios to run' },
];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pct = (xs: number[], p: number) => { const s = [...xs].sort((a, b) => a - b); return s.length ? s[Math.min(s.length - 1, Math.floor(p * s.length))]! : NaN; };
const r1 = (x: number) => Math.round(x * 10) / 10;

/** A raw client: send, and wait for a message that matches. */
class Peer {
  private waiters: Array<{ pred: (m: unknown[]) => boolean; resolve: (m: unknown[] | null) => void }> = [];
  private constructor(readonly ws: WebSocket) {
    ws.on('message', (d) => {
      let m: unknown[];
      try { m = JSON.parse(d.toString()) as unknown[]; } catch { return; }
      for (const w of [...this.waiters]) if (w.pred(m)) { this.waiters.splice(this.waiters.indexOf(w), 1); w.resolve(m); }
    });
  }
  static open(url: string, localAddress?: string): Promise<Peer> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, { perMessageDeflate: false, maxPayload: 256 << 20, ...(localAddress ? { localAddress } : {}) });
      ws.once('open', () => resolve(new Peer(ws)));
      ws.once('error', reject);
    });
  }
  send(m: unknown[]): void { if (this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(m)); }
  next(pred: (m: unknown[]) => boolean, ms: number): Promise<unknown[] | null> {
    return new Promise((resolve) => {
      const w = { pred, resolve: (m: unknown[] | null) => { clearTimeout(t); resolve(m); } };
      const t = setTimeout(() => { this.waiters.splice(this.waiters.indexOf(w), 1); resolve(null); }, ms);
      this.waiters.push(w);
    });
  }
  async publish(ev: NostrEvent): Promise<boolean> {
    const ok = this.next((m) => m[0] === 'OK' && m[1] === ev.id, 10_000);
    this.send(['EVENT', ev]);
    return (await ok)?.[2] === true;
  }
  close(): void { this.ws.close(); }
}

interface Key { sk: Uint8Array; pk: string }
let signer: Signer;
const newKey = (): Key => { const sk = new Uint8Array(randomBytes(32)); return { sk, pk: signer.pubkey(sk) }; };
const T0 = Math.floor(Date.now() / 1000) - 3600;
const sign = (k: Key, kind: number, created_at: number, tags: string[][] = [], content = '') => signer.sign({ kind, created_at, tags, content }, k.sk, k.pk);

async function remotes(n: number, host: string, o: TestRelayOptions = {}): Promise<TestRelay[]> {
  const out: TestRelay[] = [];
  for (let i = 0; i < n; i++) out.push(await new TestRelay({ ...o, host }).start());
  return out;
}

/** Publishes one relay list per author, naming `urls(i)`. */
async function publishLists(p: Peer, authors: Key[], urls: (i: number) => string[]): Promise<void> {
  await Promise.all(authors.map((a, i) => p.publish(sign(a, 10002, T0, urls(i).map((u) => ['r', u])))));
}

/** Waits until the remotes' counters stop moving for `quietMs` (at most `maxMs`). */
async function settle(rs: TestRelay[], quietMs = 3000, maxMs = 30_000): Promise<void> {
  const snap = () => rs.map((r) => `${r.upgrades}/${r.reqs.length}/${r.bytesOut}`).join(',');
  let last = snap();
  let since = Date.now();
  const end = Date.now() + maxMs;
  while (Date.now() < end) {
    await sleep(250);
    const s = snap();
    if (s !== last) { last = s; since = Date.now(); } else if (Date.now() - since >= quietMs) return;
  }
}

function counts(rs: TestRelay[]): { attempts: number; maxPerHost: number; sockets: number; connections: number; reqs: number; bytesToRemotes: number; bytesFromRemotes: number } {
  return {
    attempts: rs.reduce((a, r) => a + r.upgrades, 0), maxPerHost: Math.max(0, ...rs.map((r) => r.upgrades)),
    sockets: rs.reduce((a, r) => a + r.sockets, 0), connections: rs.reduce((a, r) => a + r.connections, 0),
    reqs: rs.reduce((a, r) => a + r.reqs.length, 0), bytesToRemotes: rs.reduce((a, r) => a + r.bytesIn, 0), bytesFromRemotes: rs.reduce((a, r) => a + r.bytesOut, 0),
  };
}

/** One REQ of `authors` x `kinds`, read to EOSE (or 30 s). */
async function askOnce(p: Peer, authors: Key[], kinds: number[], sub: string): Promise<number> {
  const eose = p.next((m) => (m[0] === 'EOSE' || m[0] === 'CLOSED') && m[1] === sub, 30_000);
  const req = ['REQ', sub, { kinds, authors: authors.map((a) => a.pk) }];
  p.send(req);
  await eose;
  return Buffer.byteLength(JSON.stringify(req));
}

async function paths(url: string, o: Opts): Promise<Record<string, unknown>> {
  const [remote] = await remotes(1, o.remoteHost);
  const p = await Peer.open(url);
  try {
    const authors = Array.from({ length: o.authors }, newKey);
    await publishLists(p, authors, (i) => Array.from({ length: o.paths }, (_, j) => `${remote!.url}/a${i}p${j}`));
    const reqBytes = await askOnce(p, authors, [0], 'paths');
    await settle([remote!]);
    return { scenario: 'paths', authors: o.authors, paths: o.paths, hosts: 1, inboundReqBytes: reqBytes, ...counts([remote!]) };
  } finally {
    p.close();
    await remote!.close();
  }
}

async function hosts(url: string, o: Opts): Promise<Record<string, unknown>> {
  const rs = await remotes(o.hosts, o.remoteHost);
  const p = await Peer.open(url);
  try {
    const authors = Array.from({ length: o.authors }, newKey);
    await publishLists(p, authors, (i) => Array.from({ length: o.paths }, (_, j) => rs[(i * o.paths + j) % rs.length]!.url));
    const reqBytes = await askOnce(p, authors, [0], 'hosts');
    await settle(rs);
    return { scenario: 'hosts', authors: o.authors, paths: o.paths, hosts: o.hosts, inboundReqBytes: reqBytes, ...counts(rs) };
  } finally {
    p.close();
    await Promise.all(rs.map((r) => r.close()));
  }
}

async function minute(url: string, o: Opts): Promise<Record<string, unknown>> {
  const rs = await remotes(o.hosts, o.remoteHost);
  const p = await Peer.open(url);
  try {
    const end = Date.now() + o.minute * 1000;
    let reqs = 0;
    for (let round = 0; Date.now() < end; round++) {
      const t = Date.now();
      const authors = Array.from({ length: o.authors }, newKey);
      // each author: paths on one host, a different host per author
      await publishLists(p, authors, (i) => Array.from({ length: o.paths }, (_, j) => `${rs[(round * o.authors + i) % rs.length]!.url}/r${round}a${i}p${j}`));
      void askOnce(p, authors, [0], `m${round}`);
      reqs++;
      await sleep(Math.max(0, 2000 - (Date.now() - t)));
    }
    const c = counts(rs);
    await settle(rs, 2000, 10_000);
    const perMinute = 60 / o.minute;
    return { scenario: 'minute', seconds: o.minute, inboundReqs: reqs, ...c, attemptsPerMinute: r1(c.attempts * perMinute), maxPerHostPerMinute: r1(c.maxPerHost * perMinute), reqsPerMinute: r1(c.reqs * perMinute), bytesFromRemotesPerMinute: Math.round(c.bytesFromRemotes * perMinute) };
  } finally {
    p.close();
    await Promise.all(rs.map((r) => r.close()));
  }
}

/** A victim on 127.0.0.2: publish a note, read it back by id, every 50 ms, until stopped. */
function victim(url: string, from: string): { stop(): Promise<{ n: number; p50: number; max: number; failed: number }> } {
  const times: number[] = [];
  let failed = 0;
  let running = true;
  const run = (async () => {
    const k = newKey();
    const p = await Peer.open(url, from);
    for (let i = 0; running; i++) {
      const t = performance.now();
      const ev = sign(k, 1, Math.floor(Date.now() / 1000), [], `victim ${i}`);
      const ok = await p.publish(ev);
      const got = p.next((m) => m[0] === 'EOSE' && m[1] === `v${i}`, 10_000);
      p.send(['REQ', `v${i}`, { ids: [ev.id] }]);
      if (ok && (await got)) times.push(performance.now() - t); else failed++;
      p.send(['CLOSE', `v${i}`]);
      await sleep(50);
    }
    p.close();
  })();
  return { async stop() { running = false; await run; return { n: times.length, p50: r1(pct(times, 0.5)), max: r1(Math.max(0, ...times)), failed }; } };
}

async function flood(url: string, o: Opts): Promise<Record<string, unknown>> {
  const [remote] = await remotes(1, o.remoteHost, { forge: { events: 4000, bytes: 125_000 } });
  const p = await Peer.open(url);
  try {
    const authors = Array.from({ length: o.authors }, newKey);
    await publishLists(p, authors, () => [remote!.url]);
    const kinds = [0, 3, ...Array.from({ length: 98 }, (_, i) => 10000 + i)];
    const reqBytes = await askOnce(p, authors, kinds, 'flood');
    await settle([remote!], 3000, 60_000);
    return { scenario: 'flood', inboundReqBytes: reqBytes, forgedSent: remote!.forged, ...counts([remote!]) };
  } finally {
    p.close();
    await remote!.close();
  }
}

async function drip(url: string, o: Opts): Promise<Record<string, unknown>> {
  const drips = await remotes(8, o.remoteHost, { drip: 3000 });
  const [honest] = await remotes(1, o.remoteHost);
  const p = await Peer.open(url);
  const q = await Peer.open(url, o.victimAddress);
  try {
    // 30 authors per drip relay, each with a validly signed profile there: one REQ to each relay
    // asks for 30 authors x 2 kinds, and every event it drips is one the relay asked for
    const attackers = drips.flatMap((r) => Array.from({ length: 30 }, (_, i) => {
      const k = newKey();
      r.add(sign(k, 0, T0, [], `{"name":"drip ${i}"}`));
      return { k, r };
    }));
    await publishLists(p, attackers.map((a) => a.k), (i) => [attackers[i]!.r.url]);
    const lookups: Array<{ beforeEose: boolean; ms: number }> = [];
    p.send(['REQ', 'drip', { kinds: [0, 3], authors: attackers.map((a) => a.k.pk) }]);
    await sleep(1000);
    for (let i = 0; i < 10; i++) {
      const k = newKey();
      const prof = sign(k, 0, T0, [], '{"name":"honest"}');
      honest!.add(prof);
      await q.publish(sign(k, 10002, T0, [['r', honest!.url]]));
      const t = performance.now();
      const ev = q.next((m) => m[0] === 'EVENT' && m[1] === `h${i}`, 15_000);
      const eose = q.next((m) => m[0] === 'EOSE' && m[1] === `h${i}`, 15_000);
      q.send(['REQ', `h${i}`, { kinds: [0], authors: [k.pk] }]);
      const first = await Promise.race([ev.then(() => 'event'), eose.then(() => 'eose')]);
      lookups.push({ beforeEose: first === 'event', ms: performance.now() - t });
      await eose;
      await sleep(1000);
    }
    return {
      scenario: 'drip', dripRelays: 8, dripMaxOpenPerRelay: Math.max(...drips.map((r) => r.maxOpen)), dripConnections: drips.reduce((a, r) => a + r.connections, 0),
      honestLookups: lookups.length, answeredBeforeEose: lookups.filter((l) => l.beforeEose).length, honestP50Ms: r1(pct(lookups.map((l) => l.ms), 0.5)), honestMaxMs: r1(Math.max(...lookups.map((l) => l.ms))),
    };
  } finally {
    p.close();
    q.close();
    await Promise.all([...drips, honest!].map((r) => r.close()));
  }
}

interface Opts { remoteHost: string; victimAddress: string; authors: number; paths: number; hosts: number; minute: number }

async function main(): Promise<void> {
  let opts;
  try { opts = parseArgs(process.argv.slice(2), OPTIONS); } catch (e) {
    if (e instanceof UsageError) { console.error(`${e.message}\n\n${formatHelp(OPTIONS)}`); process.exit(2); }
    throw e;
  }
  signer = await getSigner();
  const o: Opts = { remoteHost: String(opts['remote-host']), victimAddress: String(opts['victim-address']), authors: num(opts, 'authors'), paths: num(opts, 'paths'), hosts: num(opts, 'hosts'), minute: num(opts, 'minute') };
  const only = new Set(String(opts.only).split(','));
  log(`lookup-cost bench on ${JSON.stringify(machine())}`);
  const rows: Array<Record<string, unknown>> = [];
  // a fresh relay per scenario (budgets and memories start empty), unless one was given
  for (const name of ['paths', 'hosts', 'minute', 'flood', 'drip']) {
    if (!only.has(name)) continue;
    let home: RelayProcess | null = null;
    let url = opts.url as string | undefined;
    let pid = opts.pid as number | undefined;
    if (!url) {
      home = await startRelayProcess({ env: { ORBWEAVER_SPIDER_LOOKUP_ENABLED: 'on', ORBWEAVER_SPIDER_ALLOW_PRIVATE: '1' } });
      url = home.url;
      pid = home.proc.pid;
    }
    try {
      // during every scenario: another address publishes and reads, and the relay's RSS is sampled
      const v = victim(url, o.victimAddress);
      const rss0 = pid ? rssMb(pid) : NaN;
      let peak = rss0;
      const sampler = setInterval(() => { if (pid) peak = Math.max(peak, rssMb(pid)); }, 50);
      const r = name === 'paths' ? await paths(url, o) : name === 'hosts' ? await hosts(url, o) : name === 'minute' ? await minute(url, o) : name === 'flood' ? await flood(url, o) : await drip(url, o);
      clearInterval(sampler);
      Object.assign(r, { victim: await v.stop(), rssBeforeMb: Math.round(rss0), rssPeakMb: Math.round(peak), rssAfterMb: Math.round(pid ? rssMb(pid) : NaN), rssGrowthMb: Math.round(peak - rss0) });
      if (home) {
        const s = (await (await fetch(home.httpUrl + '/status.json')).json()) as { sections: Array<{ title: string; rows: Array<[string, string]> }> };
        r.lookupRows = Object.fromEntries(s.sections.find((x) => x.title === 'Lookup on a miss')?.rows ?? []);
      }
      emit(r);
      rows.push(r);
      log(JSON.stringify(r));
    } finally {
      await home?.cleanup();
    }
  }
  const vic = (r: Record<string, unknown>) => r.victim as { p50: number; max: number };
  table('lookup amplification (outbound, at the remotes) and the relay meanwhile', rows.map((r) => ({
    scenario: String(r.scenario), attempts: Number(r.attempts ?? NaN), maxPerHost: Number(r.maxPerHost ?? NaN), reqs: Number(r.reqs ?? NaN),
    bytesFromRemotes: Number(r.bytesFromRemotes ?? NaN), rssGrowthMb: Number(r.rssGrowthMb), victimP50: vic(r).p50, victimMax: vic(r).max,
  })));
}

void main().then(() => process.exit(0), (e: unknown) => { console.error(e); process.exit(1); });
