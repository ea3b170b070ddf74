// NIP-62 in the store (store/vanish.ts, txn.ts): a request to vanish deletes its author's events up
// to its created_at and the gift wraps to them, through the path NIP-09 deletions take (so the
// indexes, counters, follow graph and search postings stay exact: verify is clean afterwards), and
// from then on refuses what it covers, whatever writes it. Beside the NIP-09 tests in rules.test.ts.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { test } from 'node:test';
import { openStore } from '../../src/store/index.js';
import { storeDbs } from '../../src/store/schema.js';
import { readVanish, vanishKey, vanishValue } from '../../src/store/vanish.js';
import { entryCount } from '../../src/store/schema.js';
import { verifyStore } from '../../src/commands/check/verify.js';
import type { EventStore } from '../../src/store/types.js';
import type { NostrEvent } from '../../src/nostr/event.js';
import { ev, hex, ids, put, tmpDir, withStore } from './helpers.js';

const T = 1_700_000_000;
const MAP = 256 * 1024 ** 2;

const vanish = (pubkey: string, created_at: number, relay = 'ALL_RELAYS'): NostrEvent => ev({ kind: 62, pubkey, created_at, tags: [['relay', relay]], content: 'bye' });
const wrap = (to: string, created_at: number): NostrEvent => ev({ kind: 1059, created_at, tags: [['p', to]], content: 'sealed' });

async function clean(s: EventStore): Promise<void> {
  const r = await verifyStore(s.env, storeDbs(s));
  assert.ok(r.clean, JSON.stringify({ indexes: r.indexes.filter((x) => x.missing + x.extra + x.wrong > 0), meta: r.meta, vanish: r.vanish }));
}

/** An author with notes, a profile, a follow list, a deletion and reactions around T; a bystander who follows the same people. */
async function world(s: EventStore) {
  const alice = hex();
  const bob = hex();
  const followed = [hex(), hex(), hex()];
  const before = [
    ev({ pubkey: alice, created_at: T - 100, content: 'an old note about nostr', tags: [['t', 'nostr']] }),
    ev({ pubkey: alice, kind: 0, created_at: T - 90, content: '{"name":"alice"}' }),
    ev({ pubkey: alice, kind: 3, created_at: T - 80, tags: followed.map((p) => ['p', p]) }),
    ev({ pubkey: alice, kind: 7, created_at: T - 70, content: '+', tags: [['e', hex()], ['p', bob]] }),
    ev({ pubkey: alice, created_at: T, content: 'written in the same second as the request' }),
  ];
  const deletion = ev({ pubkey: alice, kind: 5, created_at: T - 60, tags: [['e', hex()]] });
  const wrapsBefore = [wrap(alice, T - 50), wrap(alice, T)];
  const others = [
    ev({ pubkey: bob, created_at: T - 100, content: 'bob stays' }),
    ev({ pubkey: bob, kind: 3, created_at: T - 100, tags: followed.map((p) => ['p', p]) }),
    wrap(bob, T - 50),
  ];
  for (const e of [...before, deletion, ...wrapsBefore, ...others]) assert.equal((await put(s, e)).status, 'stored');
  return { alice, bob, followed, before: [...before, deletion], wrapsBefore, others };
}

test('a request to vanish deletes the author\'s events up to it and the gift wraps to them; later ones, other authors\' and the request stay', () =>
  withStore(async (s) => {
    const w = await world(s);
    const after = ev({ pubkey: w.alice, created_at: T + 10, content: 'back again' });
    const wrapAfter = wrap(w.alice, T + 10);
    for (const e of [after, wrapAfter]) await put(s, e);
    const followers = () => s.count([{ kinds: [3], tags: [['p', [w.followed[0]!]]] }]);
    assert.equal(await followers(), 2);

    const req = vanish(w.alice, T);
    const r = await put(s, req);
    assert.equal(r.status, 'stored');
    // answered once what it covers is gone, and it says what that was
    assert.deepEqual(new Set(r.removed), new Set([...w.before, ...w.wrapsBefore].map((e) => e.id)));
    assert.deepEqual(new Set(await ids(s, [{ authors: [w.alice] }])), new Set([req.id, after.id]));
    assert.deepEqual(new Set(await ids(s, [{ kinds: [1059], tags: [['p', [w.alice]]] }])), new Set([wrapAfter.id]));
    assert.deepEqual(new Set(await ids(s, [{ authors: [w.bob] }])), new Set(w.others.slice(0, 2).map((e) => e.id)));
    assert.equal((await ids(s, [{ kinds: [1059], tags: [['p', [w.bob]]] }])).length, 1, 'gift wraps to others stay');
    // derived state follows: a follower fewer, no search hit, verify clean
    assert.equal(await followers(), 1);
    assert.equal(await s.count([{ kinds: [1], tags: [['t', ['nostr']]] }]), 0);
    await clean(s);
    assert.equal(readVanish(storeDbs(s).tombVanish.getBinary(vanishKey(w.alice)))?.pending, false, 'applied');
  }));

test('what a request to vanish covers is refused from then on (written, prechecked); newer events, gift wraps and other authors are taken', () =>
  withStore(async (s) => {
    const w = await world(s);
    await put(s, vanish(w.alice, T));
    for (const e of w.before) {
      assert.equal(s.precheck(e), 'deleted', `kind ${e.kind} prechecked`);
      const r = await put(s, e);
      assert.deepEqual([r.status, r.ok], ['deleted', false], `kind ${e.kind}`);
      assert.match(r.message, /^blocked: .*requested to vanish .*deleted/);
    }
    for (const e of w.wrapsBefore) {
      const r = await put(s, e);
      assert.deepEqual([r.status, r.ok], ['deleted', false]);
      assert.match(r.message, /^blocked: this gift wrap is addressed to a pubkey that requested to vanish/);
    }
    // an older request is covered like anything older; one at the same second is a request too
    assert.equal((await put(s, vanish(w.alice, T - 1))).status, 'deleted');
    assert.equal((await put(s, vanish(w.alice, T))).status, 'stored');
    // newer events, a wrap to another pubkey, another author's old event
    for (const e of [ev({ pubkey: w.alice, created_at: T + 1 }), ev({ pubkey: w.alice, kind: 0, created_at: T + 1 }), wrap(w.alice, T + 1), wrap(w.bob, T - 10), ev({ pubkey: w.bob, created_at: T - 500 })]) {
      assert.equal(s.precheck(e), null);
      assert.equal((await put(s, e)).status, 'stored', `kind ${e.kind}`);
    }
    await clean(s);
  }));

test('a newer request moves the tombstone: it deletes what lies between, the older request included', () =>
  withStore(async (s) => {
    const alice = hex();
    const first = vanish(alice, T);
    await put(s, first);
    const between = ev({ pubkey: alice, created_at: T + 50 });
    await put(s, between);
    const second = vanish(alice, T + 100, 'wss://relay.example');
    const r = await put(s, second);
    assert.deepEqual(new Set(r.removed), new Set([first.id, between.id]));
    assert.deepEqual(await ids(s, [{ authors: [alice] }]), [second.id]);
    assert.equal((await put(s, ev({ pubkey: alice, created_at: T + 99 }))).status, 'deleted');
    assert.equal(readVanish(storeDbs(s).tombVanish.getBinary(vanishKey(alice)))?.upTo, T + 100);
  }));

test('a deletion (kind 5) of a request to vanish is refused, by e tag or k tag; one that came first does not keep the request out', () =>
  withStore(async (s) => {
    const alice = hex();
    const req = vanish(alice, T);
    // a deletion of the request's id before the request arrives: the request is still taken
    const early = ev({ pubkey: alice, kind: 5, created_at: T + 1, tags: [['e', req.id]] });
    assert.equal((await put(s, early)).status, 'stored');
    assert.equal((await put(s, req)).status, 'stored');
    for (const tags of [[['e', req.id]], [['k', '62'], ['e', hex()]], [['e', hex()], ['e', req.id]]]) {
      const r = await put(s, ev({ pubkey: alice, kind: 5, created_at: T + 2, tags }));
      assert.deepEqual([r.ok, r.status], [false, 'invalid'], JSON.stringify(tags));
      assert.match(r.message, /^blocked: a request to vanish cannot be withdrawn/);
    }
    assert.deepEqual(await ids(s, [{ kinds: [62] }]), [req.id]);
    // a deletion of something else by the same author, after the request, is taken
    assert.equal((await put(s, ev({ pubkey: alice, kind: 5, created_at: T + 3, tags: [['e', hex()]] }))).status, 'stored');
  }));

test('many covered events are deleted in transactions of the writer\'s bound, and the request is answered after the last', () =>
  withStore(async (s) => {
    const alice = hex();
    const notes = Array.from({ length: 120 }, (_, i) => ev({ pubkey: alice, created_at: T - 1000 + i, tags: [['t', `n${i % 7}`], ['p', hex()]] }));
    for (const e of notes) await put(s, e);
    const log = storeDbs(s).removed!;
    const before = entryCount(log);
    const r = await put(s, vanish(alice, T));
    assert.equal(r.removed?.length, notes.length);
    assert.deepEqual((await ids(s, [{ authors: [alice] }])).length, 1);
    // one removal-log record per transaction that removed something: the deletion took several
    assert.ok(entryCount(log) - before > 3, `transactions that removed: ${entryCount(log) - before}`);
    await clean(s);
  }, { maxBatchEntries: 60 }));

test('a request left half applied (the process killed between its transactions) is finished when the store opens for writing', async () => {
  const dir = tmpDir();
  try {
    const alice = hex();
    const notes = Array.from({ length: 10 }, (_, i) => ev({ pubkey: alice, created_at: T - 10 + i }));
    let s = await openStore({ dir, mapSize: MAP });
    for (const e of notes) await put(s, e);
    // what a kill after the request's own transaction leaves: the tombstone, marked, and the events
    s.env.transactionSync(() => storeDbs(s).tombVanish.putSync(vanishKey(alice), vanishValue({ upTo: T, pending: true })));
    await s.close();
    const reader = await openStore({ dir, mapSize: MAP, readOnly: true });
    const r = await verifyStore(reader.env, storeDbs(reader));
    assert.equal(r.vanish.covered, notes.length, 'verify sees the events the request covers');
    assert.ok(r.meta.some((m) => m.key === `vanish ${alice}`), 'and the request marked as being applied');
    await reader.close();
    s = await openStore({ dir, mapSize: MAP });
    assert.deepEqual(await ids(s, [{ authors: [alice] }]), []);
    await clean(s);
    await s.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('an import (held-back index entries) deletes what a request covers once it has merged them', async () => {
  const dir = tmpDir();
  try {
    const alice = hex();
    const old = [ev({ pubkey: alice, created_at: T - 5 }), ev({ pubkey: alice, kind: 3, created_at: T - 4, tags: [['p', hex()], ['p', hex()]] }), wrap(alice, T - 3)];
    let s = await openStore({ dir, mapSize: MAP, spool: { edges: 10_000, indexBytes: 1 << 20 } });
    for (const e of old) assert.equal((await put(s, e)).status, 'stored');
    assert.equal((await put(s, vanish(alice, T))).status, 'stored');
    // already refused before the merge
    assert.equal((await put(s, ev({ pubkey: alice, created_at: T - 1 }))).status, 'deleted');
    await s.close();
    s = await openStore({ dir, mapSize: MAP });
    assert.deepEqual((await ids(s, [{ authors: [alice] }])).length, 1);
    assert.deepEqual(await ids(s, [{ kinds: [1059] }]), []);
    await clean(s);
    await s.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
