// Query semantics: order and the tie rule, limits per filter, OR and dedupe, expiry, count, iterate.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { NostrEvent } from '../../src/nostr/event.js';
import { ev, hex, idWithRank, ids, newestFirst, put, withStore } from './helpers.js';

const NOW = Math.floor(Date.now() / 1000);

test('ties: equal created_at comes out by id, not by arrival', () =>
  withStore(async (s) => {
    const ranks = [0x90, 0x10, 0x50, 0x30, 0x70];
    const es = ranks.map((r) => ev({ created_at: 500, id: idWithRank(r) }));
    for (const e of es) await put(s, e);
    const newer = ev({ created_at: 501 });
    const older = ev({ created_at: 499 });
    await put(s, older);
    await put(s, newer);
    const expected = [newer, ...[...es].sort(newestFirst), older].map((e) => e.id);
    assert.deepEqual(await ids(s, [{}]), expected);
    assert.deepEqual(await ids(s, [{ kinds: [1] }]), expected);
  }));

test('ties: a limit cutting inside a run keeps the lowest ids of the whole run', () =>
  withStore(async (s) => {
    const pk = hex();
    // arrival order = descending id, so the run's lowest ids arrive last (smallest serials)
    const run = [0xf0, 0xc0, 0x90, 0x60, 0x30, 0x05].map((r) => ev({ pubkey: pk, created_at: 700, id: idWithRank(r), tags: [['t', 'x']] }));
    const top = ev({ pubkey: pk, created_at: 800, tags: [['t', 'x']] });
    for (const e of run) await put(s, e);
    await put(s, top);
    const want = (n: number): string[] => [top.id, ...[...run].sort(newestFirst).map((e) => e.id)].slice(0, n);
    for (const f of [{}, { kinds: [1] }, { authors: [pk] }, { authors: [pk], kinds: [1] }, { tags: [['t', ['x']]] as Array<[string, string[]]> }]) {
      for (const limit of [1, 2, 3, 4, 7, 10]) assert.deepEqual(await ids(s, [{ ...f, limit }]), want(limit), `${JSON.stringify(f)} limit ${limit}`);
    }
  }));

test('limits: each filter has its own limit; results are ORed, de-duplicated and sorted', () =>
  withStore(async (s) => {
    const a = Array.from({ length: 10 }, (_, i) => ev({ kind: 1, created_at: 1000 + 2 * i }));
    const b = Array.from({ length: 10 }, (_, i) => ev({ kind: 6, created_at: 1001 + 2 * i }));
    for (const e of [...a, ...b]) await put(s, e);
    const got = await ids(s, [{ kinds: [1], limit: 3 }, { kinds: [6], limit: 2 }]);
    const want = [...a.slice(-3), ...b.slice(-2)].sort(newestFirst).map((e) => e.id);
    assert.deepEqual(got, want);
    // overlapping filters: an event matched by both appears once
    const both = await ids(s, [{ kinds: [1, 6], limit: 4 }, { kinds: [6], limit: 4 }]);
    assert.equal(new Set(both).size, both.length);
    assert.deepEqual(both, [...a.slice(-2), ...b.slice(-4)].sort(newestFirst).map((e) => e.id));
    // default and max limits
    assert.equal((await ids(s, [{}], { defaultLimit: 7, maxLimit: 9 })).length, 7);
    assert.equal((await ids(s, [{ limit: 100 }], { defaultLimit: 7, maxLimit: 9 })).length, 9);
    // limit 0 and empty lists match nothing
    assert.deepEqual(await ids(s, [{ limit: 0 }]), []);
    assert.deepEqual(await ids(s, [{ ids: [] }, { authors: [] }, { kinds: [] }, { tags: [['e', []]] }]), []);
    assert.deepEqual(await ids(s, [{ since: 2000, until: 1000 }]), []);
    assert.equal(await s.count([{ kinds: [] }, { limit: 0, kinds: [1] }]), 10, 'count ignores limits');
  }));

test('plans: ids (full and prefix), authors (full and prefix), tags, kinds', () =>
  withStore(async (s) => {
    const pks = [hex(), hex()];
    const all: NostrEvent[] = [];
    for (let i = 0; i < 40; i++) {
      const e = ev({ pubkey: pks[i % 2], kind: i % 3 === 0 ? 7 : 1, created_at: 100 + (i % 7), tags: [['t', `w${i % 4}`], ['e', hex()]] });
      all.push(e);
      await put(s, e);
    }
    const sorted = [...all].sort(newestFirst);
    const check = async (f: Parameters<typeof s.query>[0][0], pred: (e: NostrEvent) => boolean): Promise<void> =>
      assert.deepEqual(await ids(s, [f]), sorted.filter(pred).map((e) => e.id), JSON.stringify(f));
    await check({ ids: [all[3].id, all[5].id, hex()] }, (e) => e === all[3] || e === all[5]);
    await check({ ids: [all[3].id.slice(0, 10)] }, (e) => e.id.startsWith(all[3].id.slice(0, 10)));
    await check({ ids: [all[3].id.slice(0, 3)] }, (e) => e.id.startsWith(all[3].id.slice(0, 3)));
    await check({ authors: [pks[0]] }, (e) => e.pubkey === pks[0]);
    await check({ authors: [pks[0].slice(0, 20)] }, (e) => e.pubkey === pks[0]);
    await check({ authors: [pks[1].slice(0, 5)] }, (e) => e.pubkey.startsWith(pks[1].slice(0, 5)));
    await check({ authors: [pks[1]], kinds: [7] }, (e) => e.pubkey === pks[1] && e.kind === 7);
    await check({ kinds: [7], since: 102, until: 104 }, (e) => e.kind === 7 && e.created_at >= 102 && e.created_at <= 104);
    await check({ tags: [['t', ['w1', 'w2']]], kinds: [1] }, (e) => e.kind === 1 && ['w1', 'w2'].includes(e.tags[0][1]));
    await check({ tags: [['t', ['w1']], ['e', [all[5].tags[1][1], all[9].tags[1][1]]]] }, (e) => e === all[5] || e === all[9]);
    await check({ tags: [['t', ['nope']]] }, () => false);
  }));

test('feed: 500 authors x 2 kinds with limit 500 returns the newest 500', () =>
  withStore(async (s) => {
    const authors = Array.from({ length: 500 }, () => hex());
    const all: NostrEvent[] = [];
    const batch: Promise<unknown>[] = [];
    for (let i = 0; i < 3000; i++) {
      const e = ev({ pubkey: authors[i % 500], kind: i % 3 === 0 ? 6 : 1, created_at: 10_000 + ((i * 7919) % 1500) });
      all.push(e);
      batch.push(put(s, e));
    }
    await Promise.all(batch);
    const got = await ids(s, [{ authors, kinds: [1, 6], limit: 500 }]);
    assert.deepEqual(got, [...all].sort(newestFirst).slice(0, 500).map((e) => e.id));
  }));

test('expiry: expired events are never returned or counted, then swept', () =>
  withStore(async (s) => {
    const soon = ev({ created_at: 10, tags: [['expiration', String(NOW + 100)]] });
    const later = ev({ created_at: 11, tags: [['expiration', String(NOW + 1000)]] });
    const plain = ev({ created_at: 12 });
    for (const e of [soon, later, plain]) await put(s, e);
    assert.deepEqual(await ids(s, [{}]), [plain.id, later.id, soon.id]);
    assert.deepEqual(await ids(s, [{}], { now: NOW + 100 }), [plain.id, later.id], 'expiration equal to now counts as expired');
    assert.equal(await s.count([{}], { now: NOW + 100 }), 2, 'index-only count skips expired');
    assert.equal(await s.count([{ kinds: [1] }], { now: NOW + 100 }), 2);
    assert.equal(await s.count([{ ids: [soon.id] }], { now: NOW + 100 }), 0);
    assert.equal(await s.sweepExpired(NOW + 99), 0);
    assert.equal(await s.sweepExpired(NOW + 100), 1);
    assert.equal(s.get(soon.id), undefined);
    assert.equal(s.stats().indexes.expiry, 1);
    assert.equal(await s.sweepExpired(NOW + 5000), 1);
    assert.deepEqual(await ids(s, [{}]), [plain.id]);
    const st = s.stats();
    assert.equal(st.events, 1);
    assert.equal(st.indexes.expiry, 0);
    assert.equal(st.indexes.created, 1);
  }));

test('sweep: many expired events are deleted in bounded transactions', () =>
  withStore(
    async (s) => {
      const es = Array.from({ length: 57 }, (_, i) => ev({ tags: [['expiration', String(NOW + 10 + (i % 5))], ['t', 'x']] }));
      await Promise.all(es.map((e) => put(s, e)));
      await put(s, ev());
      assert.equal(await s.sweepExpired(NOW + 100), 57);
      assert.equal(s.stats().events, 1);
      assert.equal(s.stats().indexes.tagkind, 0);
    },
    { maxBatch: 10 },
  ));

test('count: distinct events over several filters, limits ignored', () =>
  withStore(async (s) => {
    const pk = hex();
    for (let i = 0; i < 30; i++) await put(s, ev({ pubkey: i < 10 ? pk : hex(), kind: i % 2 ? 1 : 7, tags: [['t', i % 3 ? 'a' : 'b']] }));
    assert.equal(await s.count([{}]), 30);
    assert.equal(await s.count([{ kinds: [1] }]), 15);
    assert.equal(await s.count([{ kinds: [1] }, { kinds: [1], limit: 1 }]), 15);
    assert.equal(await s.count([{ kinds: [1] }, { authors: [pk] }]), 15 + 5);
    assert.equal(await s.count([{ tags: [['t', ['a']]] }, { tags: [['t', ['b']]] }]), 30);
    assert.equal(await s.count([{ tags: [['t', ['a', 'b']]], kinds: [7] }]), 15);
  }));

test('iterate: every match newest first, without a limit', () =>
  withStore(
    async (s) => {
      const all: NostrEvent[] = [];
      for (let i = 0; i < 120; i++) {
        const e = ev({ created_at: 50 + (i % 13), kind: i % 4 === 0 ? 7 : 1 });
        all.push(e);
        await put(s, e);
      }
      const got: string[] = [];
      for await (const j of s.iterate({ kinds: [1] })) got.push((JSON.parse(j) as NostrEvent).id);
      assert.deepEqual(got, all.filter((e) => e.kind === 1).sort(newestFirst).map((e) => e.id));
    },
    { queryYieldEvery: 16 },
  ));

test('abort: a scan stops when the signal is set', () =>
  withStore(
    async (s) => {
      await Promise.all(Array.from({ length: 300 }, () => put(s, ev())));
      const signal = { aborted: false };
      const p = s.query([{ limit: 300 }], { defaultLimit: 500, maxLimit: 500, signal });
      signal.aborted = true;
      assert.ok((await p).length < 300);
      assert.equal((await s.query([{ limit: 300 }], { defaultLimit: 500, maxLimit: 500, signal: { aborted: true } })).length, 0);
    },
    { queryYieldEvery: 16 },
  ));

test('query reports what it covered: the serial high-water mark at its start', async () => {
  const { withStore, ev, put } = await import('./helpers.js');
  const { parseFilter } = await import('../../src/nostr/filter.js');
  await withStore(async (s) => {
    const a = await put(s, ev());
    const b = await put(s, ev());
    const seen = { upTo: -1, newer: new Set<string>() };
    const out = await s.query([parseFilter({})], { defaultLimit: 10, maxLimit: 10, seen });
    assert.equal(out.length, 2);
    assert.equal(seen.upTo, Math.max(a.serial!, b.serial!));
    assert.equal(seen.newer.size, 0);
    const c = await put(s, ev());
    assert.ok(c.serial! > seen.upTo, 'serials grow with every commit');
  });
});
