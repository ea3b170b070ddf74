// Relays the spider never asks outside a crawl (live mode, lookups on a miss): our own URLs,
// addresses the safety rules refuse, relays that were ourselves or refused, and relays in the
// crawl's failure backoff. One rule for every part that picks relays by itself.
import type { Config } from '../config/schema.js';
import { RelayDirectory } from '../directory/records.js';
import { normalizeRelayUrl, syntacticRefusal } from '../remote/url.js';

export type Excluded = (url: string) => boolean;

export function excludedRelays(cfg: Pick<Config['spider'], 'selfUrls' | 'allowPrivate' | 'failureBackoff' | 'maxFailureBackoff'>, directory: RelayDirectory, selfUrls: string[] = []): Excluded {
  const self = new Set(selfUrls.concat(cfg.selfUrls).map(normalizeRelayUrl).filter((u): u is string => u !== null));
  const backoff = { base: cfg.failureBackoff, max: cfg.maxFailureBackoff };
  return (url) => {
    if (self.has(url) || syntacticRefusal(url, cfg.allowPrivate)) return true;
    const rec = directory.get(url);
    if (rec?.lastOutcome === 'self' || rec?.lastOutcome === 'refused') return true;
    return RelayDirectory.retryAt(rec, backoff) > Date.now();
  };
}
