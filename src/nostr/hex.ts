// Lowercase hex, checked and read without a branch per character. Pure: no I/O.
//
// Every tag value of every stored event is asked whether it is 64 lowercase hex (keys.ts: such a
// value is indexed as its 32 bytes; graph.ts: such a `p` tag of a follow list is a follow). Written
// as comparisons, `c > 102 || c < 48 || (c > 57 && c < 97)` mispredicts on about every third
// character of a random pubkey (digit or letter at random): 350 ns a pubkey on this machine class,
// ~35 µs for a follow list of a hundred. A table lookup per character has no such branch: 120 ns
// (docs/storage.md, "The writer's work per follow").

/** char code -> its value 0-15 when it is a lowercase hex digit, else 16 (covers every UTF-16 code unit) */
const HEX_VALUE = new Uint8Array(65536).fill(16);
for (let i = 0; i < 16; i++) HEX_VALUE['0123456789abcdef'.charCodeAt(i)] = i;

/** Whether `s` is exactly `length` lowercase hex digits. */
export function isLowerHex(s: string, length: number): boolean {
  if (s.length !== length) return false;
  let bad = 0;
  for (let i = 0; i < length; i++) bad |= HEX_VALUE[s.charCodeAt(i)]!;
  return bad < 16;
}

/** Whether `s` is 64 lowercase hex digits (an id or a pubkey). */
export const isHex64 = (s: string): boolean => isLowerHex(s, 64);

/**
 * The value of the lowercase hex digit with char code `c`, for a digit already checked: '0'-'9'
 * (0x30-0x39) have bit 6 clear, 'a'-'f' (0x61-0x66) have it set and need 9 more. No branch.
 */
export const nibble = (c: number): number => (c & 0xf) + 9 * (c >> 6);
