// Where search meets the trust service (docs/search.md, "Ranked for one reader"): before a REQ's
// search filters are read, each gets the trust of its reader — the pubkey its observer: names or,
// with trust.observerAuth, the pubkey the connection AUTHed as — when the trust service can give
// it; otherwise the filter is left as it is and the global (or rooted) rank orders it. What NIP-11
// says of search lives here too, since it depends on both settings.
import type { Config } from '../config.js';
import type { Filter } from '../nostr/filter.js';
import type { SearchTrust } from '../relay/context.js';
import type { Trust } from '../trust/trust.js';

export function searchTrust(trust: Pick<Trust, 'readerTrust'>, o: Pick<Config['trust'], 'observer' | 'observerAuth'>): SearchTrust {
  return async (filters: Filter[], authed: ReadonlySet<string>) => {
    const byAuth = o.observerAuth ? authed.values().next().value : undefined;
    await Promise.all(filters.map(async (f) => {
      const q = f.search;
      if (!q) return;
      const reader = (o.observer ? q.observer : undefined) ?? byAuth;
      if (!reader) return;
      const r = await trust.readerTrust(reader);
      if (r) q.reader = r;
    }));
  };
}

/** NIP-11 `nip50`: the extensions this relay's search understands, and whose view orders it. */
export function searchInfo(config: Pick<Config, 'trust'>): Record<string, unknown> {
  const t = config.trust;
  return {
    extensions: ['domain', 'include:spam', ...(t.enabled && t.observer ? ['observer'] : [])],
    order: t.enabled ? 'trusted followers (web of trust), text match weighing in; impersonators of more trusted accounts last' : 'match class, then newest',
    ...(t.enabled && (t.observer || t.observerAuth) ? { observer: { extension: t.observer, auth_default: t.observerAuth, personalized: 'pagerank from the observer\'s follows (random walks), orders only' } } : {}),
  };
}
