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
    // 300 lists of 100 follows: 300 x (100 tag entries + 100 counters + 6) = 61,800 < MAX_BATCH_ENTRIES.
    // With the old bound (two entries estimated per tag, 16,000) this took 4 commits.
    const before = lastTxn(store);
    const results = await writeAll(store, Array.from({ length: 300 }, () => followList(100)));
    assert.deepEqual(new Set(results.map((r) => r.status)), new Set(['stored']));
    assert.ok(lastTxn(store) - before <= 2, `300 follow lists in ${lastTxn(store) - before} commits`);
  });
});

test('the bound holds: more entries than MAX_BATCH_ENTRIES are split over several commits, replacements counted', async () => {
  await withStore(async (store) => {
    const lists = Array.from({ length: 500 }, () => followList(150));
    const before = lastTxn(store);
    await writeAll(store, lists);
    const commits = lastTxn(store) - before;
    // 500 x ~306 entries: at least ceil(153,000 / MAX_BATCH_ENTRIES) commits
    assert.ok(commits >= Math.ceil((500 * 300) / MAX_BATCH_ENTRIES), `500 lists of 150 in ${commits} commits`);
    // replacing each list removes its 150 entries and writes 150 new ones (~460 entries with the
    // counters): the removals count too, so at least ceil(500 x 450 / MAX_BATCH_ENTRIES) commits
    const again = lastTxn(store);
    const newer = lists.map((l) => ev({ kind: 3, pubkey: l.pubkey, created_at: l.created_at + 1, tags: l.tags }));
    const results = await writeAll(store, newer);
    assert.deepEqual(new Set(results.map((r) => r.status)), new Set(['stored']));
    assert.ok(lastTxn(store) - again >= Math.ceil((500 * 450) / MAX_BATCH_ENTRIES), `500 replacements in ${lastTxn(store) - again} commits`);
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
