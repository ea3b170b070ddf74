// The writer bounds a transaction by index entries as well as by events: a queue of follow lists
// is written in several transactions (LMDB's dirty pages of one transaction stay bounded in a big
// store), small events still fill maxBatch, and nothing queued is lost by the split.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { batchLength, MAX_BATCH_ENTRIES } from '../../src/store/writer.js';
import { ev, hex, withStore } from './helpers.js';

const followList = (follows: number) => ev({ kind: 3, tags: Array.from({ length: follows }, () => ['p', hex()]) });
const queued = (events: ReturnType<typeof ev>[]) => events.map((e) => ({ op: { type: 'event' as const, ev: e, json: JSON.stringify(e) } }));

test('a transaction holds at most MAX_BATCH_ENTRIES index entries, at least one event, and small events up to maxBatch', () => {
  // a follow list of 100 costs 6 + 2 x 100 = 206 entries: 77 of them fit, the 78th would not
  const lists = queued(Array.from({ length: 300 }, () => followList(100)));
  assert.equal(batchLength(lists, 1000), Math.floor(MAX_BATCH_ENTRIES / 206));
  assert.equal(batchLength(lists, 10), 10, 'maxBatch still bounds');
  // one event larger than the bound is written alone, not refused
  assert.equal(batchLength(queued([followList(10_000), followList(1)]), 1000), 1);
  // kind 1 notes with three tags (12 entries each): a whole maxBatch
  const notes = queued(Array.from({ length: 1200 }, () => ev({ tags: [['e', hex()], ['p', hex()], ['t', 'nostr']] })));
  assert.equal(batchLength(notes, 1000), 1000);
  assert.equal(batchLength([], 1000), 0);
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
