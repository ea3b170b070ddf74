// NIP-98 HTTP auth: `Authorization: Nostr <base64 of a signed kind 27235 event>` whose `u` tag is
// the request URL, `method` tag the HTTP method, and (for a body) `payload` tag the body's sha256.
import { createHash } from 'node:crypto';
import { structureError, canonical, type NostrEvent } from '../../nostr/event.js';
import type { SigChecker } from './nip42.js';
import { comparableUrl } from './url.js';

export const HTTP_AUTH_KIND = 27235;

/** An http(s) URL in comparable form; ws/wss are read as http/https (the relay's own URL). */
export const normaliseHttpUrl = (u: string): string => comparableUrl(u.trim().replace(/^ws(s?):\/\//i, 'http$1://'), true);

export interface HttpAuthCheck {
  header: string;
  method: string;
  /** URLs the u tag may name (normalised with normaliseHttpUrl) */
  urls: string[];
  body: Buffer;
  maxAgeSeconds: number;
  now?: number;
}

const tagValue = (ev: NostrEvent, name: string) => ev.tags.find((t) => t[0] === name && t.length >= 2)?.[1];

/** The signer and the authorization event's signature and created_at (to refuse its replay), or the refusal. */
export async function checkHttpAuth(c: HttpAuthCheck, verifier: SigChecker): Promise<{ pubkey: string; sig: string; createdAt: number } | { error: string }> {
  const m = /^Nostr\s+([A-Za-z0-9+/=_-]+)\s*$/.exec(c.header);
  if (!m) return { error: 'missing or malformed Authorization header (expected "Nostr <base64 event>", NIP-98)' };
  let raw: unknown;
  try {
    raw = JSON.parse(Buffer.from(m[1], 'base64').toString('utf8'));
  } catch {
    return { error: 'Authorization header is not base64 of a JSON event' };
  }
  const shape = structureError(raw);
  if (shape) return { error: `authorization event: ${shape}` };
  const ev = canonical(raw as NostrEvent);
  if (ev.kind !== HTTP_AUTH_KIND) return { error: `authorization event must be kind ${HTTP_AUTH_KIND}` };
  const now = c.now ?? Math.floor(Date.now() / 1000);
  if (Math.abs(ev.created_at - now) > c.maxAgeSeconds) return { error: `authorization event created_at is more than ${c.maxAgeSeconds} seconds from now` };
  const u = tagValue(ev, 'u');
  if (!u || !c.urls.includes(normaliseHttpUrl(u))) return { error: `authorization event u tag does not name this URL (${c.urls[0] ?? ''})` };
  if ((tagValue(ev, 'method') ?? '').toUpperCase() !== c.method.toUpperCase()) return { error: `authorization event method tag must be ${c.method}` };
  if (c.body.length > 0) {
    const want = createHash('sha256').update(c.body).digest('hex');
    if ((tagValue(ev, 'payload') ?? '').toLowerCase() !== want) return { error: 'authorization event payload tag is not the sha256 of the request body' };
  }
  const bad = await verifier.check(ev);
  if (bad) return { error: `authorization event: ${bad.replace(/^invalid: /, '')}` };
  return { pubkey: ev.pubkey, sig: ev.sig, createdAt: ev.created_at };
}
