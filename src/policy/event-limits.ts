// The limits every relay enforces on events (advertised in NIP-11 `limitation`).
import { expirationOf } from '../nostr/kinds.js';
import type { Config } from '../config.js';
import type { RejectEvent } from '../ingest/hooks.js';

type Limits = Config['limits'];

// A UTF-8 character takes at most 3 bytes per UTF-16 unit, so JSON up to a third of the limit in
// length is under it without counting (counting allocated for every event).
export const maxEventBytes = (l: Limits): RejectEvent => ({ json }) =>
  json.length * 3 > l.maxEventBytes && Buffer.byteLength(json) > l.maxEventBytes ? `invalid: event is larger than ${l.maxEventBytes} bytes` : null;

export const maxContentLength = (l: Limits): RejectEvent => ({ event }) =>
  event.content.length > l.maxContentLength ? `invalid: content is longer than ${l.maxContentLength} characters` : null;

export const maxEventTags = (l: Limits): RejectEvent => ({ event }) =>
  event.tags.length > l.maxEventTags ? `invalid: more than ${l.maxEventTags} tags` : null;

export const maxTagValueLength = (l: Limits): RejectEvent => ({ event }) => {
  for (const t of event.tags) for (const v of t) if (v.length > l.maxTagValueLength) return `invalid: a tag value is longer than ${l.maxTagValueLength} characters`;
  return null;
};

export const createdAtWindow = (l: Limits, now: () => number = () => Math.floor(Date.now() / 1000)): RejectEvent => ({ event }) => {
  const t = now();
  if (event.created_at > t + l.createdAtFutureSeconds) return `invalid: created_at is more than ${l.createdAtFutureSeconds} seconds in the future`;
  if (l.createdAtPastSeconds > 0 && event.created_at < t - l.createdAtPastSeconds) return `invalid: created_at is more than ${l.createdAtPastSeconds} seconds in the past`;
  return null;
};

/** NIP-40: an event that has already expired is refused. */
export const notExpired = (now: () => number = () => Math.floor(Date.now() / 1000)): RejectEvent => ({ event }) => {
  const exp = expirationOf(event);
  return exp !== null && exp <= now() ? 'invalid: event has expired' : null;
};

export const eventLimitPolicies = (l: Limits): RejectEvent[] => [
  maxEventBytes(l),
  maxContentLength(l),
  maxEventTags(l),
  maxTagValueLength(l),
  createdAtWindow(l),
  notExpired(),
];
