// The item set of a NEG-OPEN with several filters (src/relay/handlers/neg-items.ts): the sorted
// union of the filters' records, equal records once, abandoned as soon as it passes the cap; and
// the filters de-duplicated before any is read.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { distinctFilters, unionItems } from '../../src/relay/handlers/neg-items.js';
import { RECORD_BYTES } from '../../src/nostr/negentropy-storage.js';
import type { NegentropyItems } from '../../src/store/negentropy.js';
import type { Filter } from '../../src/nostr/filter.js';
import { rng } from './helpers.js';

/** Records for (created_at, id byte) pairs, sorted as the store returns them. */
function records(pairs: Array<[number, number]>): Uint8Array {
  const sorted = [...pairs].sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const out = new Uint8Array(sorted.length * RECORD_BYTES);
  sorted.forEach(([ca, id], i) => {
    new DataView(out.buffer).setUint32(i * RECORD_BYTES, ca, true);
    out[i * RECORD_BYTES + 4] = id;
  });
  return out;
}
const items = (r: Uint8Array): NegentropyItems => ({ records: r, count: r.length / RECORD_BYTES, overLimit: false, complete: true });

test('the union of several filters\' records is sorted, each record once; past the cap: overLimit', async () => {
  const r = rng(3);
  const parts = Array.from({ length: 6 }, () => Array.from({ length: 200 }, () => [1000 + Math.floor(r() * 50), Math.floor(r() * 40)] as [number, number]));
  // each part is a set (as a store's answer is)
  const sets = parts.map((p) => [...new Map(p.map((x) => [`${x[0]}:${x[1]}`, x])).values()]);
  const filters: Filter[] = sets.map((_, i) => ({ kinds: [i] }));
  const asked: number[] = [];
  const got = await unionItems(filters, 10_000, async (f) => { asked.push(f.kinds![0]); return items(records(sets[f.kinds![0]])); });
  const want = records([...new Map(sets.flat().map((x) => [`${x[0]}:${x[1]}`, x])).values()]);
  assert.deepEqual(asked, [0, 1, 2, 3, 4, 5]);
  assert.equal(got.count, want.length / RECORD_BYTES);
  assert.deepEqual(Buffer.from(got.records), Buffer.from(want));
  // a cap below the union: refused, and no filter after the one that passed it is read
  asked.length = 0;
  const capped = await unionItems(filters, 300, async (f) => { asked.push(f.kinds![0]); return items(records(sets[f.kinds![0]])); });
  assert.equal(capped.overLimit, true);
  assert.equal(capped.records.length, 0);
  assert.ok(asked.length < 6, `${asked.length} filters read`);
  // a part over its own cap or stopped ends the union at once
  const stopped = await unionItems(filters, 10_000, async () => ({ records: new Uint8Array(0), count: 0, overLimit: false, complete: false }));
  assert.equal(stopped.complete, false);
});

test('filters given twice, in any key or value order, are read once', () => {
  const a = { kinds: [1, 7], authors: ['aa', 'bb'] };
  const b = { authors: ['bb', 'aa'], kinds: [7, 1] };
  const c = { kinds: [1, 7] };
  assert.deepEqual(distinctFilters([a, b, c, {}, {}] as Filter[]), [a, c, {}]);
});
