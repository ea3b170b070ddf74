// Write policies, each a small RejectEvent hook (khatru style). Order matters only for which
// reason a client sees first; the cheap list checks come before proof of work.
import { leadingZeroBits } from '../nostr/kinds.js';
import type { Config } from '../config.js';
import type { AccessLists } from './lists.js';
import type { RejectEvent } from '../ingest/hooks.js';
import type { RankStore } from '../store/ranks.js';
import { trustPolicy } from './trust.js';
import { exceptVanish } from './vanish.js';

/** Writes from a blocked IP (config policy.ipDeny or NIP-86 blockip). */
export const ipNotBlocked = (lists: AccessLists): RejectEvent => (_e, ctx) =>
  ctx.ip && lists.ipBlockedNow(ctx.ip) ? 'blocked: your IP address is blocked on this relay' : null;

export const pubkeyLists = (lists: AccessLists): RejectEvent => ({ event }) => {
  if (lists.pubkeyBanned(event.pubkey)) return 'blocked: this pubkey is banned on this relay';
  if (lists.pubkeyAllowListActive() && !lists.pubkeyAllowed(event.pubkey)) return 'blocked: this relay only accepts events from pubkeys on its allow list';
  return null;
};

export const kindLists = (lists: AccessLists): RejectEvent => ({ event }) => {
  if (lists.kindDenied(event.kind)) return `blocked: kind ${event.kind} is not accepted on this relay`;
  if (lists.kindAllowListActive() && !lists.kindAllowed(event.kind)) return `blocked: kind ${event.kind} is not on this relay's list of accepted kinds`;
  return null;
};

export const eventNotBanned = (lists: AccessLists): RejectEvent => ({ event }) =>
  lists.eventBanned(event.id) ? 'blocked: this event is banned by the relay operator' : null;

/** "1:20" -> [1, 20]; throws on a malformed entry. */
export function parsePowKinds(entries: string[]): Map<number, number> {
  const out = new Map<number, number>();
  for (const e of entries) {
    const m = /^\s*(\d+)\s*:\s*(\d+)\s*$/.exec(e);
    if (!m || Number(m[1]) > 65535 || Number(m[2]) > 256) throw new Error(`policy.powKinds: expected kind:bits, got ${JSON.stringify(e)}`);
    out.set(Number(m[1]), Number(m[2]));
  }
  return out;
}

/**
 * NIP-13: the id must have at least `bits` leading zero bits; when the nonce tag commits to a
 * target, that target must also reach the minimum (so a lucky low-target event does not pass).
 */
export const proofOfWork = (minPow: number, perKind: Map<number, number>): RejectEvent | null => {
  if (minPow <= 0 && perKind.size === 0) return null;
  return ({ event }) => {
    const need = perKind.get(event.kind) ?? minPow;
    if (need <= 0) return null;
    const have = leadingZeroBits(event.id);
    if (have < need) return `pow: difficulty ${have} is less than ${need}`;
    const nonce = event.tags.find((t) => t[0] === 'nonce');
    if (nonce && nonce.length >= 3) {
      const target = Number(nonce[2]);
      if (Number.isFinite(target) && target < need) return `pow: committed target ${target} is less than ${need}`;
    }
    return null;
  };
};

/** NIP-42 for writes: auth.required write/all, or the kind is in auth.writeKinds. Clients only. */
export const authToWrite = (auth: Config['auth']): RejectEvent | null => {
  const all = auth.required === 'write' || auth.required === 'all';
  const kinds = new Set(auth.writeKinds);
  if (!all && kinds.size === 0) return null;
  return ({ event }, ctx) => {
    if (ctx.source !== 'client') return null;
    if (!all && !kinds.has(event.kind)) return null;
    return ctx.authed && ctx.authed.size > 0 ? null : 'auth-required: this relay requires authentication (NIP-42) to publish' + (all ? '' : ` kind ${event.kind}`);
  };
};

/**
 * NIP-70: an event with a ["-"] tag is accepted only from a connection authenticated as its
 * author. The spider never takes one (it is a third party); an operator's import may.
 */
export const protectedEvents: RejectEvent = ({ event }, ctx) => {
  if (!event.tags.some((t) => t.length >= 1 && t[0] === '-')) return null;
  if (ctx.source === 'import') return null;
  if (ctx.source === 'spider') return 'blocked: protected event (NIP-70) is not taken from third parties';
  if (ctx.authed?.has(event.pubkey)) return null;
  return ctx.authed && ctx.authed.size > 0
    ? 'restricted: this event is protected (NIP-70): only its author may publish it'
    : 'auth-required: this event is protected (NIP-70): authenticate as its author to publish it';
};

/** The rules in order; those about who the author is do not hold back a request to vanish (policy/vanish.ts). */
export function writePolicies(config: Config, lists: AccessLists, ranks?: RankStore): RejectEvent[] {
  return [
    ipNotBlocked(lists),
    eventNotBanned(lists),
    exceptVanish(pubkeyLists(lists)),
    exceptVanish(kindLists(lists)),
    exceptVanish(authToWrite(config.auth)),
    protectedEvents,
    ranks ? exceptVanish(trustPolicy(config.trust, ranks)) : null,
    exceptVanish(proofOfWork(config.policy.minPow, parsePowKinds(config.policy.powKinds))),
  ].filter((p): p is RejectEvent => p !== null);
}
