// The query pool (queryThreads > 0): REQ and COUNT answered by worker threads must equal the
// store's own answers, CLOSE must stop a scan, and live subscriptions must get every event once.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { startRelayProcess, tempDir, type RelayProcess } from '../helpers/relay-process.js';
import { Author, Client, ids, now, sleep } from '../helpers/client.js';
import { openStore } from '../../src/store/index.js';
import { parseFilter } from '../../src/nostr/filter.js';
import { queryPool } from '../../src/relay/query-pool.js';
import { runsHere } from '../../src/relay/main-load.js';
import { framesToJson, NO_FRAMING } from '../../src/nostr/frames.js';
import type { NostrEvent } from '../../src/nostr/event.js';

let relay: RelayProcess;
const authors = [new Author(), new Author(), new Author()];
const published: NostrEvent[] = [];

before(async () => {
  relay = await startRelayProcess({ env: { ORBWEAVER_QUERY_THREADS: '2' } });
  const c = await Client.open(relay.url);
  const t = now() - 1000;
  for (let i = 0; i < 60; i++) {
    const a = authors[i % 3];
    // equal created_at in pairs exercises the tie rule (lower id first)
    const ev = a.sign({ kind: i % 4 === 0 ? 7 : 1, created_at: t + Math.floor(i / 2), tags: i % 5 === 0 ? [['t', 'pool']] : [], content: `e${i}` });
    assert.equal((await c.publish(ev)).ok, true);
    published.push(ev);
  }
  c.close();
});
after(async () => { await relay.cleanup(); });

const shapes: object[][] = [
  [{ authors: [authors[0].pk, authors[1].pk], kinds: [1, 7], limit: 25 }],
  [{ '#t': ['pool'], limit: 5 }],
  [{ kinds: [1], since: now() - 990, until: now() - 980 }],
  [{ ids: [] as string[] }], // filled below
  [{ authors: [authors[2].pk], limit: 3 }, { kinds: [7], limit: 4 }],
  [{ limit: 500 }],
  [{ kinds: [1, 7], '#t': ['pool'], limit: 7 }], // one exact tag with kinds: answered on the main thread
];

test('REQ through the pool returns exactly the store\'s results in the store\'s order; COUNT matches', async () => {
  (shapes[3][0] as { ids: string[] }).ids = [published[3].id, published[10].id, published[11].id.slice(0, 20)];
  const store = await openStore({ dir: relay.dataDir, readOnly: true });
  const c = await Client.open(relay.url);
  try {
    for (const raw of shapes) {
      const filters = raw.map((f) => parseFilter(f));
      const want = (await store.query(filters, { defaultLimit: 500, maxLimit: 500 })).map((j) => (JSON.parse(j) as NostrEvent).id);
      const got = ids((await c.query(raw)).events);
      assert.ok(want.length > 0, `shape ${JSON.stringify(raw)} matches something`);
      assert.deepEqual(got, want, `REQ ${JSON.stringify(raw)}`);
      const n = await store.count(filters.map((f) => ({ ...f, limit: undefined })));
      const m = await c.count(raw);
      assert.deepEqual(m[2], { count: n }, `COUNT ${JSON.stringify(raw)}`);
    }
  } finally {
    c.close();
    await store.close();
  }
});

test('CLOSE during a scan: no EOSE afterwards, and the connection keeps working', async () => {
  const c = await Client.open(relay.url);
  // one write, so each CLOSE arrives with its REQ (on a loaded machine separate writes could let a
  // fast scan finish before its CLOSE is even sent, and then its EOSE is right)
  const socket = (c.ws as unknown as { _socket: { cork(): void; uncork(): void } })._socket;
  socket.cork();
  for (let i = 0; i < 20; i++) {
    const subId = `long${i}`;
    c.send(['REQ', subId, { limit: 500 }, { kinds: [1], limit: 500 }, { authors: authors.map((a) => a.pk), limit: 500 }]);
    c.send(['CLOSE', subId]);
  }
  socket.uncork();
  const check = await c.query({ authors: [authors[0].pk], limit: 2 });
  assert.equal(check.events.length, 2);
  await sleep(200);
  // each CLOSE reaches the main thread before the worker's answer can come back
  const closedLate = c.inbox.filter((m) => m[0] === 'EOSE' && String(m[1]).startsWith('long'));
  const eventsAfterClose = c.inbox.filter((m) => m[0] === 'EVENT' && String(m[1]).startsWith('long'));
  assert.equal(closedLate.length, 0, 'no EOSE for a closed subscription');
  assert.equal(eventsAfterClose.length, 0, 'no stored events for a closed subscription');
  c.close();
});

// ---- the pool in-process: abort reaches the worker, the scan budget is enforced there ----

const hex = (n: number) => randomBytes(n).toString('hex');

test('pool: an abort stops the worker\'s scan, the budget trips the guard, seen is filled', async () => {
  const dir = tempDir();
  const store = await openStore({ dir, queryYieldEvery: 16 });
  const pk = hex(32);
  const t = now() - 100_000;
  await Promise.all(
    Array.from({ length: 3000 }, (_, i) => {
      const ev: NostrEvent = { id: hex(32), pubkey: pk, created_at: t + i, kind: 1, tags: [], content: `n${i}`, sig: hex(64) };
      return store.write(ev, JSON.stringify(ev));
    }),
  );
  let cuts = 0;
  const Y = 2; // the worker's step: a scan of 3000 entries yields ~1500 times, so an abort lands mid-scan
  const pool = await queryPool({ threads: 1, dir, mapSize: 64 * 1024 ** 3, queryYieldEvery: Y, scanBudget: 160, queryTimeout: 10_000, onCut: () => cuts++ }, store);
  try {
    const opts = { defaultLimit: 500, maxLimit: 5000 };
    // unbounded by the guard: full answer, same as the store, with seen
    const seen = { upTo: 0, newer: new Set<string>() };
    const all = framesToJson(await pool.query([{ kinds: [1], limit: 5000 }], { ...opts, seen }, NO_FRAMING));
    assert.deepEqual(all, await store.query([{ kinds: [1], limit: 5000 }], opts));
    assert.equal(all.length, 3000);
    assert.equal(seen.upTo, 3000, 'upTo is the last serial committed');
    assert.equal((await pool.count([{ kinds: [1] }])).count, 3000);

    // an abort a few ms in stops the scan early
    const abort = { aborted: false };
    const p = pool.query([{ kinds: [1], limit: 5000 }], { ...opts, signal: abort }, NO_FRAMING).then(framesToJson);
    setTimeout(() => { abort.aborted = true; }, 1);
    const partial = await p;
    assert.ok(partial.length < 3000, `aborted scan returned ${partial.length} of 3000`);

    // the pool's guard: 160 entries = 80 steps, then tripped 'budget', counted once
    const guard = pool.scanGuard({ aborted: false });
    const cut = framesToJson(await pool.query([{ kinds: [1], limit: 5000 }], { ...opts, signal: guard.signal }, NO_FRAMING));
    assert.equal(guard.tripped, 'budget');
    assert.ok(cut.length <= 160 + Y, `budget-cut scan returned ${cut.length}`);
    assert.equal(cuts, 1);
    // COUNT's sub-counts share one guard: two concurrent counts of 3000 keys trip it once
    const g2 = pool.scanGuard({ aborted: false });
    const [n1, n2] = (await Promise.all([pool.count([{ kinds: [1] }], { signal: g2.signal }), pool.count([{ kinds: [1], since: t + 5 }], { signal: g2.signal })])).map((r) => r.count);
    assert.equal(g2.tripped, 'budget');
    assert.ok(n1 + n2 <= 160 + 2 * Y, `the two counts read about the shared budget (${n1 + n2})`);
    assert.equal(cuts, 2);
  } finally {
    await pool.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

// ---- answer buffers: shared memory, reused only after release ----

test('pool: answers arrive in shared buffers, a released buffer is reused, a held one is never written over', async () => {
  const dir = tempDir();
  const store = await openStore({ dir });
  const t = now() - 10_000;
  // contents of odd lengths, so frames start at every alignment (copies into shared memory)
  const events: NostrEvent[] = Array.from({ length: 400 }, (_, i) => ({ id: hex(32), pubkey: hex(32), created_at: t + i, kind: i % 2 === 0 ? 1 : 3, tags: [['p', hex(32)]], content: 'x'.repeat(i * 37 % 1000 + 1), sig: hex(64) }));
  await Promise.all(events.map((ev) => store.write(ev, JSON.stringify(ev))));
  const pool = await queryPool({ threads: 1, dir, mapSize: 64 * 1024 ** 3, queryYieldEvery: 100, scanBudget: 1_000_000, queryTimeout: 10_000 }, store);
  const opts = { defaultLimit: 500, maxLimit: 500 };
  const framing = { prefix: Buffer.from('["EVENT","s",'), suffix: Buffer.from(']') };
  const text = (f: Awaited<ReturnType<typeof pool.query>>): string[] => Array.from({ length: f.ends.length }, (_, i) => Buffer.from(f.buf.buffer, f.buf.byteOffset + (i === 0 ? 0 : f.ends[i - 1]!), f.ends[i]! - (i === 0 ? 0 : f.ends[i - 1]!)).toString('utf8'));
  const expect = async (filter: object): Promise<string[]> => (await store.query([parseFilter(filter)], opts)).map((j) => `["EVENT","s",${j}]`);
  try {
    const held = await pool.query([parseFilter({ kinds: [1] })], opts, framing);
    assert.ok(held.buf.buffer instanceof SharedArrayBuffer, 'the frames are in shared memory');
    const heldText = text(held);
    assert.deepEqual(heldText, await expect({ kinds: [1] }));
    // released answers go back to the worker, which writes its next answers into them
    for (let i = 0; i < 5; i++) {
      const f = await pool.query([parseFilter({ kinds: [3], limit: 200 - i })], opts, framing);
      assert.deepEqual(text(f), await expect({ kinds: [3], limit: 200 - i }));
      pool.release(f);
    }
    const all = await pool.query([parseFilter({})], opts, framing);
    assert.deepEqual(text(all), await expect({}));
    pool.release(all);
    assert.deepEqual(text(held), heldText, 'the answer still held was not written over');
    pool.release(held);
  } finally {
    await pool.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

// ---- answer-bounded scans run on the main thread, under the same guard ----

test('pool: a scan of one exact tag runs inline, answers as the store does, and keeps the budget and abort', async () => {
  const dir = tempDir();
  const Y = 2; // the store's step is the pool's, as in the relay
  const store = await openStore({ dir, queryYieldEvery: Y });
  const followed = hex(32);
  const t = now() - 100_000;
  // 600 reactions to `followed`'s note; the last 400 share one created_at, so a scan at the limit reads that run whole
  await Promise.all(
    Array.from({ length: 600 }, (_, i) => {
      const ev: NostrEvent = { id: hex(32), pubkey: hex(32), created_at: i < 200 ? t + i : t + 1000, kind: 7, tags: [['e', followed], ['p', hex(32)]], content: '+', sig: hex(64) };
      return store.write(ev, JSON.stringify(ev));
    }),
  );
  let cuts = 0;
  const pool = await queryPool({ threads: 1, dir, mapSize: 64 * 1024 ** 3, queryYieldEvery: Y, scanBudget: 160, queryTimeout: 10_000, onCut: () => cuts++ }, store);
  try {
    const opts = { defaultLimit: 500, maxLimit: 500 };
    const followers = (limit: number) => [parseFilter({ kinds: [7], '#e': [followed], limit })];
    // within the budget: the store's answer, on this thread
    const before = pool.inline;
    const open = pool.scanGuard({ aborted: false }, 1_000_000);
    const got = framesToJson(await pool.query(followers(450), { ...opts, signal: open.signal }, NO_FRAMING));
    assert.equal(pool.inline, before + 1, 'answered on the calling thread');
    assert.deepEqual(got, await store.query(followers(450), opts));
    assert.equal(open.tripped, null);
    // past the budget (the run of 400 equal created_at is 200 steps of Y): cut and counted as a worker's cut is
    const guard = pool.scanGuard({ aborted: false });
    const cut = framesToJson(await pool.query(followers(10), { ...opts, signal: guard.signal }, NO_FRAMING));
    assert.equal(pool.inline, before + 2);
    assert.equal(guard.tripped, 'budget');
    assert.equal(cuts, 1);
    assert.ok(cut.length <= 10, `budget-cut scan returned ${cut.length}`);
    // the caller's abort is read directly
    const aborted = pool.scanGuard({ aborted: true }, 1_000_000);
    const none = framesToJson(await pool.query(followers(450), { ...opts, signal: aborted.signal }, NO_FRAMING));
    assert.equal(none.length, 0);
    // without kinds the ranges are whatever kinds the value has: a query thread's, as are scans that may read entries they do not return
    const workerBefore = pool.inline;
    const mixed = [parseFilter({ '#e': [followed], limit: 5 }), parseFilter({ kinds: [7], '#e': [followed], since: t + 100, limit: 5 })];
    const answer = framesToJson(await pool.query(mixed, opts, NO_FRAMING));
    assert.equal(answer.length, 5);
    assert.deepEqual(answer, await store.query(mixed, opts));
    const two = [parseFilter({ kinds: [7], '#e': [followed, hex(32)], authors: [hex(4)], limit: 5 })];
    assert.deepEqual(framesToJson(await pool.query(two, opts, NO_FRAMING)), await store.query(two, opts));
    // a follower set of the graph reads more than it returns (the walk probes each list): a query thread's too
    const graph = [parseFilter({ kinds: [3], '#p': [followed], limit: 5 })];
    assert.deepEqual(framesToJson(await pool.query(graph, opts, NO_FRAMING)), []);
    assert.equal(pool.inline, workerBefore, 'not inline');
  } finally {
    await pool.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

// ---- reads that may run on the main thread: there, unless it is saturated and a query thread is idle ----

test('runsHere: an inline-able read stays on the main thread unless that thread is saturated and a query thread is idle', () => {
  assert.equal(runsHere(true, false, 2), true, 'main thread not saturated: here');
  assert.equal(runsHere(true, true, 1), false, 'saturated, a query thread idle: there');
  assert.equal(runsHere(true, true, 0), true, 'saturated, every query thread busy: here all the same');
  assert.equal(runsHere(false, false, 2), false, 'a scan never runs here');
});

test('pool: point lookups go to an idle query thread while the main thread is saturated, with the same answer', async () => {
  const dir = tempDir();
  const store = await openStore({ dir });
  const t = now() - 10_000;
  const hex = (n: number) => randomBytes(n).toString('hex');
  const events: NostrEvent[] = Array.from({ length: 3000 }, (_, i) => ({ id: hex(32), pubkey: hex(32), created_at: t + i, kind: 1, tags: [], content: `c${i}`, sig: hex(64) }));
  await Promise.all(events.map((ev) => store.write(ev, JSON.stringify(ev))));
  const load = { busy: false };
  const pool = await queryPool({ threads: 1, dir, mapSize: 64 * 1024 ** 3, queryYieldEvery: 100, scanBudget: 1_000_000, queryTimeout: 10_000, mainLoad: load }, store);
  const opts = { defaultLimit: 500, maxLimit: 5000 };
  const byId = [parseFilter({ ids: [events[7]!.id, events[2000]!.id] })];
  try {
    const want = await store.query(byId, opts);
    assert.equal(want.length, 2);
    assert.deepEqual(framesToJson(await pool.query(byId, opts, NO_FRAMING)), want);
    assert.deepEqual([pool.inline, pool.offloaded], [1, 0], 'not saturated: on this thread');

    load.busy = true;
    assert.deepEqual(framesToJson(await pool.query(byId, opts, NO_FRAMING)), want);
    assert.equal((await pool.count(byId)).count, 2);
    assert.deepEqual([pool.inline, pool.offloaded], [1, 2], 'saturated, the thread idle: REQ and COUNT went there');

    // the only query thread busy with a scan: the lookup stays here rather than wait behind it
    const scan = pool.query([parseFilter({ kinds: [1], limit: 5000 })], opts, NO_FRAMING);
    assert.deepEqual(framesToJson(await pool.query(byId, opts, NO_FRAMING)), want);
    assert.deepEqual([pool.inline, pool.offloaded], [2, 2], 'every query thread busy: here');
    assert.equal(framesToJson(await scan).length, 3000);
  } finally {
    await pool.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
