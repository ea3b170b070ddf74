// NIP-62 (request to vanish), the pure part: which relays a kind 62 names, and what it covers.
// Read in the NIPs repository at db5fe3de (2026-07-22; 62.md last changed in 999f9bf, 2026-06-13):
// a kind 62 asks the relays named in its `relay` tags (or every relay, `ALL_RELAYS` in uppercase)
// to delete everything of its author up to its created_at, NIP-09 deletions included, and the
// NIP-59 gift wraps that p-tag the author; deleted events must not be re-broadcast into the relay,
// and a kind 5 against a request to vanish has no effect. The store applies it (store/vanish.ts);
// the write rules decide which requests this relay takes (policy/vanish.ts). No I/O here.
import type { NostrEvent } from './event.js';
import { isHex64 } from './hex.js';
import { normalizeRelayUrl } from './relay-url.js';

export const VANISH_KIND = 62;
/** NIP-59 gift wraps: the ones that p-tag a vanished author are deleted with the author's events */
export const GIFT_WRAP_KIND = 1059;
/** the `relay` tag value that names every relay (NIP-62: in uppercase) */
export const ALL_RELAYS = 'ALL_RELAYS';

/**
 * A relay URL as one name whatever its scheme: normalised (nostr/relay-url.ts), then without
 * `ws://` or `wss://`. A relay behind a TLS proxy is named wss://host by its users and listens on
 * ws://host:port itself; a request naming either form names it. null: not a relay URL.
 */
export function relayName(url: string): string | null {
  const n = normalizeRelayUrl(url);
  return n === null ? null : n.replace(/^wss?:\/\//, '');
}

/**
 * Whom a request to vanish addresses: 'all' (ALL_RELAYS), 'this' (a relay tag names a URL `isOwn`
 * accepts), 'elsewhere' (relay tags, none of them this relay), 'none' (no relay tag: NIP-62 says
 * the list MUST include one).
 */
export type VanishScope = 'all' | 'this' | 'elsewhere' | 'none';

export function vanishScope(ev: Pick<NostrEvent, 'tags'>, isOwn: (url: string) => boolean): VanishScope {
  let named = false;
  let own = false;
  for (const t of ev.tags) {
    if (t[0] !== 'relay' || t.length < 2 || typeof t[1] !== 'string') continue;
    if (t[1] === ALL_RELAYS) return 'all';
    named = true;
    if (!own && isOwn(t[1])) own = true;
  }
  return own ? 'this' : named ? 'elsewhere' : 'none';
}

/**
 * Whether a request to vanish made at `upTo` covers an event of its author: everything up to and
 * including that second, except the requests themselves at that second (a kind 62 is kept and
 * served as the record of the request; an older request is covered like any older event).
 */
export const vanishCovers = (upTo: number, ev: Pick<NostrEvent, 'created_at' | 'kind'>): boolean =>
  ev.created_at < upTo || (ev.created_at === upTo && ev.kind !== VANISH_KIND);

/** Whether a request to vanish by the gift wrap's recipient, made at `upTo`, covers the wrap (NIP-62: DMs to the author). */
export const wrapCovered = (upTo: number, wrap: Pick<NostrEvent, 'created_at'>): boolean => wrap.created_at <= upTo;

/** The pubkeys a gift wrap is addressed to (its `p` tags with a full hex pubkey). */
export function wrapRecipients(ev: Pick<NostrEvent, 'kind' | 'tags'>): string[] {
  if (ev.kind !== GIFT_WRAP_KIND) return [];
  const out: string[] = [];
  for (const t of ev.tags) if (t[0] === 'p' && t.length >= 2 && isHex64(t[1])) out.push(t[1]!);
  return out;
}
