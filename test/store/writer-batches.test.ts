// The writer bounds a transaction by index entries as well as by events: a queue of follow lists
// is written in several transactions (LMDB's dirty pages of one transaction stay bounded in a big
// store), small events still fill maxBatch, and nothing queued is lost by the split.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_BATCH_ENTRIES } from '../../src/store/writer.js';
import type { EventStore } from '../../src/store/index.js';
import { ev, hex, withStore } from './helpers.js';

const followList = (follows: number, p: Partial<ReturnType<typeof ev>> = {}) => ev({ kind: 3, tags: Array.from({ length: follows }, () => ['p', hex()]), ...p });
/** LMDB's id of the last committed write transaction: how many commits a write took. */
const lastTxn = (store: EventStore): number => (store.env.getStats() as { lastTxnId: number }).lastTxnId;
const writeAll = (store: EventStore, events: ReturnType<typeof ev>[]) => Promise.all(events.map((e) => store.write(e, JSON.stringify(e))));

test('a transaction is bounded by the entries it writes: one per indexed tag, not an estimate of two', async () => {
  await withStore(async (store) => {
    // 250 lists of the same 100 follows: 250 x (100 graph entries + 100 counters + 8) + 200 pubkey
    // ids = 52,200 < MAX_BATCH_ENTRIES. With the old bound (two entries estimated per tag, 16,000)
    // this took 4 commits.
    const pool = Array.from({ length: 100 }, () => ['p', hex()]);
    const before = lastTxn(store);
    const results = await writeAll(store, Array.from({ length: 250 }, () => ev({ kind: 3, tags: pool })));
    assert.deepEqual(new Set(results.map((r) => r.status)), new Set(['stored']));
    assert.ok(lastTxn(store) - before <= 2, `250 follow lists in ${lastTxn(store) - before} commits`);
  });
});

test('the bound holds: more entries than MAX_BATCH_ENTRIES are split over several commits; an unchanged re-publication writes almost nothing', async () => {
  await withStore(async (store) => {
    const lists = Array.from({ length: 500 }, () => followList(150));
    const before = lastTxn(store);
    await writeAll(store, lists);
    const commits = lastTxn(store) - before;
    // 500 x ~450 entries (each follow: its graph entry and its new pubkey's two id entries; the
    // list's own keys and counters): at least ceil(500 x 450 / MAX_BATCH_ENTRIES) commits
    assert.ok(commits >= Math.ceil((500 * 450) / MAX_BATCH_ENTRIES), `500 lists of 150 in ${commits} commits`);
    // re-published unchanged (a newer created_at): only the difference of the follows is written
    // (none), so the 500 replacements fit in one or two transactions; before the follow graph each
    // removed its 150 entries and wrote 150 new ones
    const again = lastTxn(store);
    const newer = lists.map((l) => ev({ kind: 3, pubkey: l.pubkey, created_at: l.created_at + 1, tags: l.tags }));
    const results = await writeAll(store, newer);
    assert.deepEqual(new Set(results.map((r) => r.status)), new Set(['stored']));
    assert.ok(lastTxn(store) - again <= 2, `500 unchanged replacements in ${lastTxn(store) - again} commits`);
    assert.equal(store.stats().indexes.graph, 500 * 150);
  });
});

test('follow lists queued at once are all stored and acknowledged across several transactions', async () => {
  await withStore(async (store) => {
    const lists = Array.from({ length: 250 }, () => followList(150));
    const results = await Promise.all(lists.map((e) => store.write(e, JSON.stringify(e))));
    assert.deepEqual(new Set(results.map((r) => r.status)), new Set(['stored']));
    for (const e of lists) assert.ok(store.get(e.id), `stored ${e.id}`);
    // and they are found through the tag index each transaction wrote
    const [list] = lists;
    const target = list!.tags[42]![1]!;
    const found: string[] = [];
    for await (const json of store.iterate({ kinds: [3], tags: [['p', [target]]] })) found.push((JSON.parse(json) as { id: string }).id);
    assert.deepEqual(found, [list!.id]);
  });
});

test('maxBatchMs bounds a transaction by time: past it the transaction commits what it has, and nothing queued is lost', async () => {
  const lists = Array.from({ length: 20 }, () => followList(50));
  // no time bound: the 20 lists fit one or two transactions
  await withStore(async (store) => {
    const before = lastTxn(store);
    await writeAll(store, lists);
    assert.ok(lastTxn(store) - before <= 2, `20 lists in ${lastTxn(store) - before} commits without a time bound`);
  });
  // a bound far below one list's write: each transaction holds the one operation it always takes, then commits
  await withStore(
    async (store) => {
      const before = lastTxn(store);
      const results = await writeAll(store, lists);
      assert.deepEqual(new Set(results.map((r) => r.status)), new Set(['stored']));
      assert.equal(lastTxn(store) - before, 20);
      for (const e of lists) assert.ok(store.get(e.id), `stored ${e.id}`);
    },
    { maxBatchMs: 1e-6 },
  );
});
