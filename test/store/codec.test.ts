import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createdAtOf, decodeEvent, decodeHeader, encodeValue, FIXED_HEADER, headerLength, jsonOf, kindOf } from '../../src/store/codec.js';
import { ev } from './helpers.js';

test('codec: header fields round-trip and the JSON bytes are kept as given', () => {
  const e = ev({ kind: 30023, created_at: 4_000_000_000, content: 'héllo 🕸 "quoted"', tags: [['d', 'x']] });
  const json = JSON.stringify(e);
  const v = encodeValue(e, json, null);
  assert.equal(headerLength(v), FIXED_HEADER);
  assert.deepEqual(decodeHeader(v), { id: e.id, pubkey: e.pubkey, created_at: e.created_at, kind: 30023, expiration: null, jsonStart: FIXED_HEADER });
  assert.equal(jsonOf(v), json);
  assert.deepEqual(decodeEvent(v), e);
  assert.equal(createdAtOf(v), 4_000_000_000);
  assert.equal(kindOf(v), 30023);
});

test('codec: expiration is stored after the fixed header', () => {
  const e = ev({ tags: [['expiration', '1800000000']] });
  const json = JSON.stringify(e);
  const v = encodeValue(e, json, 1_800_000_000);
  assert.equal(headerLength(v), FIXED_HEADER + 6);
  assert.equal(decodeHeader(v).expiration, 1_800_000_000);
  assert.equal(jsonOf(v), json);
  // huge expirations are clamped, not wrapped
  assert.equal(decodeHeader(encodeValue(e, json, Number.MAX_SAFE_INTEGER)).expiration, 2 ** 48 - 1);
});

test('codec: JSON text is not re-serialized (non-canonical spacing survives)', () => {
  const e = ev();
  const json = JSON.stringify(e, null, 1);
  assert.equal(jsonOf(encodeValue(e, json, null)), json);
});
