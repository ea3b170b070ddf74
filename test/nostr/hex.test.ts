import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { isHex64, isLowerHex, nibble } from '../../src/nostr/hex.js';

const regex = /^[0-9a-f]{64}$/;

test('isHex64 agrees with /^[0-9a-f]{64}$/ for every character in every position it can hold', () => {
  const base = randomBytes(32).toString('hex');
  assert.equal(isHex64(base), true);
  // every UTF-16 code unit, at the first, a middle and the last position: only 0-9 and a-f pass
  for (const at of [0, 31, 63]) {
    for (let c = 0; c < 65536; c++) {
      const s = base.slice(0, at) + String.fromCharCode(c) + base.slice(at + 1);
      assert.equal(isHex64(s), regex.test(s), `code ${c} at ${at}`);
    }
  }
});

test('isLowerHex checks the length first and every character after it', () => {
  const pk = randomBytes(32).toString('hex');
  assert.equal(isLowerHex(pk, 64), true);
  assert.equal(isLowerHex(pk + pk, 128), true);
  assert.equal(isLowerHex(pk.slice(1), 64), false);
  assert.equal(isLowerHex(pk + '0', 64), false);
  assert.equal(isLowerHex(pk.toUpperCase(), 64), /[a-f]/.test(pk) ? false : true);
  assert.equal(isLowerHex('', 0), true);
  assert.equal(isHex64('0'.repeat(63) + 'g'), false);
  assert.equal(isHex64('0'.repeat(63) + 'F'), false);
  assert.equal(isHex64('0'.repeat(63) + '\u0130'), false); // its low byte is '0'
});

test('nibble reads each lowercase hex digit', () => {
  for (let v = 0; v < 16; v++) assert.equal(nibble(v.toString(16).charCodeAt(0)), v);
});
