// The pubkey id cache (src/store/pubkey-id-cache.ts): what is set is found, what is not is not,
// pubkeys that share their first bytes (the slot they hash to) stay apart, and a full cache empties.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { PubkeyIdCache } from '../../src/store/pubkey-id-cache.js';

const pk = (): string => randomBytes(32).toString('hex');

test('PubkeyIdCache: ids found again across growth and across the key chunks, absent pubkeys are not, a changed id replaces the old', () => {
  const c = new PubkeyIdCache(200_000);
  const keys = Array.from({ length: 140_000 }, pk); // three chunks of 65,536 keys
  keys.forEach((k, i) => c.set(k, i + 1));
  assert.equal(c.size, 140_000);
  keys.forEach((k, i) => assert.equal(c.get(k), i + 1, k));
  for (let i = 0; i < 1000; i++) assert.equal(c.get(pk()), undefined);
  c.set(keys[7]!, 99);
  assert.equal(c.get(keys[7]!), 99);
  assert.equal(c.size, 140_000);
});

test('PubkeyIdCache: pubkeys equal but for one byte anywhere are told apart (a shared prefix picks the same slot)', () => {
  const c = new PubkeyIdCache(1000);
  const base = pk();
  const variants = [base];
  // one differing byte at each position after the first: from the second to the fourth the slot
  // may still be the same (a cache of 1,000 reads the first word's low bits), after them it is
  for (let byte = 1; byte < 32; byte++) {
    const b = Buffer.from(base, 'hex');
    b[byte] ^= 0x01;
    variants.push(b.toString('hex'));
  }
  variants.forEach((k, i) => c.set(k, 1000 + i));
  variants.forEach((k, i) => assert.equal(c.get(k), 1000 + i, `variant ${i}`));
  const other = Buffer.from(base, 'hex');
  other[31] ^= 0x80;
  assert.equal(c.get(other.toString('hex')), undefined);
});

test('PubkeyIdCache: a full cache empties and fills again', () => {
  const c = new PubkeyIdCache(100);
  const keys = Array.from({ length: 150 }, pk);
  keys.forEach((k, i) => c.set(k, i + 1));
  assert.equal(c.size, 50);
  assert.equal(c.get(keys[0]!), undefined);
  assert.equal(c.get(keys[99]!), undefined);
  assert.equal(c.get(keys[149]!), 150);
  keys.slice(100).forEach((k, i) => assert.equal(c.get(k), 101 + i));
});

test('PubkeyIdCache: pubkeys chosen to pick one slot are cached only as far as a lookup probes; the rest stay misses, never wrong', () => {
  const c = new PubkeyIdCache(100_000);
  const prefix = pk().slice(0, 16); // the same first 8 bytes: one slot, one tag
  const colliding = Array.from({ length: 1000 }, () => prefix + pk().slice(16));
  colliding.forEach((k, i) => c.set(k, i + 1));
  assert.ok(c.size <= 128, `at most a lookup's probes of them are cached (${c.size})`);
  let found = 0;
  colliding.forEach((k, i) => {
    const id = c.get(k);
    if (id !== undefined) {
      assert.equal(id, i + 1);
      found++;
    }
  });
  assert.equal(found, c.size);
  const other = pk();
  c.set(other, 5);
  assert.equal(c.get(other), 5);
});
