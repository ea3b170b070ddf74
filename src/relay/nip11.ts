// NIP-11 relay information document: what we are, and the limits we really enforce. Fields as in
// NIP-11 at nostr-protocol/nips db5fe3de (docs/nip-texts.md):
// posting_policy is gone from it (an info.postingPolicy is published as terms_of_service), `self`
// and `terms_of_service` are in it. Two limitation fields are ours, not NIP-11's: max_filters
// (NIP-11 dropped it in 611b635; this relay still refuses a REQ with more, and clients and spiders,
// ours included, still read it) and max_lookup_limit.
import type { Config } from '../config.js';
import { SOFTWARE, VERSION } from './version.js';
import { maxAnswerEvents } from '../nostr/lookups.js';
import { listEventTags, maxEventMessageLength } from '../config/relay.js';

export const SUPPORTED_NIPS = [1, 9, 11, 40, 45, 62];

export function relayInfo(config: Config, extraNips: number[] = []): Record<string, unknown> {
  const { info, limits } = config;
  const doc: Record<string, unknown> = {
    name: info.name,
    description: info.description,
    // 50: NIP-50 search, when search.kinds indexes something; 77: negentropy when enabled
    // 67: EOSE says ["finish"] when every stored match was sent (handlers/req.ts), when turned on
    supported_nips: [...new Set([...SUPPORTED_NIPS, ...(config.negentropy.enabled ? [77] : []), ...(config.search.kinds.length > 0 ? [50] : []), ...(config.nip67 ? [67] : []), ...extraNips])].sort((a, b) => a - b),
    software: SOFTWARE,
    version: VERSION,
    limitation: {
      // the largest message decoded: an EVENT carrying a list (every other message: maxMessageLength)
      max_message_length: maxEventMessageLength(limits),
      max_subscriptions: limits.maxSubscriptions,
      // not in NIP-11 since 611b635, enforced all the same (more filters: CLOSED)
      max_filters: limits.maxFilters,
      max_limit: limits.maxLimit,
      default_limit: limits.defaultLimit,
      // not in NIP-11: a lookup filter (ids; authors with replaceable kinds; addressable kinds with
      // #d) is not clamped to max_limit but answered whole, up to this many events per REQ (docs/queries.md)
      max_lookup_limit: maxAnswerEvents(limits),
      max_subid_length: limits.maxSubIdLength,
      // the most any event may carry: a list's (other events: maxEventTags, refused invalid: past it)
      max_event_tags: listEventTags(limits),
      max_content_length: limits.maxContentLength,
      // 0 means no lower limit: leave the field out (a 0 reads as "nothing older than now")
      ...(limits.createdAtPastSeconds > 0 ? { created_at_lower_limit: limits.createdAtPastSeconds } : {}),
      created_at_upper_limit: limits.createdAtFutureSeconds,
      auth_required: false,
      payment_required: false,
      restricted_writes: false,
    },
  };
  // info.pubkey is hex: the config schema turns an npub into hex (NIP-11 wants hex)
  const terms = info.termsOfService || info.postingPolicy;
  for (const [key, value] of [['pubkey', info.pubkey], ['self', info.self], ['contact', info.contact], ['icon', info.icon], ['banner', info.banner], ['terms_of_service', terms]] as const) {
    if (value) doc[key] = value;
  }
  return doc;
}

/**
 * The key the spider knows this relay by in a crawled relay's NIP-11 `self` (a crawl that meets it
 * is a crawl of ourselves): `info.self`, which relayInfo publishes as `self`; without it the
 * operator's key, what the spider compared before this relay published `self`.
 */
export function ownSelfKey(info: Config['info']): string | undefined {
  return info.self || info.pubkey || undefined;
}
