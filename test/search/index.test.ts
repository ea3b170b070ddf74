// The search index in the store against a brute-force matcher on generated profiles: every result
// matches, nothing better is missing, exact names first; replaced, deleted, expired and banned
// profiles leave the index; the index persists across reopen and is rebuilt once when its format or
// search.kinds changes; a very common term costs no more than search.maxPostings.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { openStore, type EventStore } from '../../src/store/index.js';
import { parseFilter, type Filter } from '../../src/nostr/filter.js';
import { docKeys, searchDoc } from '../../src/nostr/search.js';
import { openDbs } from '../../src/store/schema.js';
import { SEARCH_META_KEY } from '../../src/store/search/rebuild.js';
import type { NostrEvent } from '../../src/nostr/event.js';
import { prng as rng, profile, type Profile } from '../../bench/lib/profiles.js';
import { ev, put, tmpDir } from '../store/helpers.js';
import { bruteTier, pieces } from './brute.js';

const N = 1200;
const LIMITS = [5, 20, 500];

interface Live {
  ev: NostrEvent;
  p: Profile;
}

const sf = (search: string, limit: number, extra: object = {}): Filter => parseFilter({ kinds: [0], search, limit, ...extra }, { maxFilterValues: 5000, maxTagFilters: 16, searchKinds: [0] });

async function search(store: EventStore, q: string, limit: number): Promise<NostrEvent[]> {
  return (await store.query([sf(q, limit)], { defaultLimit: 500, maxLimit: 500 })).map((j) => JSON.parse(j) as NostrEvent);
}

/** Queries people type, taken from the profiles: prefixes of name words, whole names, pieces of CJK names, about words, domains. */
function queries(live: Live[], seed: number, n: number): string[] {
  const r = rng(seed);
  const pick = <T>(xs: T[]): T => xs[Math.floor(r() * xs.length)];
  const out: string[] = ['a', 'ali', 'alice', 'ALICE', 'Zoe', 'zoë', 'さとし', 'さと', 'し', '山田', 'strasse', 'garcia', 'bitcoin', 'cafe', 'café', 'ивано', 'Ελένη', 'domain:iris.to', 'ali domain:example.com', 'alice smith', 'smith alice', 'sm al', 'nothing-like-this', 'lice', 'include:spam bob', 'language:en'];
  while (out.length < n) {
    const { p } = pick(live);
    const kind = Math.floor(r() * 6);
    const name = p.display_name ?? p.name ?? p.nip05 ?? '';
    if (kind === 0 && name) out.push(name);
    else if (kind === 1 && p.nip05) out.push(p.nip05);
    else if (kind === 5 && p.nip05) out.push(`${pieces(name).words[0] ?? ''} domain:${p.nip05.split('@').pop()}`.trim());
    else {
      const src = pieces(kind === 4 && p.about ? p.about : name);
      if (src.runs.length > 0 && r() < 0.5) {
        const run = Array.from(pick(src.runs));
        const a = Math.floor(r() * run.length);
        out.push(run.slice(a, a + 1 + Math.floor(r() * (run.length - a))).join(''));
      } else if (src.words.length > 0) {
        const w = Array.from(pick(src.words));
        const prefix = w.slice(0, 1 + Math.floor(r() * w.length)).join('');
        out.push(r() < 0.3 ? prefix.toUpperCase() : prefix);
      }
    }
  }
  return out;
}

/** The checks of one query against the brute force over the current profiles. */
async function check(store: EventStore, live: Map<string, Live>, q: string, limit: number): Promise<void> {
  const want = new Map<string, number>();
  for (const l of live.values()) {
    const t = bruteTier(q, l.p);
    if (t >= 0) want.set(l.ev.id, t);
  }
  const got = await search(store, q, limit);
  const what = `search ${JSON.stringify(q)} limit ${limit}`;
  let last = 0;
  for (const e of got) {
    const t = want.get(e.id);
    assert.ok(t !== undefined, `${what}: result ${e.content} does not match`);
    assert.ok(t >= last, `${what}: result ${e.content} (tier ${t}) after a tier ${last} result`);
    last = t;
  }
  assert.equal(new Set(got.map((e) => e.id)).size, got.length, `${what}: duplicates`);
  if (want.size <= limit) {
    assert.equal(got.length, want.size, `${what}: ${want.size} matches, ${got.length} returned`);
  } else {
    assert.equal(got.length, limit, `${what}: more matches than the limit`);
    const ids = new Set(got.map((e) => e.id));
    for (const [id, t] of want) if (t < last) assert.ok(ids.has(id), `${what}: a tier ${t} match is missing while tier ${last} results were returned`);
  }
}

async function checkAll(store: EventStore, live: Map<string, Live>, qs: string[]): Promise<void> {
  for (const [i, q] of qs.entries()) await check(store, live, q, LIMITS[i % LIMITS.length]);
}

/** Index entries the live profiles should have: nothing left behind by replaced or deleted ones. */
function expectedEntries(live: Map<string, Live>): { keys: number; docs: number } {
  let keys = 0;
  let docs = 0;
  for (const l of live.values()) {
    const d = searchDoc(0, l.ev.content);
    if (!d) continue;
    docs++;
    docKeys(d, () => keys++);
  }
  return { keys, docs };
}

/** Writes concurrently, so the batched writer commits many per transaction (the test is not about fsync). */
async function putAll(store: EventStore, evs: NostrEvent[]): Promise<void> {
  for (const r of await Promise.all(evs.map((e) => put(store, e)))) assert.equal(r.status, 'stored');
}

const profileEvent = (p: Profile, o: Partial<NostrEvent> = {}): NostrEvent => ev({ kind: 0, content: JSON.stringify(p), ...o });

test('search agrees with a brute-force matcher; replaced, deleted, expired and banned profiles leave the index', async () => {
  const dir = tmpDir();
  const store = await openStore({ dir, mapSize: 256 * 1024 ** 2 });
  try {
    const live = new Map<string, Live>();
    const all = Array.from({ length: N }, (_, i) => ({ p: profile(7, i), ev: profileEvent(profile(7, i)) }));
    for (const l of all) live.set(l.ev.pubkey, l);
    // not indexed: other kinds, even when their text would match
    const notes = Array.from({ length: 50 }, () => ev({ kind: 1, content: 'alice bitcoin さとし' }));
    await putAll(store, [...all.map((l) => l.ev), ...notes]);
    await checkAll(store, live, queries([...live.values()], 1, 300));
    assert.deepEqual(expectedEntries(live), { keys: store.stats().indexes.searchKeys, docs: store.stats().indexes.searchDocs });

    // exact names first: a profile named exactly "alice" outranks every "alice…" and "… alice"
    const exact = profileEvent({ name: 'Alice' });
    await put(store, exact);
    live.set(exact.pubkey, { ev: exact, p: { name: 'Alice' } });
    const top = await search(store, 'alice', 500);
    const firstInexact = top.findIndex((e) => bruteTier('alice', JSON.parse(e.content) as Profile) > 0);
    assert.ok(firstInexact > 0 && top.slice(0, firstInexact).some((e) => e.id === exact.id), 'the exact name comes before every inexact match');

    // mutations: replace, NIP-09 delete by id and by address, expire, operator ban
    const r = rng(99);
    const victims = [...live.values()].filter(() => r() < 0.25);
    const now = Math.floor(Date.now() / 1000);
    const writes: Array<Promise<unknown>> = [];
    const stored = (e: NostrEvent) => writes.push(put(store, e).then((r) => assert.equal(r.status, 'stored')));
    for (const [k, v] of victims.entries()) {
      const pk = v.ev.pubkey;
      switch (k % 5) {
        case 0: {
          const p = profile(8, k);
          const e = profileEvent(p, { pubkey: pk, created_at: v.ev.created_at + 1 });
          stored(e);
          live.set(pk, { ev: e, p });
          break;
        }
        case 1:
          stored(ev({ kind: 5, pubkey: pk, tags: [['e', v.ev.id]] }));
          live.delete(pk);
          break;
        case 2:
          stored(ev({ kind: 5, pubkey: pk, tags: [['a', `0:${pk}:`]], created_at: v.ev.created_at + 1 }));
          live.delete(pk);
          break;
        case 3:
          stored(profileEvent(v.p, { pubkey: pk, created_at: v.ev.created_at + 1, tags: [['expiration', String(now + 1000)]] }));
          live.delete(pk);
          break;
        case 4:
          writes.push(store.remove(v.ev.id).then((ok) => assert.equal(ok, true)));
          live.delete(pk);
      }
    }
    await Promise.all(writes);
    assert.ok((await store.sweepExpired(now + 2000)) > 0);
    await checkAll(store, live, queries([...live.values()], 2, 200));
    for (const v of victims) {
      const cur = live.get(v.ev.pubkey);
      if (cur?.ev.id === v.ev.id) continue;
      const name = v.p.name ?? v.p.display_name;
      if (name) assert.ok(!(await search(store, name, 500)).some((e) => e.id === v.ev.id), `the replaced or deleted ${name} is gone`);
    }
    assert.deepEqual(expectedEntries(live), { keys: store.stats().indexes.searchKeys, docs: store.stats().indexes.searchDocs });

    // COUNT: every match once
    for (const q of ['ali', 'bitcoin', 'さと', 'domain:iris.to']) {
      let n = 0;
      for (const l of live.values()) if (bruteTier(q, l.p) >= 0) n++;
      assert.equal(await store.count([sf(q, 10)]), n, `count ${q}`);
    }
    // other filter fields still apply
    const some = [...live.values()].slice(0, 40);
    const byAuthors = (await store.query([sf('a', 500, { authors: some.map((l) => l.ev.pubkey) })], { defaultLimit: 500, maxLimit: 500 })).map((j) => JSON.parse(j) as NostrEvent);
    assert.deepEqual(new Set(byAuthors.map((e) => e.id)), new Set(some.filter((l) => bruteTier('a', l.p) >= 0).map((l) => l.ev.id)));
    const since = [...live.values()].map((l) => l.ev.created_at).sort((a, b) => a - b)[Math.floor(live.size / 2)];
    const recent = (await store.query([sf('a', 500, { since })], { defaultLimit: 500, maxLimit: 500 })).map((j) => JSON.parse(j) as NostrEvent);
    assert.ok(recent.length > 0 && recent.every((e) => e.created_at >= since));
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('all name-word matches rank before about matches, even when about matches come first in the index', async () => {
  const dir = tmpDir();
  const store = await openStore({ dir, mapSize: 256 * 1024 ** 2 });
  try {
    // "al" as a whole name sorts before "alice" in the index: these three (al in the name, bo only
    // in about) are read before the one whose names hold both words
    const ps: Profile[] = [{ name: 'al', about: 'bo' }, { name: 'al', about: 'bob' }, { name: 'al', about: 'bo' }, { name: 'bob alice' }];
    const live = new Map<string, Live>();
    for (const p of ps) {
      const e = profileEvent(p);
      live.set(e.pubkey, { ev: e, p });
    }
    await putAll(store, [...live.values()].map((l) => l.ev));
    for (const limit of [1, 2, 3, 4]) await check(store, live, 'al bo', limit);
    assert.deepEqual(JSON.parse((await search(store, 'al bo', 1))[0].content), { name: 'bob alice' });
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the index persists: reopening does not rebuild it; a new format or new search.kinds rebuilds it once', async () => {
  const dir = tmpDir();
  const logs: Array<{ msg: string; o: Record<string, unknown> }> = [];
  const logger = { warn() {}, info: (o: object, msg?: string) => void logs.push({ msg: msg ?? '', o: o as Record<string, unknown> }) };
  const open = (kinds?: number[]) => openStore({ dir, mapSize: 256 * 1024 ** 2, logger, search: kinds ? { kinds } : undefined });
  const rebuilds = () => logs.filter((l) => l.msg.startsWith('search index: rebuilding (')).length;
  try {
    let store = await open();
    const names = Array.from({ length: 300 }, (_, i) => ({ name: `user${i}`, about: i % 2 ? 'bitcoin' : 'nostr' }));
    await putAll(store, names.map((p) => profileEvent(p)));
    const note = ev({ kind: 1, content: 'a note about bitcoin' });
    await put(store, note);
    const before = store.stats().indexes;
    await store.close();
    assert.equal(rebuilds(), 0, 'a new database is not "rebuilt"');

    store = await open();
    assert.equal(rebuilds(), 0, 'reopening keeps the index');
    assert.equal((await search(store, 'user1', 500)).length, 111);
    // an older index format: rebuilt at the next open, with the number of events in the log
    openDbs(store.env).meta.putSync(SEARCH_META_KEY, { version: 0, kinds: [0] });
    await store.close();
    store = await open();
    assert.equal(rebuilds(), 1);
    assert.equal(logs.find((l) => l.msg.startsWith('search index: rebuilding ('))!.o.events, 300);
    assert.ok(logs.some((l) => l.msg === 'search index: rebuilt'));
    assert.deepEqual(store.stats().indexes, before, 'the rebuilt index is the one the writer kept');
    assert.equal((await search(store, 'user1', 500)).length, 111);
    await store.close();
    store = await open();
    assert.equal(rebuilds(), 1, 'once');

    // search.kinds gains kind 1: its content becomes searchable; losing it again drops its entries
    await store.close();
    store = await open([0, 1]);
    assert.equal(rebuilds(), 2);
    const f = parseFilter({ kinds: [1], search: 'bitcoin' }, { maxFilterValues: 10, maxTagFilters: 2, searchKinds: [0, 1] });
    assert.deepEqual((await store.query([f], { defaultLimit: 10, maxLimit: 10 })).map((j) => (JSON.parse(j) as NostrEvent).id), [note.id]);
    await store.close();
    store = await open([0]);
    assert.equal(rebuilds(), 3);
    assert.deepEqual(store.stats().indexes, before);
    await store.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a very common term costs at most search.maxPostings index entries, and still answers; COUNT stays exact', async () => {
  const dir = tmpDir();
  const maxPostings = 300;
  const store = await openStore({ dir, mapSize: 256 * 1024 ** 2, queryYieldEvery: 16, search: { maxPostings } });
  try {
    // half the profiles say alpha, the other half beta: both words are common, together they are rare
    await putAll(store, Array.from({ length: 2000 }, (_, i) => profileEvent({ name: `nostr${i}`, about: i % 2 ? 'alpha common' : 'beta common' })));
    const one = profileEvent({ name: 'alpha beta' });
    await put(store, one);
    let polls = 0;
    const signal = { get aborted() { polls++; return false; } };
    const got = await store.query([sf('alpha beta', 10)], { defaultLimit: 10, maxLimit: 10, signal });
    assert.deepEqual(got.map((j) => (JSON.parse(j) as NostrEvent).id), [one.id]);
    // entries read: the cap, plus the estimates of the two keys (1,000 each at most, per phase), in steps of 16
    assert.ok(polls * 16 <= maxPostings + 4 * 1000 + 16 * 4, `${polls} steps of 16 entries`);
    // COUNT is exact whatever maxPostings says (the scan budget bounds it, like any COUNT)
    assert.equal(await store.count([sf('alpha beta', 10)]), 1);
    assert.equal(await store.count([sf('common', 10)]), 2000);
    // a domain only a few profiles have drives the search: all of them are found, however common the word
    const rare = Array.from({ length: 5 }, (_, i) => profileEvent({ name: `x${i}`, nip05: `x${i}@rare.example`, about: 'bitcoin' }));
    await putAll(store, rare);
    assert.equal((await search(store, 'bitcoin domain:rare.example', 500)).length, 5);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
