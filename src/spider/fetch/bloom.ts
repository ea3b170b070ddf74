// A fixed-size Bloom filter over 64-hex strings (event ids, pubkeys): constant memory whatever the
// number of items, "maybe present" or "certainly absent". The strings are already uniformly random
// (sha256 output, curve points), so its k bit positions are read straight from k 32-bit groups of
// the hex (or of the 32 raw bytes), without hashing. Callers use it only where a false "maybe
// present" costs work or ordering, never an event.
export class HexBloom {
  private readonly bits: Uint32Array;
  private readonly mask: number;

  /** 2^log2Bits bits (log2Bits 20: 128 KiB), k positions per item (at most 8). */
  constructor(log2Bits: number, private readonly k = 4) {
    if (log2Bits < 5 || log2Bits > 32 || k < 1 || k > 8) throw new RangeError('HexBloom: 5 <= log2Bits <= 32, 1 <= k <= 8');
    this.bits = new Uint32Array(2 ** (log2Bits - 5));
    this.mask = 2 ** log2Bits - 1;
  }

  private test(pos: number, set: boolean): boolean {
    const p = (pos & this.mask) >>> 0;
    const w = p >>> 5, b = 1 << (p & 31);
    const had = (this.bits[w]! & b) !== 0;
    if (set) this.bits[w]! |= b;
    return had;
  }

  private each(hex: string, set: boolean): boolean {
    let all = true;
    for (let i = 0; i < this.k; i++) if (!this.test(hex32(hex, i * 8), set)) all = false;
    return all;
  }

  /** Maybe added before (true), or certainly not (false). */
  has(hex: string): boolean {
    return this.each(hex, false);
  }

  /** Adds; returns whether it was maybe present already. */
  add(hex: string): boolean {
    return this.each(hex, true);
  }

  /** Adds the 32 raw bytes of a 64-hex value (the same positions as add(hex)). */
  addBytes(b: Uint8Array): void {
    const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
    for (let i = 0; i < this.k; i++) this.test(v.getUint32(i * 4), true);
  }
}

/** The 32-bit number of 8 hex characters at `at` (no substring, no parseInt; non-hex reads as garbage bits). */
function hex32(s: string, at: number): number {
  let v = 0;
  for (let i = at; i < at + 8; i++) {
    const c = s.charCodeAt(i);
    v = (v << 4) | (c <= 57 ? c - 48 : (c | 32) - 87);
  }
  return v >>> 0;
}
