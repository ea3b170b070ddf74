// The yielding sort of a pass's pubkeys (trust/sort.ts): the same order as one comparison sort, cut
// to `max`, and it pauses between runs (it never holds the event loop for a whole sort).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sortedDesc } from '../../src/trust/sort.js';

test('sortedDesc: key descending, ties by the second key then the id, only the kept ones, at most max; pauses on the way', async () => {
  let s = 7;
  const rnd = () => ((s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 0x100000000);
  const n = 50_000;
  const key = Float64Array.from({ length: n }, () => Math.floor(rnd() * 100));
  const tie = Float64Array.from({ length: n }, () => Math.floor(rnd() * 10));
  const keep = (i: number) => i % 3 !== 0;
  const want = Array.from({ length: n }, (_, i) => i).filter(keep).sort((a, b) => key[b]! - key[a]! || tie[b]! - tie[a]! || a - b);
  let pauses = 0;
  assert.deepEqual(await sortedDesc(key, tie, keep, Infinity, async () => { pauses++; }), want);
  assert.ok(pauses >= 4, `${pauses} pauses`);
  assert.deepEqual(await sortedDesc(key, tie, keep, 1000, async () => {}), want.slice(0, 1000));
  assert.deepEqual(await sortedDesc(key, tie, () => false, 10, async () => {}), []);
});
