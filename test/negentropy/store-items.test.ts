// store.negentropyItems: the (created_at, id) records of a filter's matches, ascending, checked
// against a brute-force oracle (nostr-tools' matchFilter over what the store kept) for each plan
// (ids, tag, pubkey+kind, pubkey, kind, created), the filter's limit inside a crowded second,
// expired events, the record cap and the accept hook.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { matchFilter, type Filter as NtFilter } from 'nostr-tools/filter';
import type { NostrEvent } from '../../src/nostr/event.js';
import { parseFilter } from '../../src/nostr/filter.js';
import { NegentropyStorage } from '../../src/nostr/negentropy.js';
import { kindOf } from '../../src/store/codec.js';
import { ev, hex, put, withStore } from '../store/helpers.js';
import { rng } from './helpers.js';

const NOW = 1_800_000_000;

function items(records: Uint8Array): Array<[number, string]> {
  const s = NegentropyStorage.fromRecords(records); // also checks ascending and unique
  return Array.from({ length: s.size }, (_, i) => [s.timestamp(i), s.idHex(i)]);
}

/** NIP-01 semantics: matches newest first (lower id first on ties), `limit` of them, then ascending. */
function oracle(events: NostrEvent[], wire: Record<string, unknown>): Array<[number, string]> {
  const m = events.filter((e) => matchFilter(wire as NtFilter, e));
  m.sort((a, b) => b.created_at - a.created_at || (a.id < b.id ? -1 : 1));
  const kept = typeof wire.limit === 'number' ? m.slice(0, wire.limit) : m;
  return kept.map((e): [number, string] => [e.created_at, e.id]).sort((a, b) => a[0] - b[0] || (a[1] < b[1] ? -1 : 1));
}

test('negentropy items match a brute-force oracle for every plan, limits inside a crowded second included', () =>
  withStore(async (s) => {
    const r = rng(7701);
    const int = (n: number) => Math.floor(r() * n);
    const authors = Array.from({ length: 6 }, () => hex());
    const kept: NostrEvent[] = [];
    for (let i = 0; i < 3000; i++) {
      const created_at = i % 3 === 0 ? NOW : NOW - 1 - int(2000); // a third share the newest second
      const kind = [1, 1, 7, 30023, 3][int(5)];
      const tags = [['t', ['a', 'b', 'c'][int(3)]], ...(kind === 30023 ? [['d', String(i)]] : [])];
      const e = ev({ created_at, kind, pubkey: authors[int(6)], tags });
      const w = await put(s, e);
      if (w.status === 'stored') kept.push(e);
    }
    // replaceable kind 3: only the newest per author stays
    const stored = kept.filter((e) => s.get(e.id) !== undefined);
    const filters: Array<Record<string, unknown>> = [
      {},
      { kinds: [1] },
      { kinds: [1, 7], since: NOW - 1000, until: NOW - 400 },
      { authors: [authors[0]] },
      { authors: [authors[1], authors[2]], kinds: [1, 30023] },
      { '#t': ['a'] },
      { '#t': ['b'], kinds: [7] },
      { ids: stored.slice(0, 40).map((e) => e.id) },
      { ids: stored.slice(0, 40).map((e) => e.id), limit: 7 },
      { kinds: [1], limit: 100 }, // the limit falls inside the crowded second
      { limit: 1 },
      { limit: 0 },
      { until: NOW, since: NOW },
      { kinds: [9999] },
    ];
    for (const wire of filters) {
      const f = parseFilter(wire);
      const got = await s.negentropyItems(f, { maxItems: 10_000 });
      assert.equal(got.overLimit, false);
      assert.equal(got.complete, true);
      assert.deepEqual(items(got.records), oracle(stored, wire), JSON.stringify(wire).slice(0, 80));
      assert.equal(got.count, got.records.length / 36);
    }
  }));

test('negentropy items: expired events are left out, more than maxItems is overLimit, accept() filters values', () =>
  withStore(async (s) => {
    const now = Math.floor(Date.now() / 1000);
    const live = ev({ created_at: now - 10, tags: [['expiration', String(now + 3600)]] });
    const gone = ev({ created_at: now - 10, tags: [['expiration', String(now + 2)]] });
    const dm = ev({ created_at: now - 5, kind: 4 });
    for (const e of [live, gone, dm]) await put(s, e);
    const all = await s.negentropyItems({}, { maxItems: 10, now: now + 10 });
    assert.deepEqual(items(all.records).map(([, id]) => id).sort(), [live.id, dm.id].sort());
    const capped = await s.negentropyItems({}, { maxItems: 1, now: now + 10 });
    assert.equal(capped.overLimit, true);
    assert.equal(capped.records.length, 0);
    const exact = await s.negentropyItems({}, { maxItems: 2, now: now + 10 });
    assert.equal(exact.overLimit, false);
    const noDms = await s.negentropyItems({}, { maxItems: 10, now: now + 10, accept: (v) => kindOf(v) !== 4 });
    assert.deepEqual(items(noDms.records).map(([, id]) => id), [live.id]);
    const stopped = await s.negentropyItems({}, { maxItems: 10, signal: { aborted: true } });
    assert.equal(stopped.complete, false);
  }));
