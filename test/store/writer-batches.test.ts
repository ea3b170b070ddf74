// The writer bounds a transaction by index entries as well as by events: a queue of follow lists
// is written in several transactions (how long one holds the main thread stays bounded in a big
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
    // 1,000 lists of 150 follows (maxBatch operations: only the entry bound can split them), ~306
    // entries each with the counters: at least ceil(300,000 / MAX_BATCH_ENTRIES) = 2 commits
    const lists = Array.from({ length: 1000 }, () => followList(150));
    const before = lastTxn(store);
    await writeAll(store, lists);
    const commits = lastTxn(store) - before;
    const least = Math.ceil((1000 * 300) / MAX_BATCH_ENTRIES);
    assert.ok(least >= 2, 'the test needs more entries than one transaction may hold');
    assert.ok(commits >= least, `1,000 lists of 150 in ${commits} commits`);
    // replacing each list removes its 150 entries and writes 150 new ones (~460 entries with the
    // counters): the removals count too, so at least ceil(1,000 x 450 / MAX_BATCH_ENTRIES) commits
    const again = lastTxn(store);
    const newer = lists.map((l) => ev({ kind: 3, pubkey: l.pubkey, created_at: l.created_at + 1, tags: l.tags }));
    const results = await writeAll(store, newer);
    assert.deepEqual(new Set(results.map((r) => r.status)), new Set(['stored']));
    assert.ok(lastTxn(store) - again >= Math.ceil((1000 * 450) / MAX_BATCH_ENTRIES), `1,000 replacements in ${lastTxn(store) - again} commits`);
  }, { maxBatch: 1000, mapSize: 1024 ** 3 });
});

test('follow lists queued at once are all stored and acknowledged across several transactions', async () => {
  await withStore(async (store) => {
    const lists = Array.from({ length: 250 }, () => followList(150));
    const before = lastTxn(store);
    const results = await Promise.all(lists.map((e) => store.write(e, JSON.stringify(e))));
    assert.deepEqual(new Set(results.map((r) => r.status)), new Set(['stored']));
    assert.ok(lastTxn(store) - before >= 3, `250 lists of ~306 entries under a bound of 20,000 in ${lastTxn(store) - before} commits`);
    for (const e of lists) assert.ok(store.get(e.id), `stored ${e.id}`);
    // and they are found through the tag index each transaction wrote
    const [list] = lists;
    const target = list!.tags[42]![1]!;
    const found: string[] = [];
    for await (const json of store.iterate({ kinds: [3], tags: [['p', [target]]] })) found.push((JSON.parse(json) as { id: string }).id);
    assert.deepEqual(found, [list!.id]);
  }, { maxBatchEntries: 20_000 });
});
