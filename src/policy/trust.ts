// Trust as a write policy (off by default; docs/trust.md): a "web-of-trust relay" takes events
// (of trust.policyKinds, or all) from clients only when their author's rooted rank reaches
// trust.policyMinRank; trust.spiderMinRank holds the spider to the same threshold for what it
// stores. Only a rooted rank is used: with a global rank, or before the first pass, nothing is
// refused (a fresh relay has no graph yet). The relay's own services (monitor, NIP-85, import)
// are not held to it. One LMDB read per event, before the signature check.
import type { Config } from '../config.js';
import type { RejectEvent } from '../ingest/hooks.js';
import type { RankStore } from '../store/ranks.js';

const LIST_KINDS = new Set([3, 10000]);

export function trustPolicy(t: Config['trust'], ranks: RankStore): RejectEvent | null {
  if (!t.enabled || (!t.policy && !t.spiderMinRank)) return null;
  const kinds = new Set(t.policyKinds);
  const min = t.policyMinRank;
  return ({ event }, ctx) => {
    const client = ctx.source === 'client' && t.policy && (kinds.size === 0 || kinds.has(event.kind));
    // the spider keeps fetching follow and mute lists: they are what the rank is computed from
    const spider = ctx.source === 'spider' && t.spiderMinRank && !LIST_KINDS.has(event.kind);
    if (!client && !spider) return null;
    if (ranks.meta()?.mode !== 'rooted') return null;
    const r = ranks.get(event.pubkey);
    if (r === undefined) {
      if (spider || t.policyUnranked) return null;
      return 'restricted: this relay takes events only from pubkeys its web of trust ranks (yours is not in any follow list it knows)';
    }
    if (r.rank >= min) return null;
    return spider ? `blocked: author rank ${r.rank} is below ${min}` : `restricted: this relay takes events only from pubkeys its web of trust ranks at least ${min} (yours: ${r.rank})`;
  };
}
