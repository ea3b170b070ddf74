// orbweaver verify on a real store: a store written by the writer (notes with tags, reactions,
// follow and mute lists replaced, profiles, addressable events, an expiring event, deletions)
// verifies clean; each kind of corruption planted with direct LMDB writes is reported as what it is,
// in the index it is in, and nowhere else; a repair rebuilds the indexes from the events, after which
// verify is clean and every query answers as before.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { NostrEvent } from '../../../src/nostr/event.js';
import type { Filter } from '../../../src/nostr/filter.js';
import { parseSearch } from '../../../src/nostr/search.js';
import { decodeCounter, encodeCounter } from '../../../src/store/counters.js';
import { encodeValue } from '../../../src/store/codec.js';
import { edgeKey, kindIdKey, listTimeKey, pubkeyId } from '../../../src/store/graph.js';
import { expiryKey, idKey, serialKey, tagKindPrefix, u32, tagPrefix, withSuffix } from '../../../src/store/keys.js';
import { storeDbs, type Dbs } from '../../../src/store/schema.js';
import type { EventStore } from '../../../src/store/types.js';
import { repairStore } from '../../../src/commands/check/repair.js';
import { verifyStore, type IndexCheck, type VerifyReport } from '../../../src/commands/check/verify.js';
import { ev, hex, put, Q, withStore } from '../../store/helpers.js';

const dbsOf = (store: EventStore): Dbs => (store as unknown as { dbs: Dbs }).dbs;
const verify = (store: EventStore): Promise<VerifyReport> => verifyStore(store.env, storeDbs(store));
const index = (r: VerifyReport, name: string): IndexCheck => r.indexes.find((x) => x.name === name)!;
const T = 1_700_000_000;
const now = () => Math.floor(Date.now() / 1000);

/** Every index with a difference, as name -> [missing, extra, wrong]. */
function differing(r: VerifyReport): Record<string, [number, number, number]> {
  const out: Record<string, [number, number, number]> = {};
  for (const x of r.indexes) if (x.missing + x.extra + x.wrong > 0) out[x.name] = [x.missing, x.extra, x.wrong];
  return out;
}

interface World {
  alice: string;
  bob: string;
  carol: string;
  followed: string[];
  note: NostrEvent;
  taggedNote: NostrEvent;
  profile: NostrEvent;
  events: NostrEvent[];
}

/** A store of every sort of event, replacements and deletions included. */
async function populate(store: EventStore): Promise<World> {
  const [alice, bob, carol] = [hex(), hex(), hex()];
  const followed = Array.from({ length: 12 }, () => hex());
  const events: NostrEvent[] = [];
  const w = async (e: NostrEvent): Promise<NostrEvent> => {
    const r = await put(store, e);
    assert.equal(r.status, 'stored', `${e.kind}: ${r.message}`);
    events.push(e);
    return e;
  };
  const note = await w(ev({ pubkey: alice, created_at: T, content: 'first note', tags: [['t', 'nostr'], ['p', bob]] }));
  const taggedNote = await w(ev({ pubkey: bob, created_at: T + 1, content: 'a reply', tags: [['e', note.id], ['p', alice], ['t', 'nostr'], ['t', 'relay'], ['subject', 'long tag names are not indexed']] }));
  for (let i = 0; i < 5; i++) await w(ev({ kind: 7, created_at: T + 2 + i, content: '+', tags: [['e', note.id], ['p', alice]] }));
  await w(ev({ kind: 6, created_at: T + 8, content: '', tags: [['e', note.id], ['p', alice]] }));
  await w(ev({ pubkey: carol, created_at: T + 9, content: 'quoting', tags: [['q', note.id], ['e', taggedNote.id]] }));
  // follow lists, replaced: the replaced versions leave the graph
  for (const [i, author] of [alice, bob, carol].entries()) {
    await w(ev({ kind: 3, pubkey: author, created_at: T + 10 + i, tags: followed.slice(i, i + 6).map((p) => ['p', p]) }));
    await w(ev({ kind: 3, pubkey: author, created_at: T + 20 + i, tags: [...followed.slice(i + 1, i + 8).map((p) => ['p', p]), ['p', 'not-a-pubkey'], ['t', 'follows']] }));
  }
  await w(ev({ kind: 10000, pubkey: alice, created_at: T + 30, tags: [['p', followed[0]!], ['p', followed[1]!]] }));
  await w(ev({ kind: 10000, pubkey: alice, created_at: T + 31, tags: [['p', followed[1]!], ['p', followed[2]!], ['word', 'spam']] }));
  // profiles, one replaced (the search index holds the current one)
  await w(ev({ kind: 0, pubkey: alice, created_at: T + 40, content: JSON.stringify({ name: 'alice old', about: 'before' }) }));
  const profile = await w(ev({ kind: 0, pubkey: alice, created_at: T + 41, content: JSON.stringify({ name: 'alice', about: 'relay operator', nip05: 'alice@example.com' }) }));
  await w(ev({ kind: 0, pubkey: bob, created_at: T + 42, content: JSON.stringify({ name: 'bob', about: 'builds things' }) }));
  // addressable events, one replaced
  await w(ev({ kind: 30023, pubkey: bob, created_at: T + 50, tags: [['d', 'post-1'], ['t', 'long']], content: 'draft' }));
  await w(ev({ kind: 30023, pubkey: bob, created_at: T + 51, tags: [['d', 'post-1'], ['t', 'long']], content: 'final' }));
  await w(ev({ kind: 30023, pubkey: bob, created_at: T + 52, tags: [['d', 'post-2']], content: 'another' }));
  // an expiring event, and a deletion of a note by id and of an address
  await w(ev({ pubkey: carol, created_at: T + 60, tags: [['expiration', String(now() + 3600)], ['t', 'soon']] }));
  const doomed = await w(ev({ pubkey: carol, created_at: T + 61, tags: [['t', 'doomed']] }));
  await w(ev({ kind: 5, pubkey: carol, created_at: T + 62, tags: [['e', doomed.id]] }));
  await w(ev({ kind: 30023, pubkey: carol, created_at: T + 63, tags: [['d', 'gone']] }));
  await w(ev({ kind: 5, pubkey: carol, created_at: T + 64, tags: [['a', `30023:${carol}:gone`]] }));
  return { alice, bob, carol, followed, note, taggedNote, profile, events };
}

/** The answers the test compares before the corruption and after the repair. */
async function answers(store: EventStore, wd: World): Promise<unknown[]> {
  const filters: Filter[][] = [
    [{ kinds: [1], limit: 100 }],
    [{ authors: [wd.alice] }],
    [{ authors: [wd.bob, wd.carol], limit: 100 }],
    [{ kinds: [3], tags: [['p', [wd.followed[3]!]]] }],
    [{ kinds: [10000], tags: [['p', [wd.followed[2]!]]] }],
    [{ kinds: [7], tags: [['e', [wd.note.id]]] }],
    [{ tags: [['t', ['nostr']]] }],
    [{ kinds: [30023], authors: [wd.bob] }],
    [{ kinds: [0] }],
    [{ ids: wd.events.map((e) => e.id) }],
    [{ kinds: [0], search: parseSearch('alice') }],
    [{ since: T + 20, until: T + 45 }],
  ];
  const out: unknown[] = [];
  for (const f of filters) out.push(await store.query(f, Q));
  for (const f of [{ kinds: [3], tags: [['p', [wd.followed[4]!]]] }, { kinds: [7], tags: [['e', [wd.note.id]]] }, { kinds: [1], tags: [['q', [wd.note.id]]] }] as Filter[]) {
    out.push(await store.count([f]));
  }
  return out;
}

test('a store written by the writer verifies clean; each planted corruption is reported where it is; --repair rebuilds and answers are unchanged', async () => {
  await withStore(async (store) => {
    const wd = await populate(store);
    const clean = await verify(store);
    assert.deepEqual(differing(clean), {}, JSON.stringify(clean.indexes.filter((x) => x.samples.length), null, 1));
    assert.equal(clean.clean, true);
    assert.equal(clean.duplicates.count, 0);
    assert.deepEqual(clean.meta, []);
    assert.ok(index(clean, 'graph').entries > 0 && index(clean, 'searchKeys').entries > 0 && index(clean, 'expiry').entries === 1 && index(clean, 'tagcount').entries > 0);
    const before = await answers(store, wd);

    const dbs = dbsOf(store);
    const serialOf = (id: string): number => dbs.id.getBinary(idKey(id))!.readUIntBE(0, 5);
    const noteSerial = serialOf(wd.note.id);
    // 1. a missing tag+kind entry: the note's #t nostr
    const missingTag = withSuffix(tagKindPrefix(tagPrefix('t', 'nostr').prefix, 1), wd.note.created_at, noteSerial);
    // 2. a dangling tag+kind entry: a serial no event has
    const danglingTag = withSuffix(tagKindPrefix(tagPrefix('t', 'ghost').prefix, 1), T, 999_999);
    // 3. a wrong counter: the note's reactions
    const reactions = tagKindPrefix(tagPrefix('e', wd.note.id).prefix, 7);
    // 4. a missing graph edge: bob's current follow list follows followed[2]
    const bobId = pubkeyId(dbs, wd.bob)!;
    const missingEdge = edgeKey(3, pubkeyId(dbs, wd.followed[2]!)!, bobId);
    // 5. an extra graph edge: carol does not follow followed[0] (her lists start at followed[2])
    const carolId = pubkeyId(dbs, wd.carol)!;
    const extraEdge = edgeKey(3, pubkeyId(dbs, wd.followed[0]!)!, carolId);
    // 6. a wrong graphcur entry: alice's current follow list with another created_at
    const aliceCur = kindIdKey(3, pubkeyId(dbs, wd.alice)!);
    // 7. a missing id entry: the reply
    const missingId = idKey(wd.taggedNote.id);
    // 8. a wrong search document: alice's profile's
    const aliceDoc = serialKey(serialOf(wd.profile.id));
    // 9. a missing expiry entry
    const expiring = wd.events.find((e) => e.tags.some((t) => t[0] === 'expiration'))!;
    const missingExpiry = expiryKey(Number(expiring.tags[0]![1]), serialOf(expiring.id));
    // 10. bob's current follow list in graphtime under another time: one missing entry, one extra
    const bobCur = dbs.graph.graphcur.getBinary(kindIdKey(3, bobId))!;
    const bobTime = listTimeKey(3, bobCur.readUInt32BE(0), bobCur.readUIntBE(4, 5));
    const bobWrongTime = listTimeKey(3, bobCur.readUInt32BE(0) - 3, bobCur.readUIntBE(4, 5));
    store.env.transactionSync(() => {
      assert.ok(dbs.tagkind.removeSync(missingTag));
      dbs.tagkind.putSync(danglingTag, Buffer.alloc(0));
      const c = decodeCounter(dbs.tagcount.getBinary(reactions)!);
      assert.equal(c.count, 5);
      dbs.tagcount.putSync(reactions, encodeCounter({ ...c, count: 8 }));
      assert.ok(dbs.graph.graph.removeSync(missingEdge));
      assert.equal(dbs.graph.graph.doesExist(extraEdge), false);
      dbs.graph.graph.putSync(extraEdge, Buffer.alloc(0));
      const cur = Buffer.from(dbs.graph.graphcur.getBinary(aliceCur)!);
      cur.writeUInt32BE(cur.readUInt32BE(0) - 7, 0);
      dbs.graph.graphcur.putSync(aliceCur, cur);
      assert.ok(dbs.id.removeSync(missingId));
      assert.ok(dbs.search!.docs.doesExist(aliceDoc));
      dbs.search!.docs.putSync(aliceDoc, Buffer.from('{"n":"mallory"}'));
      assert.ok(dbs.expiry.removeSync(missingExpiry));
      assert.ok(dbs.graph.graphtime.removeSync(bobTime));
      dbs.graph.graphtime.putSync(bobWrongTime, u32(bobId));
    });

    const r = await verify(store);
    assert.equal(r.clean, false);
    // each where it is, and nothing anywhere else (the counters of the missing and extra follows are right)
    assert.deepEqual(differing(r), {
      id: [1, 0, 0],
      tagkind: [1, 1, 0],
      tagcount: [0, 0, 1],
      graph: [1, 1, 0],
      graphcur: [0, 0, 1],
      graphtime: [1, 1, 0],
      searchDocs: [0, 0, 1],
      expiry: [1, 0, 0],
    }, JSON.stringify(r.indexes.filter((x) => x.samples.length), null, 1));
    const sample = (name: string, problem: string) => index(r, name).samples.filter((s) => s.problem === problem).map((s) => s.key);
    assert.deepEqual(sample('id', 'missing'), [missingId.toString('hex')]);
    assert.deepEqual(sample('tagkind', 'missing'), [missingTag.toString('hex')]);
    assert.deepEqual(sample('tagkind', 'extra'), [danglingTag.toString('hex')]);
    assert.match(index(r, 'tagkind').samples.find((s) => s.problem === 'extra')!.detail, /no stored event at serial 999999/);
    assert.deepEqual(sample('tagcount', 'wrong'), [reactions.toString('hex')]);
    assert.match(index(r, 'tagcount').samples[0]!.detail, /counts 8, 5 stored events/);
    assert.deepEqual(sample('graph', 'missing'), [missingEdge.toString('hex')]);
    assert.deepEqual(sample('graph', 'extra'), [extraEdge.toString('hex')]);
    assert.deepEqual(sample('graphcur', 'wrong'), [aliceCur.toString('hex')]);
    assert.deepEqual(sample('graphtime', 'missing'), [bobTime.toString('hex')]);
    assert.deepEqual(sample('graphtime', 'extra'), [bobWrongTime.toString('hex')]);
    assert.deepEqual(sample('searchDocs', 'wrong'), [aliceDoc.toString('hex')]);
    assert.deepEqual(sample('expiry', 'missing'), [missingExpiry.toString('hex')]);
    assert.equal(index(r, 'tagkind').entries, index(clean, 'tagkind').entries);
    assert.equal(index(r, 'tagkind').expected, index(clean, 'tagkind').expected);

    const rep = await repairStore(store.env, storeDbs(store), { batch: 7 });
    assert.deepEqual(rep.removed, []);
    assert.equal(rep.pubkeyIds.rebuilt, false);
    const after = await verify(store);
    assert.deepEqual(differing(after), {}, JSON.stringify(after.indexes.filter((x) => x.samples.length), null, 1));
    assert.equal(after.clean, true);
    for (const x of clean.indexes) assert.equal(index(after, x.name).entries, x.entries, `entries of ${x.name} after the repair`);
    assert.deepEqual(await answers(store, wd), before);
  });
});

test('two stored versions of one address and a broken pubkey id map are reported; the repair keeps the version the rules keep', async () => {
  await withStore(async (store) => {
    const wd = await populate(store);
    const before = await answers(store, wd);
    const dbs = dbsOf(store);
    // an older version of alice's profile, stored beside the current one under a new serial
    const old = ev({ kind: 0, pubkey: wd.alice, created_at: wd.profile.created_at - 5, content: JSON.stringify({ name: 'alice older' }) });
    const next = (dbs.meta.get('nextSerial') as number);
    const pkAlice = Buffer.from(wd.alice, 'hex');
    store.env.transactionSync(() => {
      dbs.events.putSync(serialKey(next), encodeValue(old, JSON.stringify(old), null));
      dbs.id.putSync(idKey(old.id), serialKey(next));
      dbs.meta.putSync('nextSerial', next + 1);
      // and an id of idpk gone
      const id = dbs.graph.pkid.getBinary(pkAlice)!;
      assert.ok(dbs.graph.idpk.removeSync(id));
    });
    const r = await verify(store);
    assert.equal(r.clean, false);
    assert.equal(r.duplicates.count, 1);
    assert.equal(r.duplicates.samples[0]!.what, 'address');
    assert.equal(r.duplicates.samples[0]!.serial, next);
    assert.equal(index(r, 'idpk').missing, 1);
    const rep = await repairStore(store.env, storeDbs(store));
    assert.deepEqual(rep.removed.map((x) => x.id), [old.id]);
    assert.equal(rep.pubkeyIds.rebuilt, true);
    const after = await verify(store);
    assert.deepEqual(differing(after), {}, JSON.stringify(after.indexes.filter((x) => x.samples.length), null, 1));
    assert.equal(after.clean, true);
    assert.deepEqual(await answers(store, wd), before);
  });
});

test('an expired event not swept yet is still counted by its counter: verify stays clean', async () => {
  await withStore(async (store) => {
    const note = ev({ created_at: T });
    await put(store, note);
    const r = await put(store, ev({ kind: 7, tags: [['e', note.id], ['expiration', String(now() + 1)]] }));
    assert.equal(r.status, 'stored');
    await new Promise((resolve) => setTimeout(resolve, 2100));
    assert.equal(await store.count([{ kinds: [7], tags: [['e', [note.id]]] }]), 0);
    const v = await verify(store);
    assert.deepEqual(differing(v), {});
    assert.equal(v.clean, true);
  });
});

test('a counter gone, with its index exact, is found by reading the index: missing, and nothing else differs', async () => {
  await withStore(async (store) => {
    const wd = await populate(store);
    const dbs = dbsOf(store);
    const quotes = tagKindPrefix(tagPrefix('q', wd.note.id).prefix, 1);
    const followers = tagKindPrefix(tagPrefix('p', wd.followed[4]!).prefix, 3);
    store.env.transactionSync(() => {
      assert.ok(dbs.tagcount.removeSync(quotes));
      assert.ok(dbs.tagcount.removeSync(followers));
    });
    const r = await verify(store);
    assert.deepEqual(differing(r), { tagcount: [2, 0, 0] }, JSON.stringify(r.indexes.filter((x) => x.samples.length), null, 1));
    assert.deepEqual(index(r, 'tagcount').samples.map((s) => s.key).sort(), [quotes.toString('hex'), followers.toString('hex')].sort());
    assert.equal(index(r, 'tagcount').expected, index(r, 'tagcount').entries + 2);
    await repairStore(store.env, storeDbs(store));
    assert.equal((await verify(store)).clean, true);
    assert.equal(await store.count([{ kinds: [3], tags: [['p', [wd.followed[4]!]]] }]), 3);
  });
});
