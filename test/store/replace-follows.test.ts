// Follow lists replaced by ones differing in a follow or two, the way they change on the network,
// written the way the writer takes them under load: many in one transaction, an author's old and
// new versions in the same one, some replaced twice. Afterwards every index entry, #p answer,
// follower COUNT and its HLL registers match the lists that are current, before and after reopen.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { test } from 'node:test';
import type { NostrEvent } from '../../src/nostr/event.js';
import type { Filter } from '../../src/nostr/filter.js';
import { openStore, type EventStore } from '../../src/store/index.js';
import { ev, hex, ids, oracleRegisters, tmpDir } from './helpers.js';
import type { RootDatabase } from 'lmdb';
import type { Dbs } from '../../src/store/schema.js';
import { NEXT_PKID_KEY, pubkeyId } from '../../src/store/graph.js';

const AUTHORS = 150;
const POOL = 40; // follow targets shared by many lists (popular pubkeys), plus one own follow each

async function check(store: EventStore, current: Map<string, NostrEvent>, targets: string[], ctx: string): Promise<void> {
  const lists = [...current.values()];
  for (const t of targets) {
    const followers = lists.filter((l) => l.tags.some((tag) => tag[1] === t));
    const f: Filter = { kinds: [3], tags: [['p', [t]]] };
    const r = await store.countResult([f]);
    assert.equal(r.count, followers.length, `COUNT of ${t.slice(0, 8)} ${ctx}`);
    if (followers.length > 0) assert.equal(Buffer.from(r.hll!).toString('hex'), oracleRegisters(f, followers), `registers of ${t.slice(0, 8)} ${ctx}`);
    assert.deepEqual(new Set(await ids(store, [f], { maxLimit: 10_000, defaultLimit: 10_000 })), new Set(followers.map((l) => l.id)), `#p of ${t.slice(0, 8)} ${ctx}`);
  }
  // no entry of a replaced version is left: the follow graph holds the current lists' follows exactly,
  // and the tag+kind index none of them
  const { graph, graphcur, tagkind } = store.stats().indexes;
  assert.equal(graph, lists.reduce((n, l) => n + l.tags.length, 0), `graph entries ${ctx}`);
  assert.equal(graphcur, lists.length, `current lists ${ctx}`);
  assert.equal(tagkind, 0, `tag+kind entries ${ctx}`);
}

// Twice: pubkey ids from 1, and from past 2^21, where a transaction's held follow edges are sorted as
// 64-bit words instead of doubles (GraphTxn.putAllPending)
for (const firstId of [1, 2 ** 21 + 7]) test(`follow lists replaced with one follow changed, many per transaction: entries, #p and COUNT exact, also after reopen (pubkey ids from ${firstId})`, async () => {
  const dir = tmpDir();
  try {
    let store = await openStore({ dir, mapSize: 256 * 1024 ** 2 });
    if (firstId > 1) {
      const { env, dbs } = store as unknown as { env: RootDatabase; dbs: Dbs };
      await env.transaction(() => dbs.meta.putSync(NEXT_PKID_KEY, firstId));
    }
    const pool = Array.from({ length: POOL }, () => hex());
    const own = Array.from({ length: AUTHORS }, () => hex());
    const current = new Map<string, NostrEvent>();
    const t0 = 1_700_000_000;
    const first = Array.from({ length: AUTHORS }, (_, i) => {
      const follows = pool.filter((_, k) => (k + i) % 3 !== 0).concat(own[i]!);
      return ev({ kind: 3, created_at: t0 + i, tags: follows.map((p) => ['p', p]) });
    });
    await Promise.all(first.map((e) => store.write(e, JSON.stringify(e))));
    for (const e of first) current.set(e.pubkey, e);
    await check(store, current, [...pool, ...own], 'after the first lists');
    const { dbs } = store as unknown as { dbs: Dbs };
    assert.ok(pubkeyId(dbs, pool[0]!)! >= firstId, 'the ids start where the test set them');

    // Each author: drop one follow and add another; every third author replaces twice (both
    // versions queued at once, so old, new and newer meet in one transaction); every fifth
    // re-publishes the same follows. All queued at once.
    const next: NostrEvent[] = [];
    for (const [i, e] of first.entries()) {
      const tags = e.tags.filter((_, k) => k !== i % e.tags.length);
      if (i % 5 !== 0) tags.push(['p', pool[(i * 7) % POOL]!]);
      const a = ev({ kind: 3, pubkey: e.pubkey, created_at: e.created_at + 1000, tags: i % 5 === 0 ? e.tags : dedup(tags) });
      next.push(a);
      if (i % 3 === 0) next.push(ev({ kind: 3, pubkey: e.pubkey, created_at: a.created_at + 1, tags: a.tags.filter((_, k) => k !== 0) }));
    }
    const results = await Promise.all(next.map((e) => store.write(e, JSON.stringify(e))));
    assert.deepEqual(new Set(results.map((r) => r.status)), new Set(['stored']));
    for (const e of next) current.set(e.pubkey, e);
    await check(store, current, [...pool, ...own], 'after the replacements');

    await store.close();
    store = await openStore({ dir, mapSize: 256 * 1024 ** 2 });
    await check(store, current, [...pool, ...own], 'after reopen');
    await store.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

function dedup(tags: string[][]): string[][] {
  const seen = new Set<string>();
  return tags.filter((t) => !seen.has(t[1]!) && Boolean(seen.add(t[1]!)));
}
