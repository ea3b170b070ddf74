// The sorted item set one side of a negentropy reconciliation holds (NIP-77 appendix, protocol
// version 1): records of (timestamp, 32-byte id) in ascending order, with the range fingerprints
// the protocol exchanges. Pure: no I/O.
//
// Records are packed in one byte array, RECORD_BYTES each: created_at as uint32 little-endian, then
// the id. The store produces this layout directly (one allocation, transferable between threads),
// so a set of a million events costs 36 MB and no per-item objects. Nostr timestamps fit 32 bits
// (the store refuses later ones); the protocol's 64-bit bound timestamps are compared as numbers.
//
// Fingerprints: the sum of the ids mod 2^256 (each id read as a little-endian integer), followed
// by the count as a varint, hashed with SHA-256 and cut to 16 bytes. Sums of any range come from
// prefix sums kept every BLOCK items, so a fingerprint costs at most 2 x BLOCK additions however
// wide the range is: a reconciliation round over a large set does not re-add every id.
import { hash } from 'node:crypto';

export const ID_SIZE = 32;
export const FINGERPRINT_SIZE = 16;
export const RECORD_BYTES = 4 + ID_SIZE;
/** items between two stored prefix sums */
const BLOCK = 32;
const LIMBS = 8;
const WORDS_PER_RECORD = RECORD_BYTES / 4;
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/** A position in the (timestamp, id) order: items below it sort before it. `id` may be a prefix (0-32 bytes, zero-padded). */
export interface Bound {
  timestamp: number;
  id: Uint8Array;
}

export class NegentropyError extends Error {}

export class NegentropyStorage {
  readonly size: number;
  private readonly view: DataView;
  /** the records as 32-bit words when they can be read so directly (aligned, little-endian machine) */
  private readonly words: Uint32Array | null;
  /** sum of the ids of items [0, k*BLOCK), LIMBS little-endian uint32 limbs per k */
  private readonly prefix: Uint32Array;

  private constructor(readonly records: Uint8Array) {
    if (records.length % RECORD_BYTES !== 0) throw new NegentropyError('record buffer is not a whole number of records');
    this.size = records.length / RECORD_BYTES;
    this.view = new DataView(records.buffer, records.byteOffset, records.byteLength);
    this.words = LITTLE_ENDIAN && records.byteOffset % 4 === 0 ? new Uint32Array(records.buffer, records.byteOffset, records.byteLength / 4) : null;
    const blocks = Math.floor(this.size / BLOCK);
    this.prefix = new Uint32Array((blocks + 1) * LIMBS);
    const acc = new Uint32Array(LIMBS);
    for (let b = 0; b < blocks; b++) {
      for (let i = b * BLOCK; i < (b + 1) * BLOCK; i++) this.addItem(acc, i);
      this.prefix.set(acc, (b + 1) * LIMBS);
    }
  }

  /** Records already sorted ascending by (timestamp, id) without duplicates; checked, O(n). */
  static fromRecords(records: Uint8Array): NegentropyStorage {
    const s = new NegentropyStorage(records);
    for (let i = 1; i < s.size; i++) {
      if (s.compareItems(i - 1, i) >= 0) throw new NegentropyError(`records are not sorted and unique at index ${i}`);
    }
    return s;
  }

  /** Any items, in any order (ids as hex or bytes); sorted here. Duplicates are an error, as in the reference. */
  static fromItems(items: Iterable<{ timestamp: number; id: string | Uint8Array }>): NegentropyStorage {
    const list: Array<{ timestamp: number; id: Uint8Array }> = [];
    for (const it of items) {
      const id = typeof it.id === 'string' ? hexToBytes(it.id) : it.id;
      if (id.length !== ID_SIZE) throw new NegentropyError('bad id size for added item');
      if (!Number.isInteger(it.timestamp) || it.timestamp < 0 || it.timestamp > 0xffffffff) throw new NegentropyError('item timestamps must be integers 0-2^32-1');
      list.push({ timestamp: it.timestamp, id });
    }
    list.sort((a, b) => a.timestamp - b.timestamp || compareBytes(a.id, b.id));
    const records = new Uint8Array(list.length * RECORD_BYTES);
    const view = new DataView(records.buffer);
    list.forEach((it, i) => {
      view.setUint32(i * RECORD_BYTES, it.timestamp, true);
      records.set(it.id, i * RECORD_BYTES + 4);
    });
    return NegentropyStorage.fromRecords(records);
  }

  timestamp(i: number): number {
    return this.view.getUint32(i * RECORD_BYTES, true);
  }

  /** The id of item i (a view into the records, not a copy). */
  id(i: number): Uint8Array {
    const off = i * RECORD_BYTES + 4;
    return this.records.subarray(off, off + ID_SIZE);
  }

  idHex(i: number): string {
    return bytesToHex(this.id(i));
  }

  /** The first index in [begin, end) whose item is not below `bound`, or end. */
  findLowerBound(begin: number, end: number, bound: Bound): number {
    let lo = begin;
    let hi = end;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.itemBelow(mid, bound)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** The 16-byte fingerprint of items [begin, end). */
  fingerprint(begin: number, end: number): Uint8Array {
    if (begin < 0 || end > this.size || begin > end) throw new NegentropyError('bad range');
    const acc = new Uint32Array(LIMBS);
    const firstBlock = Math.ceil(begin / BLOCK);
    const lastBlock = Math.floor(end / BLOCK);
    if (lastBlock - firstBlock >= 1) {
      // whole blocks from the prefix sums, the ragged ends item by item
      acc.set(this.prefix.subarray(lastBlock * LIMBS, (lastBlock + 1) * LIMBS));
      subLimbs(acc, this.prefix, firstBlock * LIMBS);
      for (let i = begin; i < firstBlock * BLOCK; i++) this.addItem(acc, i);
      for (let i = lastBlock * BLOCK; i < end; i++) this.addItem(acc, i);
    } else {
      for (let i = begin; i < end; i++) this.addItem(acc, i);
    }
    return fingerprintOf(acc, end - begin);
  }

  private addItem(acc: Uint32Array, i: number): void {
    const w = this.words;
    if (w) {
      // aligned little-endian words: record i's id limbs are words 9i+1 .. 9i+8
      let carry = 0;
      const base = i * WORDS_PER_RECORD + 1;
      for (let l = 0; l < LIMBS; l++) {
        const s = acc[l] + w[base + l] + carry;
        acc[l] = s >>> 0;
        carry = s > 0xffffffff ? 1 : 0;
      }
      return;
    }
    const v = this.view;
    const off = i * RECORD_BYTES + 4;
    let carry = 0;
    for (let l = 0; l < LIMBS; l++) {
      const s = acc[l] + v.getUint32(off + 4 * l, true) + carry;
      acc[l] = s >>> 0;
      carry = s > 0xffffffff ? 1 : 0;
    }
  }

  private itemBelow(i: number, b: Bound): boolean {
    const ts = this.timestamp(i);
    if (ts !== b.timestamp) return ts < b.timestamp;
    const off = i * RECORD_BYTES + 4;
    const r = this.records;
    for (let k = 0; k < b.id.length; k++) {
      if (r[off + k] !== b.id[k]) return r[off + k] < b.id[k];
    }
    return false; // equal on the bound's prefix: the rest of the bound is zeros, so the item is not below it
  }

  private compareItems(a: number, b: number): number {
    const d = this.timestamp(a) - this.timestamp(b);
    if (d !== 0) return d;
    return compareBytes(this.id(a), this.id(b));
  }
}

/** acc -= src[at .. at+LIMBS) mod 2^256 */
function subLimbs(acc: Uint32Array, src: Uint32Array, at: number): void {
  let borrow = 0;
  for (let l = 0; l < LIMBS; l++) {
    const d = acc[l] - src[at + l] - borrow;
    acc[l] = d >>> 0;
    borrow = d < 0 ? 1 : 0;
  }
}

function fingerprintOf(acc: Uint32Array, count: number): Uint8Array {
  const input = Buffer.alloc(ID_SIZE + 10);
  for (let l = 0; l < LIMBS; l++) input.writeUInt32LE(acc[l], 4 * l);
  const n = writeVarint(input, ID_SIZE, count);
  return new Uint8Array(hash('sha256', input.subarray(0, n), 'buffer').subarray(0, FINGERPRINT_SIZE));
}

/** Writes a varint at `at`; returns the offset after it. Base-128, most significant digit first. */
export function writeVarint(out: Uint8Array, at: number, n: number): number {
  if (n === 0) {
    out[at] = 0;
    return at + 1;
  }
  const digits: number[] = [];
  while (n > 0) {
    digits.push(n % 128);
    n = Math.floor(n / 128);
  }
  for (let i = digits.length - 1; i >= 0; i--) out[at++] = digits[i] | (i > 0 ? 0x80 : 0);
  return at;
}

export function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
}

const HEX = /^(?:[0-9a-fA-F]{2})*$/;

/** Strict hex decoding (Buffer.from would silently stop at the first bad character). */
export function hexToBytes(hex: string): Uint8Array {
  if (!HEX.test(hex)) throw new NegentropyError('not a hex string of whole bytes');
  return new Uint8Array(Buffer.from(hex, 'hex'));
}

export const bytesToHex = (b: Uint8Array): string => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');
