import { test } from 'node:test';
import assert from 'node:assert/strict';
import { matchFilter as oracle } from 'nostr-tools/filter';
import { parseFilter, matchFilter, isEmptyFilter, FilterError, toWire, compareNewestFirst } from '../../src/nostr/filter.js';
import type { NostrEvent } from '../../src/nostr/event.js';

const ev = (o: Partial<NostrEvent>): NostrEvent => ({ id: 'a'.repeat(64), pubkey: 'b'.repeat(64), created_at: 100, kind: 1, tags: [], content: '', sig: 'c'.repeat(128), ...o });

test('parseFilter accepts the NIP-01 fields and single-letter tag filters', () => {
  const f = parseFilter({ ids: ['ab'], authors: ['b'.repeat(64)], kinds: [1, 1, 7], since: 1, until: 2, limit: 3, '#t': ['x', 'y'], '#p': ['z'] });
  assert.deepEqual(f.kinds, [1, 7]);
  assert.deepEqual(f.tags, [['t', ['x', 'y']], ['p', ['z']]]);
  assert.deepEqual(toWire(f), { ids: ['ab'], authors: ['b'.repeat(64)], kinds: [1, 7], since: 1, until: 2, limit: 3, '#t': ['x', 'y'], '#p': ['z'] });
});

test('parseFilter refuses malformed values with a reason', () => {
  for (const bad of [null, [], 'x', { ids: 'ab' }, { ids: ['XYZ'] }, { authors: ['g'] }, { kinds: ['1'] }, { kinds: [-1] }, { since: 1.5 }, { limit: -1 }, { '#t': [1] }, { '#t': 'x' }, { search: 1 }]) {
    assert.throws(() => parseFilter(bad), FilterError, JSON.stringify(bad));
  }
  assert.throws(() => parseFilter({ authors: Array(6).fill('a') }, { maxFilterValues: 5, maxTagFilters: 2 }), /more than 5/);
  assert.throws(() => parseFilter({ '#a': [], '#b': [], '#c': [] }, { maxFilterValues: 5, maxTagFilters: 2 }), /tag filters/);
});

test('unknown keys and multi-letter tag keys are ignored', () => {
  assert.deepEqual(parseFilter({ foo: 1, '#long': ['x'] }), {});
});

test('empty lists match nothing; since > until matches nothing', () => {
  assert.equal(isEmptyFilter(parseFilter({ ids: [] })), true);
  assert.equal(isEmptyFilter(parseFilter({ '#t': [] })), true);
  assert.equal(isEmptyFilter(parseFilter({ since: 5, until: 4 })), true);
  assert.equal(isEmptyFilter(parseFilter({ since: 5, until: 5 })), false);
});

test('matchFilter agrees with nostr-tools on random events and filters', () => {
  let seed = 7;
  const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) % n);
  const hex = (n: number) => Array.from({ length: n }, () => '0123456789abcdef'[rnd(3)]).join('');
  for (let i = 0; i < 3000; i++) {
    const e = ev({ id: hex(64), pubkey: hex(64), kind: rnd(4), created_at: rnd(10), tags: rnd(2) ? [['t', String(rnd(3))], ['p', hex(2)]] : [['e', 'x', 'y']] });
    const wire: Record<string, unknown> = {};
    if (rnd(3) === 0) wire.ids = [hex(64), e.id.slice(0, rnd(3) + 1)].slice(rnd(2));
    if (rnd(3) === 0) wire.authors = [hex(64).slice(0, 64)];
    if (rnd(2) === 0) wire.kinds = [rnd(4)];
    // values from 1: nostr-tools treats since/until 0 as absent (a falsy check), NIP-01 does not
    if (rnd(3) === 0) wire.since = 1 + rnd(9);
    if (rnd(3) === 0) wire.until = 1 + rnd(9);
    if (rnd(3) === 0) wire['#t'] = [String(rnd(3))];
    const f = parseFilter(wire);
    // nostr-tools matches ids/authors exactly (NIP-01 today); compare only where no prefix is used
    const prefix = [...(f.ids ?? []), ...(f.authors ?? [])].some((x) => x.length < 64);
    if (!prefix) assert.equal(matchFilter(f, e), oracle(wire as never, e as never), JSON.stringify({ wire, e }));
  }
});

test('ids and authors also match by prefix; tags match on the first value only', () => {
  const e = ev({ tags: [['p', 'x', 'y'], ['t']] });
  assert.equal(matchFilter(parseFilter({ ids: ['aaa'] }), e), true);
  assert.equal(matchFilter(parseFilter({ authors: ['bb', 'cc'] }), e), true);
  assert.equal(matchFilter(parseFilter({ authors: ['cc'] }), e), false);
  assert.equal(matchFilter(parseFilter({ '#p': ['x'] }), e), true);
  assert.equal(matchFilter(parseFilter({ '#p': ['y'] }), e), false);
  assert.equal(matchFilter(parseFilter({ '#t': [''] }), e), false);
});

test('since and until are inclusive', () => {
  const e = ev({ created_at: 100 });
  assert.equal(matchFilter(parseFilter({ since: 100, until: 100 }), e), true);
  assert.equal(matchFilter(parseFilter({ since: 101 }), e), false);
  assert.equal(matchFilter(parseFilter({ until: 99 }), e), false);
});

test('ordering is newest first, then lower id', () => {
  const list = [ev({ created_at: 1, id: 'b' }), ev({ created_at: 2, id: 'c' }), ev({ created_at: 1, id: 'a' })];
  assert.deepEqual(list.sort(compareNewestFirst).map((e) => e.id), ['c', 'a', 'b']);
});
