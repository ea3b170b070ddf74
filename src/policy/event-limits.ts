// The limits every relay enforces on events (advertised in NIP-11 `limitation`). Lists (follow
// lists and the replaceable lists, nostr/kinds.ts isListKind) have their own size and tag limits:
// the network's largest follow lists are hundreds of KB.
import { expirationOf, isListKind } from '../nostr/kinds.js';
import type { Config } from '../config.js';
import { listEventBytes, listEventTags } from '../config/relay.js';
import type { RejectEvent } from '../ingest/hooks.js';

type Limits = Config['limits'];

// A UTF-8 character takes at most 3 bytes per UTF-16 unit, so JSON up to a third of the limit in
// length is under it without counting (counting allocated for every event).
export const maxEventBytes = (l: Limits): RejectEvent => {
  const lists = listEventBytes(l);
  return ({ json, event }) => {
    const max = isListKind(event.kind) ? lists : l.maxEventBytes;
    if (json.length * 3 <= max || Buffer.byteLength(json) <= max) return null;
    return max === lists && max > l.maxEventBytes ? `invalid: list is larger than ${max} bytes` : `invalid: event is larger than ${max} bytes`;
  };
};

export const maxContentLength = (l: Limits): RejectEvent => ({ event }) =>
  event.content.length > l.maxContentLength ? `invalid: content is longer than ${l.maxContentLength} characters` : null;

export const maxEventTags = (l: Limits): RejectEvent => {
  const lists = listEventTags(l);
  return ({ event }) => {
    const max = isListKind(event.kind) ? lists : l.maxEventTags;
    return event.tags.length > max ? `invalid: more than ${max} tags` : null;
  };
};

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
