import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  addrKey,
  expiryKey,
  keyCreatedAt,
  keySerial,
  kindPrefix,
  MAX_SERIAL,
  readSerial,
  serialKey,
  tagPrefix,
  timeRange,
  timeRanges,
  tombIdKey,
  withSuffix,
} from '../../src/store/keys.js';
import { isHex64 } from '../../src/nostr/hex.js';
import { hex } from './helpers.js';

test('keys: serials are 5 bytes big-endian, so byte order is numeric order', () => {
  assert.equal(serialKey(1).length, 5);
  assert.equal(readSerial(serialKey(MAX_SERIAL)), MAX_SERIAL);
  const nums = [1, 255, 256, 65536, 2 ** 32, 2 ** 32 + 1, MAX_SERIAL];
  const keys = nums.map(serialKey).sort(Buffer.compare);
  assert.deepEqual(keys.map((k) => readSerial(k)), nums);
});

test('keys: time-ordered keys end in created_at + serial and sort by them within a prefix', () => {
  const p = kindPrefix(1);
  const k = withSuffix(p, 1_700_000_000, 42);
  assert.equal(k.length, 2 + 9);
  assert.equal(keyCreatedAt(k), 1_700_000_000);
  assert.equal(keySerial(k), 42);
  const a = withSuffix(p, 100, 900);
  const b = withSuffix(p, 101, 1);
  assert.ok(Buffer.compare(a, b) < 0, 'created_at dominates serial');
  assert.ok(Buffer.compare(withSuffix(p, 100, 1), a) < 0, 'serial orders within one created_at');
  // other kinds' entries never fall inside kind 1's range
  assert.ok(Buffer.compare(withSuffix(kindPrefix(0), 0xffffffff, MAX_SERIAL), withSuffix(p, 0, 0)) < 0);
});

test('keys: timeRange covers since..until inclusive and nothing else', () => {
  const p = kindPrefix(7);
  const { start, end } = timeRange(p, 10, 20);
  const inRange = (k: Buffer): boolean => Buffer.compare(k, start) <= 0 && Buffer.compare(k, end) > 0;
  assert.ok(inRange(withSuffix(p, 10, 1)));
  assert.ok(inRange(withSuffix(p, 20, MAX_SERIAL)));
  assert.ok(!inRange(withSuffix(p, 9, MAX_SERIAL)));
  assert.ok(!inRange(withSuffix(p, 21, 1)));
  assert.ok(!inRange(withSuffix(kindPrefix(8), 15, 1)));
});

test('keys: timeRanges of packed prefixes are timeRange of each prefix', () => {
  const prefixes = [Buffer.from(hex().slice(0, 20), 'hex'), Buffer.from(hex().slice(0, 20), 'hex'), Buffer.alloc(10, 0xff)];
  const ranges = timeRanges(Buffer.concat(prefixes), 10, 100, 200);
  assert.equal(ranges.length, 3);
  ranges.forEach((r, i) => {
    const one = timeRange(prefixes[i]!, 100, 200);
    assert.deepEqual([r.start, r.end], [one.start, one.end]);
  });
  assert.deepEqual(timeRanges(Buffer.alloc(0), 8, 0, 1), []);
});

test('keys: tag values are typed: hex exact, short inline exact, long hashed', () => {
  const h = hex();
  const t1 = tagPrefix('e', h);
  assert.equal(t1.exact, true);
  assert.equal(t1.prefix.length, 1 + 1 + 32);
  assert.deepEqual(t1.prefix.subarray(2), Buffer.from(h, 'hex'));

  const t2 = tagPrefix('t', 'nostr');
  assert.equal(t2.exact, true);
  assert.deepEqual(t2.prefix, Buffer.from([0x74, 5, ...Buffer.from('nostr')]));

  const long = 'https://example.com/'.repeat(3);
  const t3 = tagPrefix('r', long);
  assert.equal(t3.exact, false);
  assert.equal(t3.prefix.length, 1 + 1 + 8);

  // uppercase hex is not the 64-hex form: it must not collide with the lowercase value
  assert.notDeepEqual(tagPrefix('e', h.toUpperCase()).prefix, t1.prefix);
  // lone surrogates can't be inlined exactly
  assert.equal(tagPrefix('t', 'a\ud800').exact, false);
  // a non-ASCII single-letter name
  assert.deepEqual(tagPrefix('é', 'x').prefix.subarray(0, 3), Buffer.from([0xff, 0x00, 0xe9]));
  assert.equal(tagPrefix('t', '').exact, true);
});

test('keys: one value range never contains another value (self-delimiting prefixes)', () => {
  const values = ['', 'a', 'ab', 'abc', 'a'.repeat(32), 'a'.repeat(33), hex(), 'b'];
  const keys = values.map((v) => withSuffix(tagPrefix('t', v).prefix, 1000, 1));
  for (let i = 0; i < values.length; i++) {
    const { start, end } = timeRange(tagPrefix('t', values[i]).prefix, 0, 0xffffffff);
    for (let j = 0; j < values.length; j++) {
      const inside = Buffer.compare(keys[j], start) <= 0 && Buffer.compare(keys[j], end) > 0;
      assert.equal(inside, i === j, `${JSON.stringify(values[i])} vs ${JSON.stringify(values[j])}`);
    }
  }
});

test('keys: addresses, tombstones and expiry', () => {
  const pk = hex();
  assert.equal(addrKey(30023, pk, 'a').length, 66);
  assert.notDeepEqual(addrKey(30023, pk, 'a'), addrKey(30023, pk, 'b'));
  assert.notDeepEqual(addrKey(30023, pk, '\ud800'), addrKey(30023, pk, '\ud801'));
  assert.deepEqual(addrKey(30023, pk, ''), addrKey(30023, pk, ''));
  const id = hex();
  assert.deepEqual(tombIdKey(id, pk), Buffer.from(id + pk, 'hex'));
  const e = expiryKey(2 ** 40, 5);
  assert.equal(e.readUInt32BE(0), 0xffffffff, 'clamped');
  assert.ok(Buffer.compare(expiryKey(10, MAX_SERIAL), expiryKey(11, 1)) < 0);
});

test('isHex64: 64 lowercase hex digits exactly (what makes a tag value exact and countable)', () => {
  const h = '0123456789abcdef'.repeat(4);
  assert.equal(isHex64(h), true);
  assert.equal(isHex64(h.slice(1)), false);
  assert.equal(isHex64(h + '0'), false);
  assert.equal(isHex64(h.toUpperCase()), false);
  // the characters just outside each range of digits
  for (const c of ['/', ':', '`', 'g', 'A', 'F', ' ', '\u0660']) assert.equal(isHex64(c + h.slice(1)), false, JSON.stringify(c));
  for (const c of ['0', '9', 'a', 'f']) assert.equal(isHex64(h.slice(1) + c), true, c);
});
