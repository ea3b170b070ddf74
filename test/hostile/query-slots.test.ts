// Query slots (src/relay/policy/query-slots.ts) without a relay: per-connection and per-address
// concurrency, arrival order, the waiting caps, and the result-bytes allowance per address.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { QuerySlots } from '../../src/relay/policy/query-slots.js';

const read = { maxConcurrentQueries: 2, maxQueuedQueries: 3, maxConcurrentQueriesPerIp: 3, maxQueuedQueriesPerIp: 4, scanBudget: 1000, queryTimeout: 1000, resultBytesPerIp: 0, answerPieceBytes: 4 << 20, offloadWhenBusy: true };
const tick = () => new Promise((r) => setImmediate(r));

test('at most N per connection and M per address run; the rest wait in order; beyond the caps: null', async () => {
  const slots = new QuerySlots(read);
  const a1 = { key: 'A' }, a2 = { key: 'A' }, b = { key: 'B' };
  const r1 = await slots.acquire(a1);
  const r2 = await slots.acquire(a1);
  let third: (() => void) | null = null;
  const p3 = slots.acquire(a1).then((r) => { third = r; }); // connection cap: waits
  const r4 = await slots.acquire(a2); // address has room for a third
  let fifth = false;
  const p5 = slots.acquire(a2).then(() => { fifth = true; }); // address cap: waits
  assert.ok(await slots.acquire(b), 'another address runs at once');
  await tick();
  assert.equal(third, null);
  assert.equal(fifth, false);
  assert.deepEqual(slots.figures(), { queriesRunning: 4, queriesWaiting: 2 });
  // a1 already has 1 waiting; two more fit its queue (3), and the address queue (4) holds one more after those
  const extra = [slots.acquire(a1), slots.acquire(a1)];
  assert.equal(await Promise.race([slots.acquire(a1), tick().then(() => 'waiting')]), null, 'connection queue full');
  r4!(); // frees an address slot: a1 still has 2 running, so the first waiter that fits is a2's
  await tick();
  assert.equal(fifth, true);
  assert.equal(third, null);
  r1!(); // now a1's first waiter runs
  await p3;
  assert.ok(third);
  r2!();
  void extra;
  void p5;
});

test('an address over its result allowance waits before its next scan; another address is served at once', async () => {
  const slots = new QuerySlots({ ...read, resultBytesPerIp: 1_000_000 }); // 1 MB/s, 2 MB burst
  const a = { key: 'A' }, b = { key: 'B' };
  const r = await slots.acquire(a);
  slots.charge(a, 12_000_000); // 10 MB over the allowance: ~10 s to pay
  r!();
  let started = false;
  void slots.acquire(a).then(() => { started = true; });
  await new Promise((res) => setTimeout(res, 200));
  assert.equal(started, false);
  assert.ok(await slots.acquire(b));
});
