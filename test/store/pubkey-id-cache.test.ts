// The pubkey id cache (src/store/pubkey-id-cache.ts): what is set is found, what is not is not,
// pubkeys that share their first bytes (the slot they hash to) stay apart, and a full cache empties.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { PubkeyIdCache } from '../../src/store/pubkey-id-cache.js';

const pk = (): string => randomBytes(32).toString('hex');

test('PubkeyIdCache: ids found again across growth, absent pubkeys are not, a changed id replaces the old', () => {
  const c = new PubkeyIdCache(100_000);
  const keys = Array.from({ length: 20_000 }, pk);
  keys.forEach((k, i) => c.set(k, i + 1));
  assert.equal(c.size, 20_000);
  keys.forEach((k, i) => assert.equal(c.get(k), i + 1, k));
  for (let i = 0; i < 1000; i++) assert.equal(c.get(pk()), undefined);
  c.set(keys[7]!, 99);
  assert.equal(c.get(keys[7]!), 99);
  assert.equal(c.size, 20_000);
});

test('PubkeyIdCache: pubkeys equal but for one byte anywhere are told apart (a shared prefix picks the same slot)', () => {
  const c = new PubkeyIdCache(1000);
  const base = pk();
  const variants = [base];
  // the same first 8 bytes (slot and check word), then one differing byte at each later position
  for (let byte = 8; byte < 32; byte++) {
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
  assert.equal(c.get(keys[149]!), 150);
});
