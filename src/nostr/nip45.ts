// NIP-45 HyperLogLog: 256 one-byte registers over the pubkeys of the counted events, so a client can
// merge the answers of several relays (register-wise max) and estimate the union's size. Pure: no I/O.
//
// The relay side is fixed by the NIP: an `offset` (8..23) derived from the filter's first tag
// value; for each counted event, the byte of its pubkey at `offset` picks the register, and the
// number of leading zero bits of the next 7 bytes (56 bits) plus one is the candidate value.
import { createHash } from 'node:crypto';
import type { Filter } from './filter.js';
import { isHex64, nibble } from './hex.js';

export const HLL_REGISTERS = 256;

/** The 64-hex string NIP-45 derives the offset from: ids and pubkeys as they are, an address's pubkey, else sha256. */
function offsetSource(value: string): string {
  if (isHex64(value)) return value;
  const parts = value.split(':');
  if (parts.length >= 3 && /^\d+$/.test(parts[0]!) && isHex64(parts[1]!)) return parts[1]!;
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

/** NIP-45 offset of a tag value: 8 + the hex digit at position 32 of its 64-hex source. */
export const hllOffsetOfValue = (value: string): number => 8 + Number.parseInt(offsetSource(value)[32]!, 16);

/** The offset for a filter (its first tag condition's first value), or null when it has no tag condition. */
export function hllOffset(f: Filter): number | null {
  const first = f.tags?.[0];
  if (!first || first[1].length === 0) return null;
  return hllOffsetOfValue(first[1][0]!);
}

/** The register value of the pubkey bytes at `p` (the register's index is the byte at p): 1 + the leading zero bits of the 7 bytes after it. */
function rankAt(pk: Uint8Array, p: number): number {
  let zeros = 0;
  for (let i = 1; i < 8; i++) {
    const b = pk[p + i]!;
    if (b === 0) {
      zeros += 8;
      continue;
    }
    zeros += Math.clz32(b) - 24;
    break;
  }
  return zeros + 1;
}

/**
 * The register index and value one pubkey (32 bytes at `at` of `pk`) contributes at `offset`, as one
 * number, register << 8 | value: what a follow adds to its followee's counter (counters.ts keeps an
 * author's sixteen, one per offset, and logs one number per follow).
 */
export function hllPointCode(pk: Uint8Array, at: number, offset: number): number {
  const p = at + offset;
  return (pk[p]! << 8) | rankAt(pk, p);
}

/** Adds one pubkey (32 bytes at `at` of `pk`) to dense registers (an import's merge adds one per follow). */
export function hllAdd(registers: Uint8Array, pk: Uint8Array, at: number, offset: number): void {
  const p = at + offset;
  const r = pk[p]!;
  const v = rankAt(pk, p);
  if (v > registers[r]!) registers[r] = v;
}

/** The 8 bytes hllAddHex decodes: the register byte and the 7 after it. */
const hexBytes = new Uint8Array(8);

/**
 * hllAdd for a pubkey given as its 64 lowercase hex digits (a stored event's pubkey, validated at
 * the edge): the writer adds one per follow it counts, and decoding each whole pubkey into a Buffer
 * first was about a seventh of the counters' time in an import. Only the 8 bytes NIP-45 reads are
 * decoded, into a scratch array that hllAdd reads as if it held the pubkey from `offset` on.
 */
export function hllAddHex(registers: Uint8Array, pkHex: string, offset: number): void {
  for (let i = 0, c = 2 * offset; i < 8; i++, c += 2) hexBytes[i] = (nibble(pkHex.charCodeAt(c)) << 4) | nibble(pkHex.charCodeAt(c + 1));
  hllAdd(registers, hexBytes, -offset, offset);
}

/** Register-wise max: the HLL of the union. */
export function hllMerge(into: Uint8Array, other: Uint8Array): void {
  for (let i = 0; i < HLL_REGISTERS; i++) if (other[i]! > into[i]!) into[i] = other[i]!;
}

/** The usual HyperLogLog estimate for 256 registers (linear counting for small cardinalities); ~6.5% standard error. */
export function hllEstimate(registers: Uint8Array): number {
  const m = HLL_REGISTERS;
  let sum = 0;
  let zeros = 0;
  for (let i = 0; i < m; i++) {
    sum += 2 ** -registers[i]!;
    if (registers[i] === 0) zeros++;
  }
  const alpha = 0.7213 / (1 + 1.079 / m);
  const raw = (alpha * m * m) / sum;
  if (raw <= 2.5 * m && zeros > 0) return Math.round(m * Math.log(m / zeros));
  return Math.round(raw);
}

export const hllHex = (registers: Uint8Array): string => Buffer.from(registers.buffer, registers.byteOffset, HLL_REGISTERS).toString('hex');
