// Byte layouts of the keys of every index. All integers are big-endian so byte order is numeric
// order. Time-ordered indexes end in created_at (4 bytes) + serial (5 bytes): one value's entries
// form a contiguous range sorted by time, since/until bound the range, and newest-first is a
// reverse scan. Index values are empty: the serial in the key is all a scan needs.
import { hash } from 'node:crypto';
import { isHex64 } from '../nostr/hex.js';

export const SERIAL_BYTES = 5;
/** created_at (4) + serial (5) */
export const SUFFIX_BYTES = 9;
export const MAX_SERIAL = 2 ** (8 * SERIAL_BYTES) - 1;
/** Pubkeys are indexed by their first 8 bytes: compact keys; scans re-check the full pubkey in the header. */
export const PK_PREFIX_BYTES = 8;
export const EMPTY = Buffer.alloc(0);
/** meta key of the next event serial (txn.ts writes it; query.ts reads the last serial from it) */
export const NEXT_SERIAL_KEY = 'nextSerial';

export function serialKey(serial: number): Buffer {
  const b = Buffer.allocUnsafe(SERIAL_BYTES);
  b.writeUIntBE(serial, 0, SERIAL_BYTES);
  return b;
}
const serialScratch = Buffer.allocUnsafe(SERIAL_BYTES);
/**
 * A serial key in one shared scratch buffer, valid until the next call: for reads only (lmdb-js
 * copies a key before a get), where a scan's per-event allocation of a key showed in its profile.
 */
export function serialKeyRef(serial: number): Buffer {
  serialScratch.writeUIntBE(serial, 0, SERIAL_BYTES);
  return serialScratch;
}
export const readSerial = (b: Buffer, offset = 0): number => b.readUIntBE(offset, SERIAL_BYTES);

/** created_at of a time-ordered index key */
export const keyCreatedAt = (key: Buffer): number => key.readUInt32BE(key.length - SUFFIX_BYTES);
/** serial of a time-ordered index key */
export const keySerial = (key: Buffer): number => key.readUIntBE(key.length - SERIAL_BYTES, SERIAL_BYTES);

/** prefix + created_at + serial */
export function withSuffix(prefix: Uint8Array, createdAt: number, serial: number): Buffer {
  const b = Buffer.allocUnsafe(prefix.length + SUFFIX_BYTES);
  b.set(prefix, 0);
  b.writeUInt32BE(createdAt, prefix.length);
  b.writeUIntBE(serial, prefix.length + 4, SERIAL_BYTES);
  return b;
}

export const hexBytes = (hex: string): Buffer => Buffer.from(hex, 'hex');

// ---- prefixes of the time-ordered indexes ----

export const CREATED_PREFIX = EMPTY;

export function kindPrefix(kind: number): Buffer {
  const b = Buffer.allocUnsafe(2);
  b.writeUInt16BE(kind, 0);
  return b;
}

// ---- tag index ----
// key = name + type + value bytes + created_at + serial. The type byte makes each value's prefix
// self-delimiting (no value's range contains another value's entries):
//   0x00-0x20  the value's UTF-8 bytes inline, type = length (exact)
//   0x80       a 64-char lowercase hex value as its 32 bytes (exact: e and p tags stay exact)
//   0x81       8 bytes of sha256 of anything else (NOT exact: scans re-check the real tags)
// Name: a single UTF-16 code unit (what a filter's "#x" can name): 1 byte when ASCII, else 0xff + 2 bytes.

const INLINE_MAX = 32;
export const TYPE_HEX = 0x80;
const TYPE_HASH = 0x81;
const HASH_BYTES = 8;

export interface TagPrefix {
  prefix: Buffer;
  /** true when equal prefixes imply equal (name, value) */
  exact: boolean;
}

const isWellFormed = (s: string): boolean => (s as unknown as { isWellFormed(): boolean }).isWellFormed();

/** Longest tag prefix: 3 name bytes + type + 32 bytes. */
export const MAX_TAG_PREFIX = 36;

/**
 * Writes the tag prefix of (name, value) into `buf` at `at` (MAX_TAG_PREFIX bytes must be free);
 * returns where it ends, negated when the prefix is not exact (hashed). The indexer builds its keys
 * in one scratch buffer this way, without allocating per tag.
 */
export function writeTagPrefix(buf: Buffer, at: number, name: string, value: string): number {
  const code = name.charCodeAt(0);
  let o = at;
  if (code < 0x80) buf[o++] = code;
  else {
    buf[o++] = 0xff;
    buf[o++] = code >> 8;
    buf[o++] = code & 0xff;
  }
  if (isHex64(value)) {
    buf[o++] = TYPE_HEX;
    buf.write(value, o, 32, 'hex');
    return o + 32;
  }
  const len = Buffer.byteLength(value, 'utf8');
  // Lone surrogates do not survive UTF-8 encoding, so such values are hashed and re-checked.
  if (len <= INLINE_MAX && (len === value.length || isWellFormed(value))) {
    buf[o++] = len;
    buf.write(value, o, len, 'utf8');
    return o + len;
  }
  buf[o++] = TYPE_HASH;
  hash('sha256', value, 'buffer').copy(buf, o, 0, HASH_BYTES);
  return -(o + HASH_BYTES);
}

const prefixScratch = Buffer.allocUnsafe(MAX_TAG_PREFIX);

export function tagPrefix(name: string, value: string): TagPrefix {
  const end = writeTagPrefix(prefixScratch, 0, name, value);
  return { prefix: Buffer.from(prefixScratch.subarray(0, Math.abs(end))), exact: end > 0 };
}

/** Where a tag prefix's type byte is (after the 1- or 3-byte name). */
export const tagTypeAt = (prefix: Uint8Array): number => (prefix[0] === 0xff ? 3 : 1);

// ---- tag+kind index ----
// key = tag prefix (above) + kind (2) + created_at + serial: one (name, value, kind) is one
// contiguous time-ordered range, so {kinds, #x} filters read only matching entries, and a tag's
// entries for one kind can be counted natively. Filters without kinds merge the ranges of the
// kinds a value has (found by seeking from kind to kind, see planner.ts).

export function tagKindPrefix(tag: Uint8Array, kind: number): Buffer {
  const b = Buffer.allocUnsafe(tag.length + 2);
  b.set(tag, 0);
  b.writeUInt16BE(kind, tag.length);
  return b;
}

// ---- non-time-ordered keys ----

/** id index: 32 id bytes -> serial */
export const idKey = (idHex: string): Buffer => Buffer.from(idHex, 'hex');

/**
 * Replaceable/addressable address: kind (2) + pubkey (32) + sha256(d as UTF-16LE) (32).
 * Hashing keeps keys short for long d tags; UTF-16LE keeps lone surrogates distinct; a sha256
 * collision is not a practical concern, so the address needs no re-check.
 */
export function addrKey(kind: number, pubkeyHex: string, d: string): Buffer {
  const b = Buffer.allocUnsafe(66);
  b.writeUInt16BE(kind, 0);
  b.write(pubkeyHex, 2, 32, 'hex');
  (d === '' ? EMPTY_D_HASH : hash('sha256', Buffer.from(d, 'utf16le'), 'buffer')).copy(b, 34);
  return b;
}
/** sha256 of the empty d tag: every replaceable event's address (looked up 150 at a time by outbox clients) */
const EMPTY_D_HASH = hash('sha256', Buffer.alloc(0), 'buffer');

/** Pubkey part of a tombstone that blocks the id whoever the author (operator ban). */
export const ANY_PUBKEY = '0'.repeat(64);

/** id tombstone: id (32) + deleting pubkey (32), empty value. Several authors may "delete" one id. */
export function tombIdKey(idHex: string, pubkeyHex: string): Buffer {
  const b = Buffer.allocUnsafe(64);
  b.write(idHex, 0, 32, 'hex');
  b.write(pubkeyHex, 32, 32, 'hex');
  return b;
}

/** expiration index: expiration (4, clamped) + serial (5) */
export const MAX_INDEXED_EXPIRATION = 0xffffffff;
export function expiryKey(expiration: number, serial: number): Buffer {
  const b = Buffer.allocUnsafe(4 + SERIAL_BYTES);
  b.writeUInt32BE(Math.min(expiration, MAX_INDEXED_EXPIRATION), 0);
  b.writeUIntBE(serial, 4, SERIAL_BYTES);
  return b;
}
export const expiryKeyTime = (key: Buffer): number => key.readUInt32BE(0);
export const expiryKeySerial = (key: Buffer): number => key.readUIntBE(4, SERIAL_BYTES);

/** uint32 value (address tombstone: the deletion's created_at) */
export function u32(n: number): Buffer {
  const b = Buffer.allocUnsafe(4);
  b.writeUInt32BE(n, 0);
  return b;
}

/**
 * Bounds of a reverse scan over one prefix restricted to since..until (inclusive):
 * start is the highest key (inclusive), end the lowest (exclusive; serial 0 is never used).
 */
export function timeRange(prefix: Uint8Array, since: number, until: number): { start: Buffer; end: Buffer } {
  return { start: withSuffix(prefix, until, MAX_SERIAL), end: withSuffix(prefix, since, 0) };
}

/**
 * timeRange of each prefix packed in `prefixes` (prefixLen bytes each), every key in one
 * allocation. A home feed of 1,000 authors x 2 kinds is 2,000 ranges, and a Buffer per prefix and
 * per key (plus a string per prefix to drop repeats) took about as long as the 2,000 seeks.
 */
export function timeRanges(prefixes: Buffer, prefixLen: number, since: number, until: number): Array<{ start: Buffer; end: Buffer }> {
  const n = prefixes.length / prefixLen;
  const len = prefixLen + SUFFIX_BYTES;
  const buf = Buffer.allocUnsafe(2 * len * n);
  const out = new Array<{ start: Buffer; end: Buffer }>(n);
  for (let i = 0; i < n; i++) {
    const s = 2 * len * i;
    const e = s + len;
    for (let j = 0, p = i * prefixLen; j < prefixLen; j++, p++) buf[s + j] = buf[e + j] = prefixes[p]!;
    buf.writeUInt32BE(until, s + prefixLen);
    buf.writeUIntBE(MAX_SERIAL, s + prefixLen + 4, SERIAL_BYTES);
    buf.writeUInt32BE(since, e + prefixLen);
    buf.writeUIntBE(0, e + prefixLen + 4, SERIAL_BYTES);
    out[i] = { start: buf.subarray(s, e), end: buf.subarray(e, e + len) };
  }
  return out;
}
