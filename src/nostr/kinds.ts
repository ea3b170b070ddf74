// Event classes by kind (NIP-01) and the tags that give events their identity. Pure.
import type { NostrEvent } from './event.js';

export const isReplaceable = (kind: number): boolean => kind === 0 || kind === 3 || (kind >= 10000 && kind < 20000);
/**
 * Lists of people and things: follow lists (3) and the replaceable NIP-51 lists (10000-19999: mutes,
 * relay lists, pins, bookmarks...). They may be far larger than other events (limits.maxListEventBytes):
 * the network's largest follow lists run to hundreds of KB.
 */
export const isListKind = (kind: number): boolean => kind === 3 || (kind >= 10000 && kind < 20000);
export const isEphemeral = (kind: number): boolean => kind >= 20000 && kind < 30000;
export const isAddressable = (kind: number): boolean => kind >= 30000 && kind < 40000;
export const DELETION_KIND = 5;

export type EventClass = 'regular' | 'replaceable' | 'ephemeral' | 'addressable';
export function eventClass(kind: number): EventClass {
  if (isReplaceable(kind)) return 'replaceable';
  if (isEphemeral(kind)) return 'ephemeral';
  if (isAddressable(kind)) return 'addressable';
  return 'regular';
}

/** First `d` tag's value; "" when there is none or it has no value (an addressable event without one is addressed by ""). */
export function dTag(ev: Pick<NostrEvent, 'tags'>): string {
  for (const t of ev.tags) if (t[0] === 'd') return t.length >= 2 ? t[1] : '';
  return '';
}

/** The replaceable/addressable address `kind:pubkey:d` (d is "" for replaceable kinds), or null. */
export function addressOf(ev: Pick<NostrEvent, 'kind' | 'pubkey' | 'tags'>): string | null {
  if (isReplaceable(ev.kind)) return `${ev.kind}:${ev.pubkey}:`;
  if (isAddressable(ev.kind)) return `${ev.kind}:${ev.pubkey}:${dTag(ev)}`;
  return null;
}

/** Parses an `a` tag value `kind:pubkey:d`; null when malformed. */
export function parseAddress(a: string): { kind: number; pubkey: string; d: string } | null {
  const i = a.indexOf(':');
  const j = i < 0 ? -1 : a.indexOf(':', i + 1);
  if (i < 0 || j < 0) return null;
  const kind = Number(a.slice(0, i));
  const pubkey = a.slice(i + 1, j);
  if (!Number.isInteger(kind) || kind < 0 || kind > 65535 || !/^[0-9a-f]{64}$/.test(pubkey)) return null;
  return { kind, pubkey, d: a.slice(j + 1) };
}

/** NIP-40 expiration timestamp, or null when absent or not a number. */
export function expirationOf(ev: Pick<NostrEvent, 'tags'>): number | null {
  for (const t of ev.tags) {
    if (t[0] === 'expiration' && t.length >= 2) {
      const n = Number(t[1]);
      return Number.isSafeInteger(n) && n >= 0 ? n : null;
    }
  }
  return null;
}

/** Single-letter tags with a value: the ones that are indexed and filterable (NIP-01 `#x` filters). */
export function indexableTags(ev: Pick<NostrEvent, 'tags'>): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const t of ev.tags) if (t.length >= 2 && t[0].length === 1) out.push([t[0], t[1]]);
  return out;
}

/** NIP-13: number of leading zero bits of a hex id. */
export function leadingZeroBits(hex: string): number {
  let bits = 0;
  for (let i = 0; i < hex.length; i++) {
    const nibble = parseInt(hex[i], 16);
    if (nibble === 0) { bits += 4; continue; }
    return bits + Math.clz32(nibble) - 28;
  }
  return bits;
}
