// Committed pubkey ids this process has read, found by the pubkey's hex without hashing it as a
// string. A follow list names the same popular pubkeys again and again, so graph.ts looks an id up
// here once per follow; as a Map keyed by the 64-character strings that lookup was most of the
// import's id work (each new string hashed, then compared with a key string elsewhere in the heap:
// ~1.4 µs a lookup at a million entries). Here a pubkey's first 4 bytes, read from its hex, pick the
// slot (pubkeys are uniformly random) and the whole key is compared byte by byte against an arena,
// so two pubkeys that share a prefix (which anyone can grind) are never taken for each other.
//
// An entry costs 48 bytes at most (its key, and two slots of 8 bytes at half load), and the keys
// sit in chunks that are never copied as the cache grows (pubkey-chunks.ts): until the eighteenth session an entry
// cost 56 bytes and the keys doubled into a new buffer (docs/storage.md, "Where the import's
// reading goes").

import { nibble } from '../nostr/hex.js';
import { PubkeyChunks } from './pubkey-chunks.js';

/** Four bytes of a hex string from character `at`, as an unsigned 32-bit word. */
function word(hex: string, at: number): number {
  let w = 0;
  for (let i = at; i < at + 8; i++) w = (w << 4) | nibble(hex.charCodeAt(i));
  return w >>> 0;
}

/** Slots a cache starts with (twice its entries' room: probes stay short); they double as it fills. */
const FIRST_SLOTS = 2048;

/**
 * Slots a lookup probes at most. Anyone chooses the pubkeys a follow list names (a `p` tag is any 64
 * hex digits), so lists of pubkeys that share their first bytes all pick one slot: without a bound
 * each lookup there walked every one of them. A pubkey not found within the bound is a miss (LMDB
 * answers) and is not cached. At half load, 140,000 random pubkeys met runs of more than 32 (two
 * or three each time), and a million none of 128.
 */
const MAX_PROBES = 128;
/** find(): the pubkey is not within MAX_PROBES slots, and no empty slot is either */
const NO_ROOM = Number.MIN_SAFE_INTEGER;

/** bits of a slot's first word that hold entry + 1; the rest hold the top bits of the pubkey's second word */
const ENTRY_BITS = 21;
const ENTRY_MASK = (1 << ENTRY_BITS) - 1;

export class PubkeyIdCache {
  /**
   * per slot two words: entry + 1 (0: empty) with, above it, the top 11 bits of the pubkey's second
   * word (a probe that meets another pubkey reads its key in the arena once in 2,048); the id
   */
  private slots = new Uint32Array(2 * FIRST_SLOTS);
  /** entry -> the pubkey's 32 bytes */
  private readonly keys = new PubkeyChunks();
  private n = 0;

  /** `max` entries at most: when full it is emptied and fills again (what is read most comes back first). */
  constructor(readonly max: number) {
    if (max >= ENTRY_MASK) throw new RangeError(`a pubkey id cache holds fewer than ${ENTRY_MASK} entries`);
  }

  get size(): number {
    return this.n;
  }

  /** Whether entry e's key is the pubkey `hex` (whose first word is `a`). */
  private same(e: number, hex: string, a: number): boolean {
    const k = this.keys.chunk(e);
    const at = this.keys.offset(e);
    if (k.readUInt32BE(at) !== a) return false;
    for (let i = 4; i < 32; i += 4) if (k.readUInt32BE(at + i) !== word(hex, 2 * i)) return false;
    return true;
  }

  /**
   * The word offset of the slot holding this pubkey, or of the empty slot where it would go
   * (negative: -offset - 1), or NO_ROOM.
   */
  private find(hex: string): number {
    const a = word(hex, 0);
    const tag = word(hex, 8) >>> ENTRY_BITS;
    const slots = this.slots;
    const mask = slots.length / 2 - 1;
    for (let s = a & mask, probes = 0; probes < MAX_PROBES; s = (s + 1) & mask, probes++) {
      const w = slots[2 * s]!;
      if (w === 0) return -2 * s - 1;
      if (w >>> ENTRY_BITS === tag && this.same((w & ENTRY_MASK) - 1, hex, a)) return 2 * s;
    }
    return NO_ROOM;
  }

  get(hex: string): number | undefined {
    const o = this.find(hex);
    return o < 0 ? undefined : this.slots[o + 1];
  }

  /** Remembers the id of a pubkey (not when MAX_PROBES slots from where it points are taken: then it stays a miss). */
  set(hex: string, id: number): void {
    let o = this.find(hex);
    if (o >= 0) {
      this.slots[o + 1] = id;
      return;
    }
    if (this.n >= this.max) {
      this.clear();
      o = this.find(hex);
    } else if (2 * (this.n + 1) > this.slots.length / 2) {
      this.grow();
      o = this.find(hex);
    }
    if (o === NO_ROOM) return; // not cached: its lookups go to LMDB
    const e = this.n++;
    this.keys.set(e, hex);
    const s = -o - 1;
    this.slots[s] = ((word(hex, 8) >>> ENTRY_BITS) << ENTRY_BITS) | (e + 1);
    this.slots[s + 1] = id;
  }

  /** Twice the slots, every entry placed again from its key's first word (the keys stay where they are). */
  private grow(): void {
    const old = this.slots;
    const slots = new Uint32Array(2 * old.length);
    const mask = slots.length / 2 - 1;
    for (let o = 0; o < old.length; o += 2) {
      const w = old[o]!;
      if (w === 0) continue;
      const e = (w & ENTRY_MASK) - 1;
      let s = this.keys.chunk(e).readUInt32BE(this.keys.offset(e)) & mask;
      while (slots[2 * s] !== 0) s = (s + 1) & mask;
      slots[2 * s] = w;
      slots[2 * s + 1] = old[o + 1]!;
    }
    this.slots = slots;
  }

  /** Forgets every entry (the chunks are kept and written over as it fills again). */
  clear(): void {
    this.slots.fill(0);
    this.n = 0;
  }
}
