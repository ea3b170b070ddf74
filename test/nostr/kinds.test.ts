import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isReplaceable, isEphemeral, isAddressable, eventClass, dTag, addressOf, parseAddress, expirationOf, indexableTags, leadingZeroBits } from '../../src/nostr/kinds.js';

test('kind ranges follow NIP-01', () => {
  assert.deepEqual([0, 3, 10000, 19999].map(isReplaceable), [true, true, true, true]);
  assert.deepEqual([1, 2, 4, 9999, 20000].map(isReplaceable), [false, false, false, false, false]);
  assert.deepEqual([19999, 20000, 29999, 30000].map(isEphemeral), [false, true, true, false]);
  assert.deepEqual([29999, 30000, 39999, 40000].map(isAddressable), [false, true, true, false]);
  assert.deepEqual([1, 0, 25000, 30023].map(eventClass), ['regular', 'replaceable', 'ephemeral', 'addressable']);
});

test('d tag: first one wins, missing or valueless means ""', () => {
  assert.equal(dTag({ tags: [['d', 'one'], ['d', 'two']] }), 'one');
  assert.equal(dTag({ tags: [] }), '');
  assert.equal(dTag({ tags: [['d']] }), '');
  const pk = 'f'.repeat(64);
  assert.equal(addressOf({ kind: 30023, pubkey: pk, tags: [] }), `30023:${pk}:`);
  assert.equal(addressOf({ kind: 0, pubkey: pk, tags: [['d', 'x']] }), `0:${pk}:`);
  assert.equal(addressOf({ kind: 1, pubkey: pk, tags: [] }), null);
});

test('addresses parse, with colons allowed in d', () => {
  const pk = 'e'.repeat(64);
  assert.deepEqual(parseAddress(`30023:${pk}:a:b`), { kind: 30023, pubkey: pk, d: 'a:b' });
  assert.equal(parseAddress('x:y'), null);
  assert.equal(parseAddress(`abc:${pk}:d`), null);
  assert.equal(parseAddress(`1:nothex:d`), null);
});

test('expiration, indexable tags, proof-of-work bits', () => {
  assert.equal(expirationOf({ tags: [['expiration', '123']] }), 123);
  assert.equal(expirationOf({ tags: [['expiration', 'soon']] }), null);
  assert.equal(expirationOf({ tags: [] }), null);
  assert.deepEqual(indexableTags({ tags: [['e', 'x', 'hint'], ['expiration', '1'], ['p'], ['t', '']] }), [['e', 'x'], ['t', '']]);
  assert.equal(leadingZeroBits('000f'), 12);
  assert.equal(leadingZeroBits('8'), 0);
  assert.equal(leadingZeroBits('1'), 3);
  assert.equal(leadingZeroBits('00'), 8);
});
