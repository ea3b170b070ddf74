// The distributed spider with real processes: redis-server, the relay as coordinator
// (ORBWEAVER_SPIDER_REDIS) and `orbweaver worker` processes delivering to it over NIP-01 after
// NIP-42 AUTH. Test relays count their WebSocket connections (total and at once).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { WebSocketServer } from 'ws';
import { createServer, connect, type Server, type AddressInfo } from 'node:net';
import { TestRelay, keypair, relayList } from '../fixtures/test-relay.js';
import { startRelayProcess, tempDir, type RelayProcess } from '../helpers/relay-process.js';
import { openStore } from '../../src/store/index.js';
import { RelayDirectory } from '../../src/directory/records.js';
import { createSpider } from '../../src/spider/spider.js';
import type { NostrEvent } from '../../src/nostr/event.js';
import { openHome, spiderConfig, quietLog, population } from '../spider/harness.js';
import { startRedis, startWorker, until, type RedisServer, type WorkerProcess } from './harness.js';

const T0 = Math.floor(Date.now() / 1000) - 10_000;
const workerKey = keypair();
const skHex = Buffer.from(workerKey.sk).toString('hex');

/** Open and peak-concurrent WebSocket connections of a test relay. */
interface Counted { relay: TestRelay; open: number; peak: number; total: number }
function counted(relay: TestRelay): Counted {
  const c: Counted = { relay, open: 0, peak: 0, total: 0 };
  (relay as unknown as { wss: WebSocketServer }).wss.on('connection', (ws) => {
    c.open++; c.total++; c.peak = Math.max(c.peak, c.open);
    ws.once('close', () => { c.open--; });
  });
  return c;
}
const resetCounts = (cs: Counted[]) => { for (const c of cs) { c.peak = c.open; c.total = 0; } };


// The test network: boot holds the seed's list (-> r0, r0b); r0 names r1a, r1b, slow; r1a names r2.
const seed = keypair();
let boot: TestRelay, r0: TestRelay, r0b: TestRelay, r1a: TestRelay, r1b: TestRelay, slow: TestRelay, r2: TestRelay;
let net: Counted[];
let redis: RedisServer;
const procs: Array<RelayProcess | WorkerProcess> = [];

before(async () => {
  redis = await startRedis();
  boot = await new TestRelay({ flavour: 'strfry' }).start();
  r0 = await new TestRelay({ flavour: 'plain' }).start();
  r0b = await new TestRelay({ flavour: 'strfry', cap: 100 }).start();
  r1a = await new TestRelay({ flavour: 'rs' }).start();
  r1b = await new TestRelay({ flavour: 'nostream' }).start();
  slow = await new TestRelay({ noEose: true }).start(); // each page ends after idleTimeout of silence
  r2 = await new TestRelay({ flavour: 'strfry' }).start();
  net = [boot, r0, r0b, r1a, r1b, slow, r2].map(counted);
  boot.add(relayList(seed.sk, T0, [r0.url, r0b.url]));
  r0.add(relayList(keypair().sk, T0, [r1a.url, r1b.url, slow.url]), ...population(60, [r1a.url], T0 - 10));
  r0b.add(...population(450, [r1b.url], T0 - 20));
  r1a.add(relayList(keypair().sk, T0, [r2.url]), ...population(300, [r0.url], T0 - 30));
  r1b.add(...population(120, [], T0 - 40));
  slow.add(...population(40, [], T0 - 50));
  r2.add(...population(700, [], T0 - 60));
});

after(async () => {
  for (const p of procs) await ('cleanup' in p ? p.cleanup() : p.kill());
  await Promise.all([boot, r0, r0b, r1a, r1b, slow, r2].map((r) => r.close()));
  await redis.stop();
});

/** Settings shared by the relay and the workers (crawl timeouts small, lease TTL of 3 s). */
const common = (queueKey: string): Record<string, string> => ({
  ORBWEAVER_SPIDER_ALLOW_PRIVATE: '1', ORBWEAVER_SPIDER_IDLE_TIMEOUT: '1200ms', ORBWEAVER_SPIDER_CONNECT_TIMEOUT: '3s', ORBWEAVER_SPIDER_PAUSE: '0',
  // the four kinds this network and its timings were written for
  ORBWEAVER_SPIDER_KINDS: '0,3,10000,10002',
  ORBWEAVER_SPIDER_LEASE_TTL: '3s', ORBWEAVER_SPIDER_MAX_ATTEMPTS: '3', ORBWEAVER_SPIDER_QUEUE_KEY: queueKey, ORBWEAVER_SPIDER_RATE_LIMIT_BACKOFF: '20ms',
});

const envOf = new WeakMap<RelayProcess, Record<string, string>>();
const procEnv = (r: RelayProcess) => envOf.get(r) ?? {};

async function coordinator(queueKey: string, env: Record<string, string> = {}, dataDir?: string): Promise<RelayProcess> {
  const settings: Record<string, string> = {
    ...common(queueKey),
    ORBWEAVER_SPIDER: '1', ORBWEAVER_SPIDER_SEEDS: seed.pk, ORBWEAVER_SPIDER_BOOTSTRAP_RELAYS: boot.url, ORBWEAVER_SPIDER_HOPS: '2',
    ORBWEAVER_SPIDER_INTERVAL: '24h', ORBWEAVER_SPIDER_REDIS: redis.url, ORBWEAVER_SPIDER_WORK: '0',
    ORBWEAVER_SPIDER_WORKER_PUBKEYS: workerKey.pk,
    // the crawl is the subject: live mode would open connections of its own after the run, and the
    // lookup on a miss (on with the spider) its own during it — the workers' REQs asking the home
    // what it holds name the authors they fetched, and once their relay lists are stored the
    // lookup asks the relays those name, the network's own relays
    ORBWEAVER_SPIDER_LIVE_ENABLED: '0', ORBWEAVER_SPIDER_LOOKUP_ENABLED: 'off',
    // AUTH required to write, and rate limits a worker's burst would exceed: workers are exempt.
    ORBWEAVER_AUTH_REQUIRED: 'write', ORBWEAVER_RATE_LIMITS_PER_IP_EVENT: '20', ORBWEAVER_RATE_LIMITS_PER_CONNECTION_EVENT: '20', ORBWEAVER_RATE_LIMITS_BURST_SECONDS: '1',
    ...env,
  };
  const relay = await startRelayProcess({ env: settings, dataDir });
  envOf.set(relay, settings);
  procs.push(relay);
  return relay;
}

function worker(name: string, relay: RelayProcess | string, queueKey: string, env: Record<string, string> = {}): WorkerProcess {
  const w = startWorker(name, redis.url, typeof relay === 'string' ? relay : relay.url, { ...common(queueKey), ORBWEAVER_SPIDER_WORKER_KEY: skHex, ...env });
  procs.push(w);
  return w;
}

const runFinished = (relay: RelayProcess) => relay.logs.find((l) => l.msg === 'spider: run finished') as { relays: { total: number; reached: number; failed: number } } | undefined;

/** Every stored event id and every directory record's outcome, read from a stopped relay's data directory. */
async function contents(dir: string): Promise<{ ids: Set<string>; outcomes: Record<string, string | undefined> }> {
  const store = await openStore({ dir, mapSize: 1 << 30 });
  try {
    const ids = new Set<string>();
    for await (const json of store.iterate({})) ids.add((JSON.parse(json) as NostrEvent).id);
    const outcomes: Record<string, string | undefined> = {};
    for (const r of new RelayDirectory(store.env).all()) outcomes[r.url] = r.lastOutcome;
    return { ids, outcomes };
  } finally { await store.close(); }
}

const acked = (w: WorkerProcess) => w.logs.filter((l) => typeof l.msg === 'string' && (l.msg as string).endsWith(', acked')).map((l) => l.url as string);

let inProcess: { ids: Set<string>; outcomes: Record<string, string | undefined> };

test('in-process crawl of the test network (the reference)', async () => {
  const home = await openHome();
  try {
    resetCounts(net);
    const spider = createSpider({
      config: spiderConfig({ seeds: [seed.pk], bootstrapRelays: [boot.url], hops: 2, idleTimeout: '1200ms', kinds: [0, 3, 10000, 10002] }),
      store: home.store, ingest: home.ingest, logger: quietLog,
    });
    const s = await spider.runOnce();
    await spider.stop();
    assert.deepEqual(s.hops.map((h) => h.relays), [2, 3, 1]);
    assert.equal(s.relays.reached, 6);
    const ids = new Set<string>();
    for await (const json of home.store.iterate({})) ids.add((JSON.parse(json) as NostrEvent).id);
    const outcomes: Record<string, string | undefined> = {};
    for (const r of spider.directory.all()) outcomes[r.url] = r.lastOutcome;
    inProcess = { ids, outcomes };
    const all = [boot, r0, r0b, r1a, r1b, slow, r2].flatMap((r) => r.events.map((e) => e.id));
    assert.equal(ids.size, new Set(all).size, 'every event of the network');
  } finally { await home.close(); }
});

test('a crawl split across 3 worker processes: same store and directory as in-process, no relay fetched twice or by two workers at once', async () => {
  assert.ok(inProcess, 'needs the reference crawl');
  resetCounts(net);
  const key = 'split:spider';
  // No lease may run out here: a worker starved of CPU for most of the 3 s TTL (a loaded machine)
  // fences itself off and another worker fetches its relay again, as it should — but this test is
  // about the split, so its leases outlast any stall.
  const longLease = { ORBWEAVER_SPIDER_LEASE_TTL: '30s' };
  const relay = await coordinator(key, longLease);
  const ws = ['w1', 'w2', 'w3'].map((n) => worker(n, relay, key, longLease));
  await until(() => runFinished(relay) !== undefined, 60_000, 'the run to finish');
  const fin = runFinished(relay)!;
  assert.deepEqual(fin.relays, { total: 6, reached: 6, failed: 0, refused: 0, skipped: 0, aliases: 0, probed: 0 });
  const work = ws.map(acked);
  assert.equal(work.flat().length, 6, `each relay acked once: ${JSON.stringify(work)}`);
  assert.equal(new Set(work.flat()).size, 6);
  // on a failure, what the workers and the relay logged about that remote says why it was fetched again
  const about = (url: string) => JSON.stringify([...ws.flatMap((w) => w.logs.map((l) => ({ w: w.name, ...l }))), ...relay.logs].filter((l) => JSON.stringify(l).includes(url)));
  for (const c of net.slice(1)) {
    assert.equal(c.peak, 1, `${c.relay.url}: never two connections at once: ${about(c.relay.url)}`);
    assert.equal(c.total, 1, `${c.relay.url}: fetched once: ${about(c.relay.url)}`);
  }
  // Workers are exempt from the rate limits (20 events/s here): nothing was refused as rate-limited.
  const metrics = await (await fetch(relay.httpUrl + '/metrics')).text();
  assert.doesNotMatch(metrics, /orbweaver_events_rejected_total\{reason="rate-limited"\} [1-9]/);
  assert.equal(await redis.cli('LLEN', `${key}:dead`), '0');
  await Promise.all(ws.map((w) => w.kill('SIGTERM')));
  await relay.stop();
  const got = await contents(relay.dataDir);
  assert.equal(got.ids.size, inProcess.ids.size);
  assert.deepEqual([...got.ids].filter((id) => !inProcess.ids.has(id)), [], 'nothing extra');
  assert.deepEqual(got.outcomes, inProcess.outcomes, 'same directory outcomes');
});

test('kill -9 of a worker mid-fetch: its item is re-leased after the TTL and finished by another worker', async () => {
  resetCounts(net);
  const key = 'kill:spider';
  const slowC = net.find((c) => c.relay === slow)!;
  const relay = await coordinator(key);
  // One process (spider.heapMb 0): a heap-limited worker is a child whose parent's death is a
  // graceful stop (it gives its items back); this test is about a worker that dies outright.
  const first = worker('doomed', relay, key, { ORBWEAVER_SPIDER_HEAP_MB: '0' });
  // Alone, it leases every item in turn; kill it while it is connected to the slow relay.
  await until(() => slowC.open > 0, 60_000, 'the first worker to be fetching the slow relay');
  await first.kill('SIGKILL');
  const [a, b] = [worker('heir1', relay, key), worker('heir2', relay, key)];
  await until(() => runFinished(relay) !== undefined, 60_000, 'the run to finish');
  assert.equal(runFinished(relay)!.relays.reached, 6);
  const redo = [...a.logs, ...b.logs].find((l) => l.msg === 'spider: leased' && l.url === slow.url);
  assert.ok(redo, 'another worker leased the slow relay');
  assert.equal(redo.attempt, 2, 'as its second attempt');
  assert.ok([...acked(a), ...acked(b)].includes(slow.url), 'and finished it');
  assert.equal(slowC.total, 2);
  assert.equal(slowC.peak, 1, 'never two at once');
  await Promise.all([a, b].map((w) => w.kill('SIGTERM')));
  await relay.stop();
  const got = await contents(relay.dataDir);
  for (const e of slow.events) assert.ok(got.ids.has(e.id), 'every event of the slow relay stored');
  assert.equal(got.ids.size, inProcess.ids.size);
});

test('an item that always fails (its events cannot be delivered) lands in the dead-letter list after max attempts', async () => {
  resetCounts(net);
  const key = 'dead:spider';
  // This relay crawls only the hop-0 relays; the worker has no key, so AUTH-required writes fail.
  const relay = await coordinator(key, { ORBWEAVER_SPIDER_HOPS: '0', ORBWEAVER_SPIDER_MAX_ATTEMPTS: '2' });
  const w = worker('keyless', relay, key, { ORBWEAVER_SPIDER_WORKER_KEY: '', ORBWEAVER_SPIDER_DELIVERY_TIMEOUT: '800ms', ORBWEAVER_SPIDER_MAX_ATTEMPTS: '2' });
  await until(() => runFinished(relay) !== undefined, 60_000, 'the run to finish');
  assert.deepEqual(runFinished(relay)!.relays, { total: 2, reached: 0, failed: 2, refused: 0, skipped: 0, aliases: 0, probed: 0 });
  const dead = (await redis.cli('LRANGE', `${key}:dead`, '0', '-1')).split('\n').map((l) => JSON.parse(l) as { url: string; attempt: number; error: string });
  assert.deepEqual(dead.map((d) => d.url).sort(), [r0.url, r0b.url].sort());
  for (const d of dead) {
    assert.equal(d.attempt, 1, 'attempt counter of the last failed attempt (0-based)');
    assert.match(d.error, /requires AUTH to publish: set spider\.workerKey|not delivered .* \(rate-limited:/, "the last delivery problem: a worker without a key may not write (told at once), nor is it exempt from rate limits");
  }
  assert.equal(w.logs.filter((l) => l.msg === 'spider: leased').length, 4, 'two attempts each');
  assert.equal(acked(w).length, 0, 'nothing acked that was not delivered');
  await w.kill('SIGTERM');
  await relay.stop();
});

test('a worker stricter than its coordinator (spider.allowPrivate off): its refusal is its own, not the relay\'s', async () => {
  resetCounts(net);
  const key = 'strict:spider';
  const relay = await coordinator(key, { ORBWEAVER_SPIDER_HOPS: '0', ORBWEAVER_SPIDER_MAX_ATTEMPTS: '2' });
  const w = worker('strict', relay, key, { ORBWEAVER_SPIDER_ALLOW_PRIVATE: '0', ORBWEAVER_SPIDER_MAX_ATTEMPTS: '2' });
  await until(() => runFinished(relay) !== undefined, 60_000, 'the run to finish');
  assert.deepEqual(runFinished(relay)!.relays, { total: 2, reached: 0, failed: 2, refused: 0, skipped: 0, aliases: 0, probed: 0 }, 'not refused: the relays\' addresses are allowed by the coordinator');
  assert.equal(net[1].total + net[2].total, 0, 'the worker never contacts what its own settings refuse');
  await w.kill('SIGTERM');
  await relay.stop();
  const store = await openStore({ dir: relay.dataDir, mapSize: 1 << 30 });
  try {
    const dir = new RelayDirectory(store.env);
    for (const url of [r0.url, r0b.url]) {
      const rec = dir.get(url)!;
      assert.equal(rec.lastOutcome, 'failed');
      assert.match(rec.lastError ?? '', /refused by this worker's own address rules, not the coordinator's \(address 127\.0\.0\.1 is not public; spider\.allowPrivate \(ORBWEAVER_SPIDER_ALLOW_PRIVATE\) allows it on the worker/);
    }
  } finally { await store.close(); }
});

test('redis restarted mid-run (its data lost): the crawl completes with nothing lost', async () => {
  resetCounts(net);
  const key = 'restart:spider';
  const slowC = net.find((c) => c.relay === slow)!;
  // The relay works items too (spider.work), beside two workers.
  const relay = await coordinator(key, { ORBWEAVER_SPIDER_WORK: '1' });
  const ws = [worker('r1', relay, key), worker('r2', relay, key)];
  await until(() => slowC.open > 0, 60_000, 'a fetch of the slow relay in progress');
  await redis.kill();
  await new Promise((r) => setTimeout(r, 500));
  assert.equal((await fetch(relay.httpUrl + '/healthz')).status, 200, 'the relay keeps serving without redis');
  await redis.start();
  await until(() => runFinished(relay) !== undefined, 90_000, 'the run to finish');
  assert.equal(runFinished(relay)!.relays.reached, 6);
  assert.ok(relay.logs.some((l) => l.msg === 'spider: re-enqueued items that had no result'), 'the coordinator re-enqueued what redis lost');
  assert.equal(slowC.peak, 1, 'never two at once, across the restart');
  await Promise.all(ws.map((w) => w.kill('SIGTERM')));
  await relay.stop();
  const got = await contents(relay.dataDir);
  assert.deepEqual([...inProcess.ids].filter((id) => !got.ids.has(id)), [], 'nothing lost');
  assert.equal(got.ids.size, inProcess.ids.size);
});

test('the home relay restarts while a worker delivers: the worker retries, acks only once delivered, and nothing is lost', async () => {
  resetCounts(net);
  const key = 'home:spider';
  const slowC = net.find((c) => c.relay === slow)!;
  // The worker reaches the relay through a TCP forwarder (a load balancer's stable address), so the
  // restarted relay may listen on another port (the old one lingers in TIME_WAIT). The relay is
  // told that address (auth.relayHosts) so the worker's AUTH, which names it, is accepted.
  let upstream = 0;
  const proxy: Server = createServer((down) => {
    const up = connect(upstream, '127.0.0.1');
    down.pipe(up).pipe(down);
    const end = () => { down.destroy(); up.destroy(); };
    up.on('error', end); down.on('error', end); up.on('close', end); down.on('close', end);
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  const front = `ws://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  const relay = await coordinator(key, { ORBWEAVER_AUTH_RELAY_HOSTS: front.slice('ws://'.length) });
  upstream = relay.port;
  try {
    // Small pages: the slow relay's fetch spans several silent pages, so deliveries continue after the kill.
    const w = worker('patient', front, key, { ORBWEAVER_SPIDER_PAGE_SIZE: '4' });
    await until(() => slowC.open > 0, 60_000, 'the worker fetching the slow relay');
    await relay.kill(); // a crash: what the relay acknowledged is stored
    await new Promise((r) => setTimeout(r, 1500));
    const again = await startRelayProcess({ dataDir: relay.dataDir, env: procEnv(relay) });
    procs.push(again);
    upstream = again.port;
    await until(() => runFinished(again) !== undefined, 90_000, 'the restarted relay\'s run to finish');
    const slowAck = w.logs.find((l) => l.url === slow.url && typeof l.msg === 'string' && (l.msg as string).endsWith(', acked'));
    assert.ok(w.logs.some((l) => l.msg === 'spider: home relay unreachable; retrying delivery'), 'the worker waited for the relay');
    assert.ok(slowAck, 'the slow relay was acked');
    assert.equal(slowAck.attempt, 1, 'by the lease that was in progress when the relay went down');
    assert.equal(slowC.peak, 1, 'never two at once');
    await w.kill('SIGTERM');
    await again.stop();
    const got = await contents(again.dataDir);
    assert.deepEqual([...inProcess.ids].filter((id) => !got.ids.has(id)), [], 'nothing lost');
  } finally {
    await new Promise((r) => proxy.close(r));
  }
});

test('a worker asks the home relay what it holds before checking or sending: those events cost no signature check and no EVENT', async () => {
  resetCounts(net);
  const key = 'lookup:spider';
  // The home already holds everything r0b and r1b serve (written into its data directory before it starts).
  const dataDir = tempDir();
  const held = [...r0b.events, ...r1b.events];
  const store = await openStore({ dir: dataDir, mapSize: 1 << 30 });
  for (const ev of held) assert.equal((await store.write(ev, JSON.stringify(ev))).status, 'stored');
  await store.close();
  const relay = await coordinator(key, {}, dataDir);
  const w = worker('asker', relay, key);
  await until(() => runFinished(relay) !== undefined, 60_000, 'the run to finish');
  const acks = w.logs.filter((l) => typeof l.msg === 'string' && (l.msg as string).endsWith(', acked')) as Array<{ url: string; verified: number; duplicate: number; stored: number }>;
  assert.equal(acks.length, 6);
  const sum = (k: 'verified' | 'duplicate' | 'stored') => acks.reduce((n, a) => n + a[k], 0);
  const crawled = [r0, r0b, r1a, r1b, slow, r2].reduce((n, r) => n + r.events.length, 0);
  assert.equal(sum('duplicate'), held.length, 'what the home holds is known before anything is sent');
  assert.equal(sum('verified'), crawled - held.length, 'one signature check per event the home lacks');
  assert.equal(sum('stored'), crawled - held.length);
  const metrics = await (await fetch(relay.httpUrl + '/metrics')).text();
  assert.doesNotMatch(metrics, /orbweaver_events_rejected_total\{reason="duplicate"\} [1-9]/, 'the home relay was sent no copy it holds');
  await w.kill('SIGTERM');
  await relay.stop();
});
