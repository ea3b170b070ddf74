// lookup: the lookup on a miss against its goals, on a loopback network.
//
//   node dist/bench/lookup.js [--authors 200] [--relays 20] [--concurrency 10] [--big 1500] [--big-rounds 10]
//
// 1. found: --authors authors, each with its profile and DM-relay list (10050) only on its own relay
//    (one of --relays remotes) and its relay list (10002) on an indexer; the home relay (a real
//    orbweaver process, lookup on, crawl off) holds nothing. A client asks each author's profile
//    (and, in a second pass with other authors, 10050), --concurrency REQs at a time; the time from
//    the REQ to the event is recorded, and whether it came at all (EOSE, then 10 s more at most).
//    The second scenario stores the relay lists in the home first (no hop: the outbox is known).
// 2. others: one client sends REQs naming --big unknown authors (kinds 0 and 10002), one per second
//    for --big-rounds rounds, while another client asks a stored profile every 20 ms; its REQ-to-EOSE
//    times are compared with the same client alone, and every remote's REQs are counted against
//    the budget (spider.lookup.remoteReqsPerMinute).
// All clients are 127.0.0.1: one address. The home's per-address budgets are raised for part 1
// (--authors lookups from one address stand for many clients: the authors per minute, and what
// their lookups may cost — connection attempts, REQs, bytes, connections held at once) and left at
// their defaults for part 2.
import { formatHelp, num, parseArgs, UsageError, type OptSpec } from './lib/args.js';
import { emit, log, machine, table } from './lib/report.js';
import { startRelayProcess, type RelayProcess } from '../test/helpers/relay-process.js';
import { Client } from '../test/helpers/client.js';
import { TestRelay, keypair, sign, relayList } from '../test/fixtures/test-relay.js';
import type { NostrEvent } from '../src/nostr/event.js';

const OPTIONS: OptSpec[] = [
  { name: 'authors', type: 'int', default: 200, help: 'authors looked up in each found scenario' },
  { name: 'relays', type: 'int', default: 20, help: 'remote relays the authors are spread over' },
  { name: 'concurrency', type: 'int', default: 10, help: 'REQs in flight at once in the found scenarios' },
  { name: 'big', type: 'int', default: 1500, help: 'unknown authors per REQ in the others scenario' },
  { name: 'big-rounds', type: 'int', default: 10, help: 'large REQs sent, one per second' },
];

const T0 = Math.floor(Date.now() / 1000) - 3600;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pct = (xs: number[], p: number) => { const s = [...xs].sort((a, b) => a - b); return s.length ? s[Math.min(s.length - 1, Math.floor(p * s.length))]! : NaN; };
const ms = (x: number) => Math.round(x * 10) / 10;

interface Author { sk: Uint8Array; pk: string; home: TestRelay; list: NostrEvent }

async function found(scenario: 'indexer' | 'known', kind: 0 | 10050, o: { authors: number; relays: number; concurrency: number }): Promise<Record<string, unknown>> {
  const remotes = await Promise.all(Array.from({ length: o.relays }, () => new TestRelay().start()));
  const indexer = await new TestRelay().start();
  const home = await startRelayProcess({
    env: {
      ORBWEAVER_SPIDER_LOOKUP_ENABLED: 'on', ORBWEAVER_SPIDER_LOOKUP_INDEXER_RELAYS: indexer.url, ORBWEAVER_SPIDER_ALLOW_PRIVATE: '1',
      ORBWEAVER_SPIDER_LOOKUP_PER_ADDRESS: '100000',
      ORBWEAVER_SPIDER_LOOKUP_CONNECTS_PER_HOST: '0', ORBWEAVER_SPIDER_LOOKUP_CONNECTS_PER_ADDRESS: '0', ORBWEAVER_SPIDER_LOOKUP_REQS_PER_ADDRESS: '0',
      ORBWEAVER_SPIDER_LOOKUP_BYTES_PER_ADDRESS: '0', ORBWEAVER_SPIDER_LOOKUP_CONNECTIONS_PER_ADDRESS: '8',
    },
  });
  try {
    const authors: Author[] = Array.from({ length: o.authors }, (_, i) => {
      const k = keypair();
      const r = remotes[i % remotes.length]!;
      const list = relayList(k.sk, T0, [r.url]);
      r.add(list, sign(k.sk, 0, T0, [], JSON.stringify({ name: `a${i}` })), sign(k.sk, 10050, T0, [['relay', 'wss://dm.example']]));
      indexer.add(list);
      return { ...k, home: r, list };
    });
    const c = await Client.open(home.url);
    if (scenario === 'known') for (const a of authors) await c.publish(a.list);
    const times: number[] = [];
    let beforeEose = 0;
    let missing = 0;
    let next = 0;
    const one = async (a: Author, i: number) => {
      const sub = `s${i}`;
      const t = performance.now();
      c.send(['REQ', sub, { kinds: [kind], authors: [a.pk] }]);
      let eose = false;
      for (;;) {
        const m = await c.next((m) => (m[0] === 'EVENT' || m[0] === 'EOSE') && m[1] === sub, eose ? 10_000 : 30_000).catch(() => null);
        if (!m) { missing++; break; }
        if (m[0] === 'EOSE') { eose = true; continue; }
        times.push(performance.now() - t);
        if (!eose) beforeEose++;
        break;
      }
      c.send(['CLOSE', sub]);
    };
    await Promise.all(Array.from({ length: o.concurrency }, async () => { while (next < authors.length) { const i = next++; await one(authors[i]!, i); } }));
    c.close();
    return {
      scenario: `found-${scenario}-kind${kind}`, authors: o.authors, relays: o.relays, found: times.length, foundPct: ms((100 * times.length) / o.authors), beforeEose, missing,
      p50Ms: ms(pct(times, 0.5)), p95Ms: ms(pct(times, 0.95)), p99Ms: ms(pct(times, 0.99)), maxMs: ms(Math.max(...times)),
    };
  } finally {
    await home.cleanup();
    await Promise.all([indexer.close(), ...remotes.map((r) => r.close())]);
  }
}

async function probe(c: Client, filter: object, until: () => boolean): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; !until(); i++) {
    const t = performance.now();
    await c.query(filter, `p${i}`);
    out.push(performance.now() - t);
    await sleep(20);
  }
  return out;
}

async function others(o: { big: number; rounds: number }): Promise<Record<string, unknown>> {
  const indexer = await new TestRelay().start();
  const bootstrap = await new TestRelay().start();
  const home: RelayProcess = await startRelayProcess({
    env: {
      ORBWEAVER_SPIDER_LOOKUP_ENABLED: 'on', ORBWEAVER_SPIDER_LOOKUP_INDEXER_RELAYS: indexer.url, ORBWEAVER_SPIDER_BOOTSTRAP_RELAYS: bootstrap.url,
      ORBWEAVER_SPIDER_ALLOW_PRIVATE: '1',
    },
  });
  try {
    const probeClient = await Client.open(home.url);
    const k = keypair();
    await probeClient.publish(sign(k.sk, 0, T0, [], '{"name":"probe"}'));
    const filter = { kinds: [0], authors: [k.pk] };
    // alone first
    let stop = Date.now() + 3000;
    const alone = await probe(probeClient, filter, () => Date.now() > stop);
    // then beside the large REQs
    const big = await Client.open(home.url);
    let bigDone = false;
    const bigRun = (async () => {
      for (let r = 0; r < o.rounds; r++) {
        const authors = Array.from({ length: o.big }, () => keypair().pk);
        big.send(['REQ', `big${r}`, { kinds: [0, 10002], authors }]);
        await sleep(1000);
      }
      await big.next((m) => m[0] === 'EOSE' && m[1] === `big${o.rounds - 1}`, 30_000).catch(() => null);
      bigDone = true;
    })();
    stop = Infinity;
    const beside = await probe(probeClient, filter, () => bigDone);
    await bigRun;
    const status = (await (await fetch(home.httpUrl + '/status.json')).json()) as { sections: Array<{ title: string; rows: Array<[string, string]> }> };
    const rows = Object.fromEntries(status.sections.find((s) => s.title === 'Lookup on a miss')?.rows ?? []);
    big.close();
    probeClient.close();
    return {
      scenario: 'others', bigAuthors: o.big, bigRounds: o.rounds,
      aloneP50Ms: ms(pct(alone, 0.5)), aloneP95Ms: ms(pct(alone, 0.95)), besideP50Ms: ms(pct(beside, 0.5)), besideP95Ms: ms(pct(beside, 0.95)), besideP99Ms: ms(pct(beside, 0.99)), probes: beside.length,
      indexerReqs: indexer.reqs.length, indexerConnections: indexer.connections, bootstrapReqs: bootstrap.reqs.length, bootstrapConnections: bootstrap.connections,
      maxAuthorsPerRemoteReq: Math.max(0, ...[...indexer.reqs, ...bootstrap.reqs].map((f) => (f.authors as string[]).length)),
      lookups: rows['lookups'], refused: rows['refused by budgets'],
    };
  } finally {
    await home.cleanup();
    await Promise.all([indexer.close(), bootstrap.close()]);
  }
}

async function main(): Promise<void> {
  let opts;
  try { opts = parseArgs(process.argv.slice(2), OPTIONS); } catch (e) {
    if (e instanceof UsageError) { console.error(`${e.message}\n\n${formatHelp(OPTIONS)}`); process.exit(2); }
    throw e;
  }
  const o = { authors: num(opts, 'authors'), relays: num(opts, 'relays'), concurrency: num(opts, 'concurrency') };
  log(`lookup bench on ${JSON.stringify(machine())}`);
  const results: Array<Record<string, unknown>> = [];
  for (const [scenario, kind] of [['indexer', 0], ['indexer', 10050], ['known', 0]] as const) {
    const r = await found(scenario, kind, o);
    emit(r);
    results.push(r);
  }
  const r = await others({ big: num(opts, 'big'), rounds: num(opts, 'big-rounds') });
  emit(r);
  table('lookup on a miss: found', results.map((x) => ({ scenario: String(x.scenario), found: `${x.found}/${x.authors}`, beforeEose: Number(x.beforeEose), p50: Number(x.p50Ms), p95: Number(x.p95Ms), p99: Number(x.p99Ms) })));
  table('lookup on a miss: another client beside large REQs', [{ alone_p50: Number(r.aloneP50Ms), beside_p50: Number(r.besideP50Ms), beside_p95: Number(r.besideP95Ms), indexer_reqs: Number(r.indexerReqs), indexer_conns: Number(r.indexerConnections) }]);
}

void main().then(() => process.exit(0), (e: unknown) => { console.error(e); process.exit(1); });
