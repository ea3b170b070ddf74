// Committed pubkey ids this process has read, found by the pubkey's hex without hashing it as a
// string. A follow list names the same popular pubkeys again and again, so graph.ts looks an id up
// here once per follow; as a Map keyed by the 64-character strings that lookup was most of the
// import's id work (each new string hashed, then compared with a key string elsewhere in the heap:
// ~1.4 µs a lookup at a million entries). Here a pubkey's first 8 bytes, read from its hex, pick the
// slot (pubkeys are uniformly random) and the whole key is compared byte by byte against an arena,
// so two pubkeys that share a prefix (which anyone can grind) are never taken for each other.

import { nibble } from '../nostr/nip45.js';

/** Four bytes of a hex string from character `at`, as an unsigned 32-bit word. */
function word(hex: string, at: number): number {
  let w = 0;
  for (let i = at; i < at + 8; i++) w = (w << 4) | nibble(hex.charCodeAt(i));
  return w >>> 0;
}

/** Entries a cache starts with room for: it doubles up to its max (a test's store holds a few). */
const FIRST = 1024;
/** words per slot: entry + 1 (0: empty), the pubkey's second word (checked before the arena is read), the id */
const SLOT = 3;

export class PubkeyIdCache {
  /** slots side by side (SLOT words each), twice the entries' room so probes stay short: a hit reads one slot and one key */
  private slots = new Uint32Array(SLOT * 2 * FIRST);
  /** entry -> the pubkey's 32 bytes */
  private keys = Buffer.allocUnsafe(32 * FIRST);
  private room = FIRST;
  private n = 0;

  /** `max` entries at most: when full it is emptied and fills again (what is read most comes back first). */
  constructor(readonly max: number) {}

  get size(): number {
    return this.n;
  }

  /** The word offset of the slot holding this pubkey, or of the empty slot where it would go (negative: -offset - 1). */
  private find(hex: string): number {
    const a = word(hex, 0);
    const b = word(hex, 8);
    const slots = this.slots;
    const mask = slots.length / SLOT - 1;
    for (let s = a & mask; ; s = (s + 1) & mask) {
      const o = SLOT * s;
      const e = slots[o]!;
      if (e === 0) return -o - 1;
      if (slots[o + 1] === b && this.same(e - 1, hex, a, b)) return o;
    }
  }

  private same(entry: number, hex: string, a: number, b: number): boolean {
    const k = this.keys;
    const at = 32 * entry;
    if (k.readUInt32BE(at) !== a || k.readUInt32BE(at + 4) !== b) return false;
    for (let i = 8; i < 32; i += 4) if (k.readUInt32BE(at + i) !== word(hex, 2 * i)) return false;
    return true;
  }

  get(hex: string): number | undefined {
    const o = this.find(hex);
    return o < 0 ? undefined : this.slots[o + 2];
  }

  set(hex: string, id: number): void {
    const o = this.find(hex);
    if (o >= 0) {
      this.slots[o + 2] = id;
      return;
    }
    if (this.n >= this.max) this.clear();
    else if (this.n === this.room) this.grow();
    const e = this.n++;
    this.keys.write(hex, 32 * e, 32, 'hex');
    this.place(e, id);
  }

  /** Puts entry e into its slot (the first empty one from where its first word points). */
  private place(e: number, id: number): void {
    const at = 32 * e;
    const slots = this.slots;
    const mask = slots.length / SLOT - 1;
    let s = this.keys.readUInt32BE(at) & mask;
    while (slots[SLOT * s] !== 0) s = (s + 1) & mask;
    slots[SLOT * s] = e + 1;
    slots[SLOT * s + 1] = this.keys.readUInt32BE(at + 4);
    slots[SLOT * s + 2] = id;
  }

  private grow(): void {
    const room = Math.min(this.max, 2 * this.room);
    const keys = Buffer.allocUnsafe(32 * room);
    this.keys.copy(keys, 0, 0, 32 * this.n);
    const old = this.slots;
    let cap = 1;
    while (cap < 2 * room) cap *= 2;
    this.slots = new Uint32Array(SLOT * cap);
    this.keys = keys;
    this.room = room;
    for (let o = 0; o < old.length; o += SLOT) if (old[o] !== 0) this.place(old[o]! - 1, old[o + 2]!);
  }

  clear(): void {
    this.slots.fill(0);
    this.n = 0;
  }
}
