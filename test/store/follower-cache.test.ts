// The follower set a query thread keeps in memory (store/follower-cache.ts) must never answer for a
// set that has changed: 1,600 authors follow one person (a set the follow walk reads from memory),
// then some unfollow, and then, in one write transaction, one follower leaves and a new one comes
// (the count stays the same, the set does not). After each step the followers REQ and COUNT must be
// exactly what a naive oracle over the current lists says.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { NostrEvent } from '../../src/nostr/event.js';
import { followerCacheSize, MIN_CACHED } from '../../src/store/follower-cache.js';
import { storeDbs } from '../../src/store/schema.js';
import type { EventStore } from '../../src/store/types.js';
import { ev, hex, ids, put, withStore } from './helpers.js';

const FOLLOWERS = 1600;
const T0 = 1_700_000_000;

/** The oracle: each author's current follow list. */
class Lists {
  readonly current = new Map<string, NostrEvent>();
  write(e: NostrEvent): void {
    this.current.set(e.pubkey, e);
  }
  followers(p: string, limit: number, since = 0, until = Infinity): string[] {
    return [...this.current.values()]
      .filter((e) => e.created_at >= since && e.created_at <= until && e.tags.some((t) => t[0] === 'p' && t[1] === p))
      .sort((a, b) => b.created_at - a.created_at || (a.id < b.id ? -1 : 1))
      .slice(0, limit)
      .map((e) => e.id);
  }
  count(p: string, since?: number, until?: number): number {
    return this.followers(p, Infinity, since, until).length;
  }
}

async function check(store: EventStore, lists: Lists, p: string, step: string): Promise<void> {
  for (const limit of [1, 20, 300]) {
    assert.deepEqual(await ids(store, [{ kinds: [3], tags: [['p', [p]]], limit }]), lists.followers(p, limit), `${step}: the ${limit} newest followers`);
  }
  assert.equal(await store.count([{ kinds: [3], tags: [['p', [p]]] }]), lists.count(p), `${step}: follower COUNT`);
  // time windows: a COUNT over a window of fewer lists than followers walks the window against the set
  for (const [since, until] of [[T0 + 100, T0 + 180], [T0 + 1500, T0 + 20_000], [T0, T0 + 1200], [T0 + 1590, T0 + 10_003]]) {
    const f = { kinds: [3], tags: [['p', [p]]] as [string, string[]][], since, until };
    assert.equal(await store.count([f]), lists.count(p, since, until), `${step}: follower COUNT ${since - T0}..${until - T0}`);
    assert.deepEqual(await ids(store, [{ ...f, limit: 50 }]), lists.followers(p, 50, since, until), `${step}: followers ${since - T0}..${until - T0}`);
  }
}

test('a follower set kept in memory follows every change of the set, also one that keeps its size', async () => {
  await withStore(async (store) => {
    const dbs = storeDbs(store);
    const lists = new Lists();
    const p = hex();
    const other = hex();
    const authors = Array.from({ length: FOLLOWERS }, () => hex());
    const listOf = (author: string, at: number, follows: string[]): NostrEvent =>
      ev({ pubkey: author, kind: 3, created_at: at, content: '', tags: follows.map((f) => ['p', f]) });
    for (let i = 0; i < FOLLOWERS; i += 200) {
      const batch = authors.slice(i, i + 200).map((a, k) => listOf(a, T0 + i + k, [p, other]));
      await Promise.all(batch.map((e) => put(store, e)));
      for (const e of batch) lists.write(e);
    }
    assert.ok(lists.count(p) >= MIN_CACHED);
    await check(store, lists, p, 'loaded');
    assert.equal(followerCacheSize(dbs).sets, 1, 'the walk read the set into memory');

    // the five newest followers unfollow: their new lists are the newest, so a stale set would keep them
    let at = T0 + 10_000;
    for (const a of authors.slice(-5)) {
      const e = listOf(a, at++, [other]);
      assert.equal((await put(store, e)).ok, true);
      lists.write(e);
    }
    await check(store, lists, p, 'after five unfollowed');

    // one transaction: a follower leaves, a newcomer follows (the count stays; the set changes)
    const before = lists.count(p);
    const newcomer = hex();
    const leave = listOf(authors[0]!, at++, [other]);
    const join = listOf(newcomer, at++, [p]);
    const [r1, r2] = await Promise.all([put(store, leave), put(store, join)]);
    assert.equal(r1.ok && r2.ok, true);
    lists.write(leave);
    lists.write(join);
    assert.equal(lists.count(p), before);
    await check(store, lists, p, 'after a swap in one transaction');

    // a list re-published unchanged: the set and its counter stay, the cached set is used as it is
    const again = listOf(authors[100]!, at++, [p, other]);
    await put(store, again);
    lists.write(again);
    await check(store, lists, p, 'after an unchanged re-publication');
    assert.equal(followerCacheSize(dbs).sets, 1);
  });
});
