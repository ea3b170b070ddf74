// Where live mode meets trust ranking: a pubkey's weight in the choice of live relays is its trust
// rank once a ranking pass has run, so the write relays of people the network trusts are kept live
// before those of accounts nobody follows (sybil rings publish many relay lists, but rank ~0).
import type { RankStore } from '../store/ranks.js';
import type { PubkeyWeight } from '../spider/live/select.js';

/**
 * Rank 0-100 as a weight in (0, 1]: (rank + 1) / 101, so an unranked or rank-0 pubkey still counts
 * a little (a relay only such pubkeys use can be chosen when nothing better is left). Before the
 * first pass (no ranks), every pubkey counts 1.
 */
export function trustWeight(ranks: RankStore): PubkeyWeight {
  // a scan weighs every stored relay list: read the pass record until one exists, not per list
  // (a pass replaces ranks; none removes them)
  let ranked = false;
  return (pubkey) => {
    if (!ranked && !(ranked = ranks.meta() !== undefined)) return undefined;
    return ((ranks.get(pubkey)?.rank ?? 0) + 1) / 101;
  };
}
