// The lookup's cost budgets, its negative cache of hosts and its fair connection slots, on their
// own (pure, with the clock passed in): what one address may cost, per host and in all, is charged
// all or nothing; a failed host is remembered until its entry expires; one owner at its share does
// not hold up another owner waiting behind it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LookupBudgets } from '../../src/spider/lookup/budgets.js';
import { DownHosts } from '../../src/spider/lookup/down-hosts.js';
import { FairSlots } from '../../src/lib/fair-slots.js';
import { SlidingWindows } from '../../src/lib/sliding-window.js';

const defaults = { connectsPerHost: 4, connectsPerAddress: 20, reqsPerAddress: 60, bytesPerAddress: 1 << 20, hostConnectsPerMinute: 30, hostReqsPerMinute: 30 };
const connect = { connect: true, req: true, bytes: 1000 };

test('lookup budgets: connection attempts per address and host, per address, per host in all, never more in any minute; all or nothing', () => {
  const b = new LookupBudgets(defaults);
  const t = 1_000_000;
  for (let i = 0; i < 4; i++) assert.equal(b.charge('1.2.3.4', 'evil:443', connect, t), null);
  assert.equal(b.charge('1.2.3.4', 'evil:443', connect, t), 'connects_host', 'the fifth attempt at one host in a minute');
  assert.equal(b.charge('5.6.7.8', 'evil:443', connect, t), null, 'another address has its own');
  // 20 in all per address: 4 used at evil, 16 more at other hosts
  for (let i = 0; i < 16; i++) assert.equal(b.charge('1.2.3.4', `h${i}:443`, connect, t), null);
  assert.equal(b.charge('1.2.3.4', 'h99:443', connect, t), 'connects_address');
  // joining an open connection costs no attempt
  assert.equal(b.charge('1.2.3.4', 'h99:443', { connect: false, req: false, bytes: 10 }, t), null);
  // never more than the figure in any minute: half a minute on, nothing has come back yet
  assert.equal(b.charge('1.2.3.4', 'evil:443', connect, t + 30_000), 'connects_host');
  // a minute after the attempts, they are
  assert.equal(b.charge('1.2.3.4', 'evil:443', connect, t + 60_001), null);

  // per host, all addresses: 30 attempts a minute
  const h = new LookupBudgets({ ...defaults, connectsPerHost: 0, connectsPerAddress: 0 });
  for (let i = 0; i < 30; i++) assert.equal(h.charge(`10.0.0.${i}`, 'busy:443', connect, t), null);
  assert.equal(h.charge('10.0.1.1', 'busy:443', connect, t), 'host_connects');

  // all or nothing: a refusal by the bytes budget takes no connection attempt
  const n = new LookupBudgets({ ...defaults, bytesPerAddress: 5000 });
  assert.equal(n.charge('a', 'x:1', { connect: true, req: true, bytes: 4000 }, t), null);
  for (let i = 0; i < 10; i++) assert.equal(n.charge('a', 'x:1', { connect: true, req: true, bytes: 4000 }, t), 'bytes_address');
  assert.equal(n.charge('a', 'x:1', { connect: true, req: true, bytes: 500 }, t), null, 'the refused charges took nothing: attempts 2 of 4');
  // a charge above a whole minute's bytes is charged as one minute's worth (it can pass once)
  assert.equal(new LookupBudgets(defaults).charge('b', 'x:1', { connect: false, req: false, bytes: 10 << 20 }, t), null);
});

test('down hosts: remembered for their time, then tried again; bounded', () => {
  const d = new DownHosts(60_000, 3);
  d.mark('a:1', 0);
  assert.equal(d.isDown('a:1', 59_999), true);
  assert.equal(d.isDown('a:1', 60_000), false);
  assert.equal(d.isDown('b:1', 0), false);
  for (const h of ['w:1', 'x:1', 'y:1', 'z:1']) d.mark(h, 100);
  assert.equal(d.size, 3);
  assert.equal(d.isDown('w:1', 200), false, 'the oldest forgotten first');
  assert.equal(d.isDown('z:1', 200), true);
});

test('fair slots: an owner holds at most its share and a target at most its own; a waiter that fits is not held up by one that does not', async () => {
  const s = new FairSlots(4, 2, 3);
  const a1 = await s.take('A', 'h1');
  const a2 = await s.take('A', 'h2');
  const got: { a3?: (() => void) | null } = {};
  void s.take('A', 'h3').then((r) => { got.a3 = r; });
  await new Promise((r) => setImmediate(r));
  assert.equal(got.a3, undefined, 'A waits: it holds its share');
  const b1 = await s.take('B', 'h1');
  assert.ok(b1, 'B is not held up behind A');
  assert.equal(s.inUse, 3);
  a1!();
  await new Promise((r) => setImmediate(r));
  assert.ok(got.a3, 'A gets a slot once one of its own is released');
  // per target: at most 3 on h1 whoever asks
  const s2 = new FairSlots(10, 10, 1);
  const x = await s2.take('A', 't');
  assert.equal(await s2.take('B', 't', undefined, 50), null, 'gave up after its longest wait');
  x!();
  assert.ok(await s2.take('B', 't', undefined, 50));
  // an aborted wait leaves the queue
  const ctl = new AbortController();
  const p = s.take('A', 'h9', ctl.signal);
  ctl.abort();
  assert.equal(await p, null);
  a2!(); (got.a3 as () => void)(); b1!();
  assert.equal(s.inUse, 0);
  assert.equal(s.waiting, 0);
});

test('sliding windows: at most max in any window, where a token bucket would allow a burst and its refill', () => {
  const w = new SlidingWindows<string>(4, 60_000);
  let taken = 0;
  // one attempt a second for two minutes: at most 4 in every minute
  const times: number[] = [];
  for (let s = 0; s < 120; s++) if (w.take('k', s * 1000)) { taken++; times.push(s * 1000); }
  for (const t of times) assert.ok(times.filter((x) => x >= t && x < t + 60_000).length <= 4);
  assert.equal(taken, 8, 'four in each minute');
  w.give('k');
  assert.equal(w.take('k', 119_000), true, 'an undone charge frees its place');
  w.sweep(500_000);
  assert.equal(w.size, 0, 'expired keys forgotten');
});
