// Kind sets from config (src/policy/kinds.ts): numbers and ranges.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KindSet } from '../../src/policy/kinds.js';

test('kind sets take numbers and ranges', () => {
  const k = new KindSet([1, '7', '30000-39999']);
  assert.ok(k.has(1) && k.has(7) && k.has(30023) && !k.has(2) && !k.has(40000));
  assert.throws(() => new KindSet(['9-3']));
});
