// Every storage rule the writer decides inside its transaction.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ev, hex, idWithRank, ids, put, withStore } from './helpers.js';

const NOW = Math.floor(Date.now() / 1000);

test('dedupe: a second copy is a duplicate, ok true, "duplicate:" prefix', () =>
  withStore(async (s) => {
    const e = ev();
    const first = await put(s, e);
    assert.deepEqual(first, { status: 'stored', ok: true, message: '', serial: first.serial });
    assert.ok(Number.isInteger(first.serial) && first.serial! > 0, 'a stored event reports its serial');
    const r = await put(s, e);
    assert.equal(r.status, 'duplicate');
    assert.equal(r.ok, true);
    assert.match(r.message, /^duplicate:/);
    // also inside one batch (written in the same turn)
    const f = ev();
    const [a, b] = await Promise.all([put(s, f), put(s, f)]);
    assert.deepEqual([a.status, b.status], ['stored', 'duplicate']);
    assert.equal(s.stats().events, 2);
  }));

test('replaceable: newest per (kind, pubkey) is kept; the old version is removed', () =>
  withStore(async (s) => {
    const pk = hex();
    const old = ev({ kind: 0, pubkey: pk, created_at: 1000 });
    const newer = ev({ kind: 0, pubkey: pk, created_at: 1500 });
    await put(s, old);
    const r = await put(s, newer);
    assert.equal(r.status, 'stored');
    assert.deepEqual(r.removed, [old.id]);
    assert.deepEqual(await ids(s, [{ kinds: [0], authors: [pk] }]), [newer.id]);
    const r2 = await put(s, ev({ kind: 0, pubkey: pk, created_at: 1200 }));
    assert.equal(r2.status, 'replaced');
    assert.equal(r2.ok, false);
    assert.match(r2.message, /^blocked: /);
    // other kinds of the same author and other authors are independent
    await put(s, ev({ kind: 3, pubkey: pk, created_at: 900 }));
    await put(s, ev({ kind: 10002, pubkey: pk, created_at: 900 }));
    await put(s, ev({ kind: 0, created_at: 900 }));
    assert.equal((await ids(s, [{ kinds: [0, 3, 10002] }])).length, 4);
    assert.equal(s.get(old.id), undefined);
    assert.equal(s.stats().indexes.addr, 4);
  }));

test('replaceable lookups by address (remembered per store handle) follow every new version, deletion and removal', () =>
  withStore(async (s) => {
    const pks = [hex(), hex(), hex()];
    const q = () => ids(s, [{ kinds: [0, 10002], authors: pks }]);
    const v1 = pks.map((pubkey) => ev({ kind: 10002, pubkey, created_at: 1000 }));
    for (const e of v1) await put(s, e);
    assert.deepEqual(new Set(await q()), new Set(v1.map((e) => e.id)));
    assert.deepEqual(new Set(await q()), new Set(v1.map((e) => e.id)), 'asked again: the same');
    // a new version of the first, a kind 0 for the second, the third deleted (NIP-09 a tag)
    const v2 = ev({ kind: 10002, pubkey: pks[0], created_at: 1100 });
    await put(s, v2);
    const profile = ev({ kind: 0, pubkey: pks[1], created_at: 1100 });
    await put(s, profile);
    await put(s, ev({ kind: 5, pubkey: pks[2], created_at: 1200, tags: [['a', `10002:${pks[2]}:`]] }));
    assert.deepEqual(new Set(await q()), new Set([v2.id, v1[1]!.id, profile.id]));
    // removed by the operator, then a version older than the removed one may come back
    assert.equal(await s.remove(v2.id), true);
    assert.deepEqual(new Set(await q()), new Set([v1[1]!.id, profile.id]));
    const back = ev({ kind: 10002, pubkey: pks[0], created_at: 1050 });
    await put(s, back);
    assert.deepEqual(new Set(await q()), new Set([back.id, v1[1]!.id, profile.id]));
  }));

test('replaceable: equal created_at keeps the lower id, whichever arrives first', () =>
  withStore(async (s) => {
    const pk = hex();
    const low = ev({ kind: 10002, pubkey: pk, created_at: 2000, id: idWithRank(0x10) });
    const high = ev({ kind: 10002, pubkey: pk, created_at: 2000, id: idWithRank(0x20) });
    await put(s, high);
    const r = await put(s, low);
    assert.equal(r.status, 'stored');
    assert.deepEqual(r.removed, [high.id]);
    assert.equal((await put(s, ev({ ...high, id: idWithRank(0x30) }))).status, 'replaced');
    assert.deepEqual(await ids(s, [{ authors: [pk] }]), [low.id]);

    const pk2 = hex();
    const low2 = ev({ kind: 0, pubkey: pk2, created_at: 5, id: idWithRank(1) });
    await put(s, low2);
    assert.equal((await put(s, ev({ kind: 0, pubkey: pk2, created_at: 5, id: idWithRank(2) }))).status, 'replaced');
  }));

test('replaceable: versions in one batch are decided in order against each other', () =>
  withStore(async (s) => {
    const pk = hex();
    const vs = [1000, 3000, 2000, 3000].map((t, i) => ev({ kind: 3, pubkey: pk, created_at: t, id: idWithRank(0x50 - i) }));
    const rs = await Promise.all(vs.map((e) => put(s, e)));
    assert.deepEqual(rs.map((r) => r.status), ['stored', 'stored', 'replaced', 'stored']);
    assert.deepEqual(rs[1].removed, [vs[0].id]);
    assert.deepEqual(rs[3].removed, [vs[1].id], 'equal created_at, lower id wins');
    assert.deepEqual(await ids(s, [{ kinds: [3] }]), [vs[3].id]);
  }));

test('addressable: newest per (kind, pubkey, d); no d tag equals an empty d; the first d counts', () =>
  withStore(async (s) => {
    const pk = hex();
    const a1 = ev({ kind: 30023, pubkey: pk, created_at: 100, tags: [['d', 'article']] });
    const b1 = ev({ kind: 30023, pubkey: pk, created_at: 100, tags: [['d', 'other']] });
    await put(s, a1);
    await put(s, b1);
    const a2 = ev({ kind: 30023, pubkey: pk, created_at: 200, tags: [['d', 'article'], ['d', 'other']] });
    assert.deepEqual((await put(s, a2)).removed, [a1.id]);
    assert.equal((await put(s, ev({ kind: 30023, pubkey: pk, created_at: 150, tags: [['d', 'article']] }))).status, 'replaced');

    const none = ev({ kind: 30000, pubkey: pk, created_at: 10, tags: [] });
    const empty = ev({ kind: 30000, pubkey: pk, created_at: 20, tags: [['d', '']] });
    const bare = ev({ kind: 30000, pubkey: pk, created_at: 30, tags: [['d']] });
    await put(s, none);
    assert.deepEqual((await put(s, empty)).removed, [none.id]);
    assert.deepEqual((await put(s, bare)).removed, [empty.id]);
    // a different kind or author is a different address
    await put(s, ev({ kind: 30001, pubkey: pk, created_at: 1, tags: [['d', 'article']] }));
    await put(s, ev({ kind: 30023, created_at: 1, tags: [['d', 'article']] }));
    assert.deepEqual(new Set(await ids(s, [{ kinds: [30023, 30000, 30001] }])).size, 5);
  }));

test('NIP-09 e tag: deletes the author\'s own event and reports it removed', () =>
  withStore(async (s) => {
    const pk = hex();
    const target = ev({ pubkey: pk });
    const other = ev({ pubkey: pk });
    await put(s, target);
    await put(s, other);
    const del = ev({ kind: 5, pubkey: pk, tags: [['e', target.id], ['e', target.id]] });
    const r = await put(s, del);
    assert.equal(r.status, 'stored');
    assert.deepEqual(r.removed, [target.id]);
    assert.deepEqual(new Set(await ids(s, [{ authors: [pk] }])), new Set([other.id, del.id]), 'the deletion itself is stored');
    assert.equal(s.get(target.id), undefined);
    // re-publishing the deleted event is blocked
    const again = await put(s, target);
    assert.equal(again.status, 'deleted');
    assert.equal(again.ok, false);
    assert.match(again.message, /^blocked: /);
    assert.equal(s.stats().indexes.tagkind, 1, 'only the deletion\'s e tag entry is left');
  }));

test('NIP-09 e tag: another author\'s event is neither deleted nor blocked', () =>
  withStore(async (s) => {
    const victim = ev();
    const attacker = hex();
    await put(s, victim);
    const r = await put(s, ev({ kind: 5, pubkey: attacker, tags: [['e', victim.id]] }));
    assert.equal(r.removed, undefined);
    assert.ok(s.get(victim.id));
    // deletion by another author BEFORE the event arrives does not block it either
    const later = ev();
    await put(s, ev({ kind: 5, pubkey: attacker, tags: [['e', later.id]] }));
    assert.equal((await put(s, later)).status, 'stored');
  }));

test('NIP-09: a deletion arriving before its target blocks the target from that author', () =>
  withStore(async (s) => {
    const pk = hex();
    const target = ev({ pubkey: pk });
    const del = ev({ kind: 5, pubkey: pk, tags: [['e', target.id]] });
    const r = await put(s, del);
    assert.equal(r.removed, undefined);
    const t = await put(s, target);
    assert.equal(t.status, 'deleted');
    assert.equal(t.ok, false);
    assert.deepEqual(await ids(s, [{ authors: [pk] }]), [del.id]);
    // and in one batch: deletion first, then the target
    const t2 = ev({ pubkey: pk });
    const rs = await Promise.all([put(s, ev({ kind: 5, pubkey: pk, tags: [['e', t2.id]] })), put(s, t2)]);
    assert.deepEqual(rs.map((x) => x.status), ['stored', 'deleted']);
    // target first, then the deletion, in one batch
    const t3 = ev({ pubkey: pk });
    const rs3 = await Promise.all([put(s, t3), put(s, ev({ kind: 5, pubkey: pk, tags: [['e', t3.id]] }))]);
    assert.deepEqual(rs3.map((x) => x.status), ['stored', 'stored']);
    assert.deepEqual(rs3[1].removed, [t3.id]);
    assert.equal(s.get(t3.id), undefined);
  }));

test('NIP-09: deleting a deletion has no effect, before or after it is stored', () =>
  withStore(async (s) => {
    const pk = hex();
    const target = ev({ pubkey: pk });
    await put(s, target);
    const del1 = ev({ kind: 5, pubkey: pk, tags: [['e', target.id]] });
    await put(s, del1);
    const del2 = ev({ kind: 5, pubkey: pk, tags: [['e', del1.id]] });
    const r = await put(s, del2);
    assert.equal(r.removed, undefined);
    assert.ok(s.get(del1.id), 'the first deletion is still stored');
    // the target stays deleted
    assert.equal((await put(s, target)).status, 'deleted');
    // a deletion referencing a kind 5 that arrives later: the later kind 5 is stored
    const del4 = ev({ kind: 5, pubkey: pk, tags: [] });
    await put(s, ev({ kind: 5, pubkey: pk, tags: [['e', del4.id]] }));
    assert.equal((await put(s, del4)).status, 'stored');
  }));

test('NIP-09: a deletion may reference itself and is stored', () =>
  withStore(async (s) => {
    const pk = hex();
    const id = hex();
    const self = ev({ id, kind: 5, pubkey: pk, tags: [['e', id]] });
    const r = await put(s, self);
    assert.equal(r.status, 'stored');
    assert.equal(r.removed, undefined);
    assert.ok(s.get(id));
  }));

test('NIP-09 a tag: deletes versions up to the deletion\'s created_at and blocks them later', () =>
  withStore(async (s) => {
    const pk = hex();
    const addr = (d: string): string => `30023:${pk}:${d}`;
    const v1 = ev({ kind: 30023, pubkey: pk, created_at: 1000, tags: [['d', 'a']] });
    await put(s, v1);
    const del = ev({ kind: 5, pubkey: pk, created_at: 1000, tags: [['a', addr('a')]] });
    assert.deepEqual((await put(s, del)).removed, [v1.id], 'created_at equal to the deletion is covered');
    // older or equal versions are blocked, newer allowed
    assert.equal((await put(s, ev({ kind: 30023, pubkey: pk, created_at: 999, tags: [['d', 'a']] }))).status, 'deleted');
    assert.equal((await put(s, ev({ kind: 30023, pubkey: pk, created_at: 1000, tags: [['d', 'a']] }))).status, 'deleted');
    const v3 = ev({ kind: 30023, pubkey: pk, created_at: 1001, tags: [['d', 'a']] });
    assert.equal((await put(s, v3)).status, 'stored');
    // a deletion older than the stored version does not delete it; the max deletion time is kept
    const oldDel = ev({ kind: 5, pubkey: pk, created_at: 500, tags: [['a', addr('a')]] });
    assert.equal((await put(s, oldDel)).removed, undefined);
    assert.ok(s.get(v3.id));
    assert.equal((await put(s, ev({ kind: 30023, pubkey: pk, created_at: 1000, tags: [['d', 'a']] }))).status, 'deleted', 'still bound by 1000, not 500');
    // deletion before any version exists
    await put(s, ev({ kind: 5, pubkey: pk, created_at: 2000, tags: [['a', addr('b')]] }));
    assert.equal((await put(s, ev({ kind: 30023, pubkey: pk, created_at: 1999, tags: [['d', 'b']] }))).status, 'deleted');
    assert.equal((await put(s, ev({ kind: 30023, pubkey: pk, created_at: 2001, tags: [['d', 'b']] }))).status, 'stored');
    // replaceable kinds can be addressed too (empty d)
    const meta = ev({ kind: 0, pubkey: pk, created_at: 10 });
    await put(s, meta);
    assert.deepEqual((await put(s, ev({ kind: 5, pubkey: pk, created_at: 10, tags: [['a', `0:${pk}:`]] }))).removed, [meta.id]);
  }));

test('NIP-09 a tag: another author\'s address is ignored', () =>
  withStore(async (s) => {
    const owner = hex();
    const v = ev({ kind: 30023, pubkey: owner, created_at: 100, tags: [['d', 'x']] });
    await put(s, v);
    const r = await put(s, ev({ kind: 5, created_at: 200, tags: [['a', `30023:${owner}:x`]] }));
    assert.equal(r.removed, undefined);
    assert.ok(s.get(v.id));
    assert.equal((await put(s, ev({ kind: 30023, pubkey: owner, created_at: 150, tags: [['d', 'x']] }))).status, 'stored');
    assert.equal(s.stats().indexes.tombAddr, 0);
  }));

test('NIP-40: an already expired event is refused as invalid', () =>
  withStore(async (s) => {
    const r = await put(s, ev({ tags: [['expiration', String(NOW - 10)]] }));
    assert.deepEqual(r, { status: 'invalid', ok: false, message: 'invalid: event has expired' });
    assert.equal((await put(s, ev({ tags: [['expiration', String(NOW + 3600)]] }))).status, 'stored');
    assert.equal(s.stats().indexes.expiry, 1);
  }));

test('remove(): deletes and bans the id; unknown ids return false but are banned', () =>
  withStore(async (s) => {
    const e = ev({ kind: 30023, tags: [['d', 'x'], ['t', 'tag']] });
    await put(s, e);
    assert.equal(await s.remove(e.id), true);
    assert.equal(s.get(e.id), undefined);
    const st = s.stats();
    assert.equal(st.events, 0);
    for (const [name, n] of Object.entries(st.indexes)) if (name !== 'tombId') assert.equal(n, 0, name);
    assert.equal((await put(s, e)).status, 'deleted');
    assert.equal(await s.remove(e.id), false);
    const unseen = ev();
    assert.equal(await s.remove(unseen.id), false);
    assert.equal((await put(s, unseen)).status, 'deleted');
  }));
