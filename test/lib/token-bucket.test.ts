// lib/token-bucket.ts: a key's first bucket holds its capacity, no more (the minute's sweep used to
// drop the full bucket just taken from, so the next take found a full one again).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KeyedBuckets } from '../../src/lib/token-bucket.js';

test('KeyedBuckets: a fresh key gets exactly its capacity, then the rate', () => {
  const b = new KeyedBuckets<string>(1, 2);
  const now = 1_000_000;
  assert.deepEqual([b.take('a', now), b.take('a', now), b.take('a', now)], [true, true, false]);
  assert.equal(b.take('a', now + 1000), true, 'one more a second later');
  assert.equal(b.take('a', now + 1000), false);
  // a quiet key's full bucket is swept (memory), and it starts full again
  assert.equal(b.take('b', now + 120_000), true);
  assert.equal(b.size, 1, 'a was full again and swept');
});
