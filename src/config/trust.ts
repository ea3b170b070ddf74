// Web-of-trust ranking, NIP-85 assertions and the trust write policy (docs/trust.md).
// Owned by src/trust (computation, NIP-85), src/store/search (ranked search) and src/policy (the trust write rule).
import { z } from 'zod';
import { bool, duration, int, intList, pubkeyList, str } from './fields.js';

const fraction = (def: number, description: string) => z.number().min(0).max(1).default(def).describe(description);

export const trustSchema = z
  .object({
    enabled: bool(true, 'compute a trust rank for every pubkey in the stored follow (kind 3) and mute (kind 10000) lists, and order search results by it'),
    roots: pubkeyList('trusted roots the rank is personalised to; empty: spider.seeds and spider.admins; none of those either: a global rank, which only orders search results (nothing is hidden, no policy uses it)'),
    interval: duration('1h', 'time between recomputations while follow or mute lists keep arriving (none arrived: no recomputation)'),
    debounce: duration('30s', 'wait after the first new follow or mute list before recomputing, so one crawl batch costs one pass'),
    damping: fraction(0.85, 'PageRank damping: the share of a pubkey\'s rank passed on to whom it follows (the rest goes back to the roots)'),
    globalSeeds: int(100, 'global rank only: the most followed pubkeys that hold a follow list themselves become its seeds, and the rank is personalised to them, so a ring of fresh accounts that only follow each other and their target reaches no seed and lifts nothing; 0 = plain PageRank (any ring of N accounts adds about N pubkeys\' share to its target)', 0, 100_000),
    keepGraph: bool(true, 'keep the follow and mute graph in memory between passes (4 bytes a follow, ~16 a list) so that a pass reads only the lists that changed since the one before; off: every pass reads the whole graph and nothing is kept'),
    iterations: int(40, 'most PageRank iterations per pass', 1, 1000),
    tolerance: z.number().min(0).default(1e-7).describe('a pass stops early once the ranks change by less than this in total (L1)'),
    muteWeight: z.number().min(0).default(1).describe('how much a mute counts against: a pubkey loses this times damping times the rank of each muter divided by the muter\'s follows plus mutes (about what the muter\'s follow would have given)'),
    searchWindow: int(40, 'search candidates of the best text-match class read (at most) so that the most trusted come first, not merely the most recent; more = better order, slower typeahead', 1, 10_000),
    observer: bool(true, 'search may be ranked as seen from one reader: the NIP-50 extension observer:<pubkey> orders results by that pubkey\'s personalized trust (random walks from its follows, within readerWalks and readerBudget, cached), falling back to the global or rooted rank; it only orders, it never hides (hideBelow stays the rooted rank\'s)'),
    observerAuth: bool(false, 'a search without observer: from a client that AUTHed (NIP-42) is ranked as seen from the AUTHed pubkey'),
    readerWalks: int(10_000, 'random walks of one reader\'s personalized rank (about walks / (1 - damping) steps): more = steadier order, more time', 100, 10_000_000),
    readerBudget: duration('200ms', 'most time one reader\'s personalized rank may take (walked in slices that yield to the relay); past it the walks taken so far are used'),
    readerCache: int(256, 'readers whose personalized ranks are kept (until the next ranking pass), least recently used dropped first', 0, 100_000),
    readerKeep: int(20_000, 'entries kept of one reader\'s personalized rank (the most trusted as seen from it; 8 bytes each); candidates past them are ordered by the global rank, after the ones it keeps', 100, 10_000_000),
    hideBelow: int(1, 'rooted rank only: search leaves out profiles whose rank (0-100) is below this unless the query says include:spam (unscored pubkeys are never hidden); 0 = hide nothing', 0, 100),
    nip85: bool(false, 'publish NIP-85 trusted assertions (kind 30382, d = pubkey: rank, followers) signed by the trust service key, through the ingest path, and a kind 0 of that key describing it'),
    nip85Key: str('', 'file holding the NIP-85 service secret key (64 hex), generated with mode 0600 when absent; relative paths are inside the data directory; empty: trust-rooted.key or trust-global.key in the data directory (one key per algorithm)'),
    nip85MinRank: int(1, 'pubkeys whose rank (0-100) is below this get no assertion', 0, 100),
    nip85Max: int(100_000, 'most assertions published (the most trusted followers first, as search orders people)', 0),
    policy: bool(false, 'web-of-trust relay: refuse events (policyKinds, or all) from pubkeys whose rooted rank is below policyMinRank (restricted:); needs roots'),
    policyKinds: intList([], 'kinds the trust policy applies to; empty: every kind'),
    policyMinRank: int(1, 'rank (0-100) an author needs for the trust policy and spiderMinRank', 0, 100),
    policyUnranked: bool(false, 'whether the trust policy lets pubkeys with no rank at all (not in any stored follow list) write'),
    spiderMinRank: bool(false, 'the spider stores events only from authors whose rooted rank reaches policyMinRank (unranked authors are stored while the graph is being built: kinds 3 and 10000 always)'),
  })
  .strict()
  .prefault({})
  .describe('web-of-trust rank, NIP-85 and trust policy');
