// The live index must find exactly the subscriptions a brute-force scan finds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LiveIndex, type LiveSub } from '../../src/relay/live-index.js';
import { matchAny, parseFilter } from '../../src/nostr/filter.js';
import type { NostrEvent } from '../../src/nostr/event.js';

test('live index matches the same subscriptions as a full scan', () => {
  let seed = 42;
  const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) % n);
  const keys = ['a', 'b', 'c', 'd'].map((c) => c.repeat(64));
  const idx = new LiveIndex<number>();
  const subs: LiveSub<number>[] = [];
  for (let i = 0; i < 400; i++) {
    const filters = Array.from({ length: 1 + rnd(2) }, () => {
      const w: Record<string, unknown> = {};
      if (rnd(4) === 0) w.ids = [keys[rnd(4)]];
      if (rnd(2) === 0) w.authors = rnd(5) === 0 ? [keys[rnd(4)].slice(0, 3)] : [keys[rnd(4)], keys[rnd(4)]];
      if (rnd(2) === 0) w.kinds = [rnd(3)];
      if (rnd(3) === 0) w['#t'] = [String(rnd(3))];
      if (rnd(4) === 0) w.since = rnd(5);
      return parseFilter(w);
    });
    const s = { conn: i, subId: String(i), filters };
    subs.push(s);
    idx.add(s);
    // a publish now and then files what was added since (filing is deferred to the next publish),
    // so removals below take out filed and never-filed subscriptions alike
    if (i % 50 === 49) idx.match({ id: keys[0], pubkey: keys[1], kind: 0, created_at: 0, tags: [], content: '', sig: '' });
  }
  for (let i = 0; i < 100; i++) idx.remove(subs[i * 3]);
  const alive = subs.filter((_, i) => !(i % 3 === 0 && i < 300));
  assert.equal(idx.size, alive.length);
  for (let i = 0; i < 2000; i++) {
    const ev: NostrEvent = { id: keys[rnd(4)], pubkey: keys[rnd(4)], kind: rnd(3), created_at: rnd(6), tags: rnd(2) ? [['t', String(rnd(3))]] : [], content: '', sig: '' };
    const want = alive.filter((s) => matchAny(s.filters, ev)).map((s) => s.subId).sort();
    const got = idx.match(ev).map((s) => s.subId).sort();
    assert.deepEqual(got, want);
  }
});

test('publishing checks only the subscriptions that could match, however many others there are', () => {
  const idx = new LiveIndex<number>();
  const hex = (i: number) => i.toString(16).padStart(64, '0');
  // 10,000 subscriptions by author, by tag and by kind, none of which can match the event below
  for (let i = 0; i < 10_000; i++) {
    const f = i % 3 === 0 ? { authors: [hex(i)] } : i % 3 === 1 ? { '#p': [hex(i)] } : { kinds: [1000 + (i % 500)] };
    idx.add({ conn: i, subId: String(i), filters: [parseFilter(f)] });
  }
  const mine = { conn: -1, subId: 'mine', filters: [parseFilter({ authors: ['f'.repeat(64)], kinds: [1] })] };
  idx.add(mine);
  const ev: NostrEvent = { id: 'e'.repeat(64), pubkey: 'f'.repeat(64), kind: 1, created_at: 1, tags: [['p', 'a'.repeat(64)], ['t', 'x']], content: '', sig: '' };
  const before = idx.checks;
  assert.deepEqual(idx.match(ev).map((s) => s.subId), ['mine']);
  assert.ok(idx.checks - before <= 2, `checked ${idx.checks - before} filters for one event`);
});

test('closing every subscription leaves nothing filed: later events check no filter', () => {
  const idx = new LiveIndex<number>();
  const hex = (i: number) => i.toString(16).padStart(64, '0');
  const subs: LiveSub<number>[] = [];
  // many subscriptions share keys (a Set per key), some hold a key alone, some use prefixes
  for (let i = 0; i < 300; i++) {
    const f = i % 4 === 0 ? { authors: [hex(i % 7), hex(1000 + i)] } : i % 4 === 1 ? { '#p': [hex(i % 5)] } : i % 4 === 2 ? { ids: [hex(i % 3).slice(0, 10)] } : { kinds: [i % 2] };
    const s = { conn: i, subId: String(i), filters: [parseFilter(f), parseFilter({ kinds: [7] })] };
    subs.push(s);
    idx.add(s);
  }
  const events: NostrEvent[] = [0, 1, 2, 3, 4, 5, 6].map((i) => ({ id: hex(i % 3), pubkey: hex(i), kind: i % 2, created_at: 1, tags: [['p', hex(i % 5)]], content: '', sig: '' }));
  for (const ev of events) assert.ok(idx.match(ev).length > 0);
  // one unrelated subscription stays open, so matching really looks in the index
  idx.add({ conn: -1, subId: 'keeper', filters: [parseFilter({ authors: [hex(99_999)] })] });
  for (const s of subs.reverse()) idx.remove(s);
  assert.equal(idx.size, 1);
  const before = idx.checks;
  for (const ev of events) assert.deepEqual(idx.match({ ...ev, kind: 7 }), []);
  assert.equal(idx.checks, before, 'no filter was left to check');
});
