// NIP-42 AUTH: the relay sends ["AUTH", challenge] (on connect, or on demand with the first
// `auth-required:` answer: policy/access.ts, auth.challenge); the client answers with a signed kind
// 22242 event carrying `relay` (our URL) and `challenge` tags. Pure apart from the verifier.
import { structureError, canonical, type NostrEvent } from '../../nostr/event.js';
import { comparableUrl } from './url.js';

export const AUTH_KIND = 22242;

/** A sync or async signature checker (nostr/verify.ts, ingest/verify-pool.ts). */
export interface SigChecker { check(ev: NostrEvent): string | null | Promise<string | null> }

/** A relay URL in comparable form (url.ts), without query. */
export const normaliseRelayUrl = (u: string): string => comparableUrl(u, false);

export interface AuthCheck {
  challenge: string;
  /** URLs the relay tag may name (already normalised with normaliseRelayUrl; own-urls.ts) */
  relayUrls: string[];
  /** allowed distance of created_at from now, seconds */
  maxAgeSeconds: number;
  now?: number;
}

const tagValue = (ev: NostrEvent, name: string) => ev.tags.find((t) => t[0] === name && t.length >= 2)?.[1];

/** The pubkey that authenticated, or a refusal message (`invalid:` / `auth-required:`). */
export async function checkAuthEvent(raw: unknown, c: AuthCheck, verifier: SigChecker): Promise<{ pubkey: string } | { error: string }> {
  const shape = structureError(raw);
  if (shape) return { error: `invalid: ${shape}` };
  const ev = canonical(raw as NostrEvent);
  if (ev.kind !== AUTH_KIND) return { error: `invalid: an AUTH event must be kind ${AUTH_KIND}` };
  const now = c.now ?? Math.floor(Date.now() / 1000);
  if (Math.abs(ev.created_at - now) > c.maxAgeSeconds) return { error: `invalid: AUTH event created_at is more than ${c.maxAgeSeconds} seconds from now` };
  const challenge = tagValue(ev, 'challenge');
  if (challenge !== c.challenge) return { error: 'invalid: AUTH event challenge does not match the one we sent on this connection' };
  const relay = tagValue(ev, 'relay');
  if (relay === undefined) return { error: 'invalid: AUTH event has no relay tag' };
  if (!c.relayUrls.includes(normaliseRelayUrl(relay))) {
    return { error: `invalid: AUTH event relay tag ${JSON.stringify(relay.slice(0, 200))} is not this relay (${c.relayUrls[0]})` };
  }
  const bad = await verifier.check(ev);
  if (bad) return { error: bad };
  return { pubkey: ev.pubkey };
}
