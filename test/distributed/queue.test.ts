// RedisQueue against a real redis-server: lease/ack, owner tokens, renewal, the reaper, attempts and
// the dead-letter list, per-run dedupe, the per-relay lock, and Redis going away or losing its data.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { RedisQueue, type QueueItem } from '../../src/spider/queue/redis.js';
import { MemoryQueue } from '../../src/spider/queue/memory.js';
import { zeroCounts, type WorkItem, type WorkResult } from '../../src/directory/types.js';
import { quietLog } from '../spider/harness.js';
import { startRedis, until, type RedisServer } from './harness.js';

let redis: RedisServer;
let n = 0;
const queues: RedisQueue[] = [];

before(async () => { redis = await startRedis(); });
after(async () => {
  await Promise.all(queues.map((q) => q.close()));
  await redis.stop();
});

/** A queue on its own key prefix (each test its own), lease TTL small. */
function q(prefix: string, over: Partial<ConstructorParameters<typeof RedisQueue>[0]> = {}): RedisQueue {
  const x = new RedisQueue({ url: redis.url, prefix, leaseTtl: 600, maxAttempts: 3, log: quietLog, ...over });
  queues.push(x);
  return x;
}
const prefix = () => `t${++n}:spider`;
const item = (url: string, hop = 0): WorkItem => ({ url, hop, kinds: [0, 3], discover: true, quirks: {}, cursors: {}, nip11: { supported_nips: [] } });
const result = (it: WorkItem, extra: Partial<WorkResult> = {}): WorkResult => ({
  url: it.url, hop: it.hop, outcome: 'ok', nip11: null, quirks: {}, cursors: { '0': { lo: 0, hi: 5 } }, counts: zeroCounts(), links: {}, ignoredLists: 0, startedAt: 1, durationMs: 1, ...extra,
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('lease, renew past the TTL, ack: the coordinator gets the result; the key layout is as documented', async () => {
  const p = prefix();
  const coord = q(p);
  const worker = q(p, { name: 'w1' });
  await coord.enqueue([item('ws://a.example'), item('ws://b.example')]);
  assert.equal(await redis.cli('LLEN', `${p}:pending`), '2');
  const raw = JSON.parse((await redis.cli('LRANGE', `${p}:pending`, '-1', '-1')) ) as QueueItem;
  assert.deepEqual(Object.keys(raw).slice(0, 7), ['id', 'attempt', 'url', 'run', 'hop', 'phase', 'ts']);
  assert.equal(raw.attempt, 0);
  assert.equal(raw.phase, 'discover');
  assert.equal(await redis.cli('SCARD', `${p}:seen:${coord.run}`), '2');
  assert.equal(await redis.cli('GET', `${p}:run`), coord.run);

  const lease = await worker.lease(1000);
  assert.ok(lease);
  assert.equal(lease.item.url, 'ws://a.example', 'FIFO');
  assert.equal(lease.attempt, 1);
  assert.deepEqual(lease.item.nip11, { supported_nips: [] }, 'items survive the trip unchanged');
  assert.equal(await redis.cli('LLEN', `${p}:processing`), '1');
  assert.equal(await redis.cli('ZCARD', `${p}:leases`), '1');
  assert.match(await redis.cli('GET', `${p}:lock:ws://a.example`), /^w1:/);
  // Held for three TTLs: renewal keeps it; the reaper (run by anyone) leaves it alone.
  await sleep(1800);
  assert.deepEqual(await coord.reap(), { retried: 0, dead: 0, adopted: 0 });
  assert.equal(lease.signal?.aborted, false);
  assert.equal(await lease.ack(result(lease.item, { counts: { ...zeroCounts(), stored: 7 } })), true);
  assert.equal(await redis.cli('LLEN', `${p}:processing`), '0');
  assert.equal(await redis.cli('EXISTS', `${p}:lock:ws://a.example`), '0');
  const r = await coord.result(2000);
  assert.equal(r?.url, 'ws://a.example');
  assert.equal(r?.counts.stored, 7);
  assert.equal(coord.pending(), 1);
});

test('a lost lease cannot ack: the reaper re-queues it with attempt+1 and the new owner acks', async () => {
  const p = prefix();
  const coord = q(p);
  const a = q(p, { name: 'a' });
  const b = q(p, { name: 'b' });
  await coord.enqueue([item('ws://x.example')]);
  const la = await a.lease(1000);
  assert.ok(la);
  // Worker a stalls: its lease deadline passes (set in the past, as if renewals had stopped).
  await redis.cli('ZADD', `${p}:leases`, '0', JSON.parse(await redis.cli('LINDEX', `${p}:processing`, '0')).id);
  assert.deepEqual(await b.reap(), { retried: 1, dead: 0, adopted: 0 });
  const requeued = JSON.parse(await redis.cli('LINDEX', `${p}:pending`, '0')) as QueueItem;
  assert.equal(requeued.attempt, 1);
  const lb = await b.lease(1000);
  assert.ok(lb);
  assert.equal(lb.attempt, 2);
  // Refused by the owner token in Redis (or earlier, once a's renewal found the lease gone).
  assert.equal(await la.ack(result(la.item, { error: 'from a' })), false, 'a lost its lease');
  assert.equal(await lb.ack(result(lb.item, { error: 'from b' })), true);
  const r = await coord.result(2000);
  assert.equal(r?.error, 'from b');
  assert.equal(await coord.result(300), null, 'exactly one result');
});

test('an item that always fails is dead-lettered after maxAttempts with its last error; the coordinator gets a failed result', async () => {
  const p = prefix();
  const coord = q(p, { maxAttempts: 3 });
  const w = q(p, { maxAttempts: 3 });
  await coord.enqueue([item('ws://bad.example', 1)]);
  for (let i = 1; i <= 3; i++) {
    const l = await w.lease(1000);
    assert.ok(l, `attempt ${i} leased`);
    assert.equal(l.attempt, i);
    await l.fail(`boom ${i}`);
  }
  assert.equal(await redis.cli('LLEN', `${p}:pending`), '0');
  const dead = JSON.parse(await redis.cli('LINDEX', `${p}:dead`, '0')) as QueueItem & { error: string; deadAt: number };
  assert.equal(dead.url, 'ws://bad.example');
  assert.equal(dead.attempt, 2);
  assert.equal(dead.error, 'boom 3');
  assert.ok(dead.deadAt > 0);
  const r = await coord.result(2000);
  assert.equal(r?.outcome, 'failed');
  assert.match(r!.error!, /dead-lettered after 3 attempts: boom 3/);
  assert.equal(r?.hop, 1);
  assert.equal(coord.pending(), 0);
});

test('leases that keep expiring (workers dying right after BLMOVE) are adopted, retried and dead-lettered', async () => {
  const p = prefix();
  const coord = q(p, { maxAttempts: 2, leaseTtl: 300 });
  await coord.enqueue([item('ws://crashy.example')]);
  for (let i = 0; i < 2; i++) {
    // a worker that moved the item and died before claiming it
    assert.notEqual(await redis.cli('LMOVE', `${p}:pending`, `${p}:processing`, 'RIGHT', 'LEFT'), '');
    assert.equal((await coord.reap()).adopted, 1, 'the unclaimed item gets a lease deadline');
    await sleep(400);
    await coord.reap();
  }
  assert.equal(await redis.cli('LLEN', `${p}:dead`), '1');
  assert.match(JSON.parse(await redis.cli('LINDEX', `${p}:dead`, '0')).error, /lease expired/);
  const r = await coord.result(2000);
  assert.match(r!.error!, /dead-lettered after 2 attempts: lease expired/);
});

test('per-run dedupe and the per-relay lock: one relay is never leased twice at once', async () => {
  const p = prefix();
  const coord = q(p);
  const w1 = q(p);
  const w2 = q(p);
  await coord.enqueue([item('ws://same.example')]);
  await coord.enqueue([item('ws://same.example')]);
  assert.equal(await redis.cli('LLEN', `${p}:pending`), '1', 'enqueued once per run');
  const l1 = await w1.lease(1000);
  assert.ok(l1);
  // The same relay again under another item (an earlier run's, or a hand re-queue).
  const copy = JSON.parse(await redis.cli('LINDEX', `${p}:processing`, '0')) as QueueItem;
  await redis.cli('LPUSH', `${p}:pending`, JSON.stringify({ ...copy, id: 'other', run: 'older' }));
  assert.equal(await w2.lease(500), null, 'locked: put back');
  assert.equal(await redis.cli('LLEN', `${p}:pending`), '1');
  assert.equal(await l1.ack(result(l1.item)), true);
  const l2 = await w2.lease(1000);
  assert.ok(l2, 'leased once the first lease is done');
  assert.equal(await l2.ack(result(l2.item)), true);
  // The first is this run's result; the other run's result is stray (handed to onStray, not counted).
  assert.equal((await coord.result(2000))?.url, 'ws://same.example');
  assert.equal(await coord.result(300), null);
});

test('redis down: enqueue, lease and result report and back off without throwing, then resume', async () => {
  const p = prefix();
  const coord = q(p);
  const w = q(p);
  await redis.kill();
  try {
    await coord.enqueue([item('ws://later.example')]);
    assert.equal(await w.lease(300), null);
    assert.equal(await coord.result(300), null);
  } finally {
    await redis.start();
  }
  let got: WorkResult | null = null;
  await until(async () => {
    const l = await w.lease(200);
    if (l) assert.equal(await l.ack(result(l.item)), true);
    got ??= await coord.result(100);
    return got !== null;
  }, 20_000, 'the item to go through after redis came back');
  assert.equal(got!.url, 'ws://later.example');
});

test('redis restarted (data lost) mid-run: the holder loses its lease, the coordinator re-enqueues, nothing is lost', async () => {
  const p = prefix();
  const coord = q(p, { leaseTtl: 500 });
  const w = q(p, { leaseTtl: 500 });
  await coord.enqueue([item('ws://r1.example'), item('ws://r2.example'), item('ws://r3.example')]);
  const held = await w.lease(1000);
  assert.ok(held);
  await redis.kill();
  await redis.start();
  await until(() => held.signal!.aborted, 5000, 'the holder to notice its lease is gone');
  const urls = new Set<string>();
  await until(async () => {
    const l = await w.lease(100);
    if (l) await l.ack(result(l.item));
    const r = await coord.result(100);
    if (r) urls.add(r.url);
    return urls.size === 3;
  }, 20_000, 'all three results');
  assert.equal(coord.pending(), 0);
});

test('MemoryQueue keeps the same semantics: retry, then dead letter and a failed result', async () => {
  const m = new MemoryQueue(2);
  await m.enqueue([item('ws://m.example')]);
  const l1 = await m.lease(100);
  await l1!.fail('first');
  const l2 = await m.lease(100);
  assert.equal(l2!.attempt, 2);
  await l2!.fail('second');
  assert.equal(await m.lease(50), null);
  const r = await m.result(100);
  assert.match(r!.error!, /dead-lettered after 2 attempts: second/);
  assert.equal(m.dead.length, 1);
  assert.equal(m.pending(), 0);
});
