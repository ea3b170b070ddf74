// The order of a ranked search's results (docs/search.md, "Ranking"): text match decided which
// profiles are candidates; trust orders them within one wide band of matches, and an account
// whose name repeats a far more trusted, older account's name is marked and comes after every
// unmarked result. Pure: the scan hands over what it read for each candidate.
//
//   key = ln(trust + FLOOR) + ln(TIER_FACTOR[tier])
//
// trust is the candidate's trusted followers (trust/trusted-followers.ts), or the reader's own
// (per-reader search); ties go to the higher PageRank score, then to the index's order. A
// candidate with no rank record (in no stored list) comes after every ranked one, by tier.
import { nameSkeletons } from '../../nostr/name-skeleton.js';
import { TIER } from '../../nostr/search.js';
import type { ReaderTrust } from '../../nostr/search-query.js';

/**
 * What a better text match is worth against trust: a factor on trusted followers per tier (exact
 * name, name starts with the query, a word of the name, only the about). Small, so that trust
 * decides: an exact name comes before a name that starts with the query only when its account is
 * followed by more than 1/1.2 (1.25/1.5) as many trusted people as the other's; about-only
 * matches need ten times the trusted followers of a name match. Chosen on the dev half of
 * bench/search-eval (bench/RESULTS.md).
 */
export const TIER_FACTOR: readonly number[] = [1.5, 1.25, 1, 0.1];
/** Trust of a ranked candidate that no trusted pubkey follows: below any that one follows, above the unranked. */
const FLOOR = 1e-3;
/**
 * An account is marked as imitating another when its trust is under this share of the other's:
 * the "under a tenth of their followers", in trusted followers.
 */
export const IMPERSONATION_SHARE = 0.1;

export interface Candidate {
  tier: number;
  /** trusted followers (or the reader's trust); -1: no rank record */
  trust: number;
  /** PageRank score (ties); 0 when unranked */
  score: number;
  /** first-seen order of the rank pass (lower: seen earlier); -1 when unknown or in no list */
  seen: number;
  /** the profile's created_at */
  createdAt: number;
  /** the profile's whole name fields, folded (name, display_name, nip05 local part): the encoded doc's first section */
  names: readonly string[];
}

export interface Ordered {
  /** candidate indexes in answer order */
  order: number[];
  /** 1 for a candidate marked as repeating a far more trusted account's name */
  marked: Uint8Array;
}

const key = (c: Candidate, factors: readonly number[]): number => (c.trust < 0 ? -Infinity : Math.log(c.trust + FLOOR) + Math.log(factors[c.tier] ?? factors[TIER.BODY]!));

/** Whether a was first seen after b: by the pass's first-seen order when both have one, else by their profiles' created_at. */
function newer(a: Candidate, b: Candidate): boolean {
  if (a.seen >= 0 && b.seen >= 0) return a.seen > b.seen;
  if (a.seen < 0 && b.seen >= 0 && a.trust < 0) return true; // in no list yet: newer than anyone listed
  return a.createdAt > b.createdAt;
}

/**
 * Marks: a candidate that shares a name skeleton (name-skeleton.ts) with another candidate whose
 * trust is more than ten times its own (and above 0), and that is newer than it.
 */
export function impersonators(cands: readonly Candidate[]): Uint8Array {
  const marked = new Uint8Array(cands.length);
  const groups = new Map<string, number[]>();
  cands.forEach((c, i) => {
    const own = new Set<string>();
    for (const n of c.names) for (const s of nameSkeletons(n)) own.add(s);
    for (const s of own) {
      const g = groups.get(s);
      if (g) g.push(i);
      else groups.set(s, [i]);
    }
  });
  for (const g of groups.values()) {
    if (g.length < 2) continue;
    for (const x of g) {
      if (marked[x]) continue;
      const tx = Math.max(0, cands[x]!.trust);
      for (const y of g) {
        const ty = cands[y]!.trust;
        if (y !== x && ty > 0 && tx < IMPERSONATION_SHARE * ty && newer(cands[x]!, cands[y]!)) {
          marked[x] = 1;
          break;
        }
      }
    }
  }
  return marked;
}

/** The answer order of ranked candidates: unmarked by key, then marked by key; ties by score, then given order. */
export function orderCandidates(cands: readonly Candidate[], factors: readonly number[] = TIER_FACTOR): Ordered {
  const marked = impersonators(cands);
  const keys = cands.map((c) => key(c, factors));
  const order = cands.map((_, i) => i);
  order.sort((a, b) => marked[a]! - marked[b]!
    || (keys[b] === keys[a] ? 0 : keys[b]! > keys[a]! ? 1 : -1)
    || (cands[a]!.trust < 0 && cands[b]!.trust < 0 ? cands[a]!.tier - cands[b]!.tier : 0)
    || cands[b]!.score - cands[a]!.score
    || a - b);
  return { order, marked };
}

/** A reader's trust in store pubkey id `id` (binary search in its ascending ids), 0 when it has none. */
export function readerTrustOf(r: ReaderTrust, id: number): number {
  let lo = 0;
  let hi = r.ids.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const v = r.ids[mid]!;
    if (v === id) return r.trust[mid]!;
    if (v < id) lo = mid + 1;
    else hi = mid - 1;
  }
  return 0;
}
