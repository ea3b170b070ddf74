// Field builders shared by every config section, so each section reads as a table of
// key, type, default and description. Env names are derived from the key path (see env.ts);
// `env` meta gives an extra alias where the documented name differs.
import { z } from 'zod';
import { parsePubkey, parseSecretKey } from '../nostr/keys.js';
import { normalizeRelayUrl } from '../nostr/relay-url.js';

/** "24h", "30m", "15s", "250ms", or a number of milliseconds -> milliseconds. */
export function parseDuration(v: string | number): number {
  if (typeof v === 'number') return v;
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/.exec(v);
  if (!m) return NaN;
  const n = Number(m[1]);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[(m[2] ?? 'ms') as 'ms'];
  return Math.round(n * unit);
}

export const duration = (def: string, description: string) =>
  z
    .union([z.number(), z.string()])
    .transform((v, ctx) => {
      const ms = parseDuration(v);
      if (!Number.isFinite(ms) || ms < 0) {
        ctx.addIssue({ code: 'custom', message: 'expected a duration such as 500ms, 15s, 30m, 24h or 1d' });
        return z.NEVER;
      }
      return ms;
    })
    .prefault(def)
    .describe(`${description} (duration: 500ms, 15s, 30m, 24h, 1d)`);

export const int = (def: number, description: string, min = 0, max = Number.MAX_SAFE_INTEGER) =>
  z.number().int().min(min).max(max).default(def).describe(description);

export const bool = (def: boolean, description: string) => z.boolean().default(def).describe(description);

export const str = (def: string, description: string) => z.string().default(def).describe(description);

export const strList = (def: string[], description: string) => z.array(z.string()).default(def).describe(description);

export const intList = (def: number[], description: string) => z.array(z.number().int().min(0)).default(def).describe(description);

// Values that name things: checked when the configuration is loaded, so a typo stops start-up with
// the key named instead of surfacing as a warning in the middle of a spider run.

const pubkeyValue = (allowEmpty: boolean) => z.string().transform((v, ctx) => {
  if (allowEmpty && v === '') return '';
  const hex = parsePubkey(v);
  if (hex === null) {
    ctx.addIssue({ code: 'custom', message: `not a pubkey (64 hex characters or npub1…): ${JSON.stringify(v.slice(0, 80))}` });
    return z.NEVER;
  }
  return hex;
});

/** One pubkey, hex or npub, kept as lowercase hex; '' = unset. */
export const pubkey = (description: string) => pubkeyValue(true).default('').describe(`${description} (hex or npub; stored as hex)`);

/** Pubkeys, hex or npub, kept as lowercase hex. */
export const pubkeyList = (description: string) => z.array(pubkeyValue(false)).default([]).describe(`${description} (hex or npub)`);

const relayUrlValue = (allowEmpty: boolean) => z.string().superRefine((v, ctx) => {
  if ((allowEmpty && v === '') || normalizeRelayUrl(v) !== null) return;
  ctx.addIssue({ code: 'custom', message: `not a relay URL (ws:// or wss://, a host, an optional port and path): ${JSON.stringify(v.slice(0, 80))}` });
});

/** A ws:// or wss:// URL; '' = unset. */
export const relayUrl = (description: string) => relayUrlValue(true).default('').describe(description);

export const relayUrlList = (description: string) => z.array(relayUrlValue(false)).default([]).describe(description);

/** A redis:// or rediss:// URL; '' = unset. It may carry a password: `orbweaver config` masks it. */
export const redisUrl = (description: string) =>
  z.string().refine((v) => v === '' || /^rediss?:\/\/[^\s]*$/i.test(v), { message: 'expected a redis:// or rediss:// URL' }).default('').describe(description);

/** A secret key, hex or nsec; '' = unset. Its value is never printed (`orbweaver config`, errors). */
export const secretKey = (description: string) =>
  z.string().refine((v) => {
    if (v === '') return true;
    try { parseSecretKey(v); return true; } catch { return false; }
  }, { message: 'expected 64 hex characters or an nsec (the value is not shown)' }).default('').describe(description).meta({ secret: true });
