// An operation that throws half way through its writes is taken back alone: the store used LMDB's
// write map, where lmdb-js has no child transactions to abort, so the write transaction journals
// every write (src/store/txn.ts). A fault is injected into the real store's follow graph (the
// pubkey ids a follow list allocates, after some of its follows are written) and, for the counters
// at the end of a transaction, into the counter table; everything else is the real writer on a
// real LMDB store.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { NostrEvent } from '../../src/nostr/event.js';
import type { EventStore } from '../../src/store/index.js';
import type { Dbs } from '../../src/store/schema.js';
import { ev, hex, ids, put, withStore } from './helpers.js';

const dbsOf = (store: EventStore): Dbs => (store as unknown as { dbs: Dbs }).dbs;
const followList = (pubkey: string, follows: string[], created_at = 1_700_000_000): NostrEvent =>
  ev({ kind: 3, pubkey, created_at, tags: follows.map((p) => ['p', p]) });
const followers = (store: EventStore, pk: string): Promise<number> => store.count([{ kinds: [3], tags: [['p', [pk]]] }]);
/** follows held by the graph (graph.ts): one entry per (list, followed pubkey) */
const edges = (store: EventStore): number => store.stats().indexes.graph!;

/** Makes db.putSync throw once for a key holding `marker`; returns a disarm function that says whether it fired. */
function failPutOnce(db: Dbs['graph']['pkid'], marker: Buffer): () => boolean {
  const original = db.putSync.bind(db);
  let armed = true;
  db.putSync = ((key: Buffer, value: Buffer) => {
    if (armed && key.includes(marker)) {
      armed = false;
      throw new Error('injected fault');
    }
    return original(key, value);
  }) as typeof db.putSync;
  return () => {
    db.putSync = original;
    return !armed;
  };
}

test('a follow list whose indexing throws half way is rejected and leaves nothing; the batch around it is stored', async () => {
  await withStore(async (store) => {
    const common = Array.from({ length: 60 }, () => hex());
    const bad = hex();
    const before = edges(store);
    // the fault comes at the bad list's 31st follow (its new pubkey id): 30 of its entries (and counter notes) are written by then
    const a = followList(hex(), common);
    const b = followList(hex(), [...common.slice(0, 30), bad, ...common.slice(30)]);
    const c = followList(hex(), common.slice(0, 10));
    const disarm = failPutOnce(dbsOf(store).graph.pkid, Buffer.from(bad, 'hex'));
    const results = await Promise.allSettled([put(store, a), put(store, b), put(store, c)]);
    disarm();
    assert.equal(results[0].status === 'fulfilled' && results[0].value.status, 'stored');
    assert.equal(results[1].status, 'rejected');
    assert.match(String((results[1] as PromiseRejectedResult).reason), /injected fault/);
    assert.equal(results[2].status === 'fulfilled' && results[2].value.status, 'stored');

    assert.deepEqual(await ids(store, [{ ids: [b.id] }]), []);
    assert.deepEqual(await ids(store, [{ kinds: [3], authors: [b.pubkey] }]), []);
    // exactly the entries of a and c: none of b's 30 written ones is left behind
    assert.equal(edges(store) - before, 60 + 10);
    assert.equal(await followers(store, common[0]!), 2); // a and c, not b
    assert.equal(await followers(store, common[40]!), 1); // a
    assert.equal(await followers(store, bad), 0);

    // the same list again, with the fault gone, is stored whole
    assert.equal((await put(store, b)).status, 'stored');
    assert.equal(await followers(store, bad), 1);
    assert.equal(await followers(store, common[0]!), 3);
  });
});

test('a follow list that throws after its follows were noted for the counters (its current-list entry) leaves every follower count as before', async () => {
  await withStore(async (store) => {
    const common = Array.from({ length: 20 }, () => hex());
    const pk = hex();
    const v1 = followList(pk, common.slice(0, 10), 1_700_000_000);
    assert.equal((await put(store, v1)).status, 'stored');
    const before = edges(store);
    // in one batch: a new list of common, and v2 (drops 0..4, adds 10..14), which fails at its graphtime entry,
    // the last write of the graph's part: its additions and removals are noted by then (CounterBatch.noteFollows)
    const a = followList(hex(), common);
    const v2 = followList(pk, common.slice(5, 15), 1_700_000_100);
    const marker = Buffer.alloc(6);
    marker.writeUInt16BE(3, 0);
    marker.writeUInt32BE(v2.created_at, 2);
    const disarm = failPutOnce(dbsOf(store).graph.graphtime, marker);
    const results = await Promise.allSettled([put(store, a), put(store, v2)]);
    assert.equal(disarm(), true);
    assert.equal(results[0].status === 'fulfilled' && results[0].value.status, 'stored');
    assert.equal(results[1].status, 'rejected');
    for (const [i, m] of common.entries()) assert.equal(await followers(store, m), i < 10 ? 2 : 1, `follower count of member ${i}`);
    // and the graph itself: a's 20 follows, v1's 10 as they were, none of v2's additions (the writer
    // holds new follows until the end of the transaction: the failed list's must not go in then)
    assert.equal(edges(store) - before, 20);
  });
});

test('a replacement that throws half way leaves the old version stored and indexed as it was', async () => {
  await withStore(async (store) => {
    const pk = hex();
    const [x, y, z, w, u] = [hex(), hex(), hex(), hex(), hex()];
    const v1 = followList(pk, [x, y, z], 1_700_000_000);
    assert.equal((await put(store, v1)).status, 'stored');
    const entries = edges(store);
    // v2 unfollows z and follows w and u; the fault hits u, after v1 was removed and w's follow written
    const v2 = followList(pk, [x, y, w, u], 1_700_000_100);
    const disarm = failPutOnce(dbsOf(store).graph.pkid, Buffer.from(u, 'hex'));
    await assert.rejects(put(store, v2), /injected fault/);
    disarm();

    assert.deepEqual(await ids(store, [{ kinds: [3], authors: [pk] }]), [v1.id]);
    assert.deepEqual(await ids(store, [{ kinds: [3], tags: [['p', [z]]] }]), [v1.id]);
    assert.deepEqual(await ids(store, [{ kinds: [3], tags: [['p', [w]]] }]), []);
    assert.deepEqual(await ids(store, [{ ids: [v2.id] }]), []);
    assert.equal(edges(store), entries);
    assert.equal(await followers(store, z), 1);
    assert.equal(await followers(store, w), 0);
    assert.equal(await followers(store, u), 0);
    assert.equal(await followers(store, x), 1);

    // and the replacement goes through once the fault is gone
    assert.deepEqual((await put(store, v2)).status, 'stored');
    assert.deepEqual(await ids(store, [{ kinds: [3], authors: [pk] }]), [v2.id]);
    assert.equal(await followers(store, z), 0);
    assert.equal(await followers(store, w), 1);
    assert.equal(await followers(store, u), 1);
  });
});

test('when the counters at the end of a transaction throw, the batch is taken back and each event written again alone', async () => {
  await withStore(async (store) => {
    const target = hex();
    const lists = Array.from({ length: 20 }, () => followList(hex(), [target, hex()]));
    const disarm = failPutOnce(dbsOf(store).tagcount, Buffer.from(target, 'hex'));
    // a lone event is written at once; the lists, queued meanwhile, make one batch after it
    const first = put(store, followList(hex(), [hex()]));
    const results = await Promise.all(lists.map((l) => put(store, l)));
    assert.equal((await first).status, 'stored');
    assert.equal(disarm(), true, 'the fault fired');
    assert.deepEqual(new Set(results.map((r) => r.status)), new Set(['stored']));
    assert.equal(await followers(store, target), 20);
    assert.equal(edges(store), 41);
  });
});
