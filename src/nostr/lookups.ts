// Lookups: filters whose answer is bounded by what they name, and the limits a REQ's scans get.
// Pure: no I/O.
//
// `max_limit` is there so that one filter cannot ask for a scan of everything. A filter that names
// what it wants is not such a scan: 1,500 authors' relay lists are at most 1,500 events (the store
// keeps one current version of a replaceable event per author and kind). Clamping it to max_limit
// only makes the client page by author (issue "find anyone": a client asking an indexer for its
// follows' relay lists got a third of them). So a lookup's limit is its own size, and the one bound
// is what one REQ could return before: max_limit events for each of max_filters filters.
import type { Filter } from './filter.js';
import { isAddressable, isReplaceable } from './kinds.js';

const isFullHex = (v: string): boolean => v.length === 64;

/**
 * The most events a filter can match by what it names, or null when it is not a lookup: its full
 * ids; or its full authors times its kinds when every kind is replaceable (one current version per
 * author and kind); or that times its `#d` values when its kinds are addressable or replaceable
 * (one current version per author, kind and `d`). Other conditions (since, until, other tags) only
 * narrow it. A search (NIP-50) is never a lookup: its answer is ranked, not named.
 */
export function lookupBound(f: Filter): number | null {
  if (f.search) return null;
  if (f.ids) return f.ids.every(isFullHex) ? f.ids.length : null;
  if (!f.authors || !f.kinds || !f.authors.every(isFullHex)) return null;
  const d = f.tags?.find(([name]) => name === 'd')?.[1];
  if (f.kinds.every(isReplaceable)) return f.authors.length * f.kinds.length;
  if (d && f.kinds.every((k) => isReplaceable(k) || isAddressable(k))) return f.authors.length * f.kinds.length * d.length;
  return null;
}

export interface AnswerLimits {
  /** a filter without a limit that is not a lookup gets this (NIP-11 default_limit) */
  defaultLimit: number;
  /** the largest limit of a filter that is not a lookup (NIP-11 max_limit) */
  maxLimit: number;
  /** the most events of one REQ's answer, all filters together (NIP-11 limitation.max_lookup_limit) */
  maxEvents: number;
}

/**
 * The REQ's filters with the limit each one's scan gets: a filter that is not a lookup its limit or
 * the default, at most maxLimit; a lookup its limit or its own size (lookupBound), past maxLimit.
 * Lookups share what the other filters leave of maxEvents, in the REQ's order; what a filter gives
 * is never raised. The filters are copied, not changed (the live subscription keeps its own).
 */
export function answerLimits(filters: Filter[], l: AnswerLimits): Filter[] {
  const bounds = filters.map(lookupBound);
  let left = l.maxEvents;
  const out = filters.map((f, i) => {
    if (bounds[i] !== null) return f;
    const limit = Math.min(f.limit ?? l.defaultLimit, l.maxLimit);
    left -= limit;
    return { ...f, limit };
  });
  for (let i = 0; i < filters.length; i++) {
    const bound = bounds[i];
    if (bound === null || bound === undefined) continue;
    const f = filters[i]!;
    const limit = Math.max(0, Math.min(f.limit ?? bound, bound, left));
    left -= limit;
    out[i] = { ...f, limit };
  }
  return out;
}

/** The most events one REQ returns: what max_filters filters of max_limit each could (NIP-11 limitation.max_lookup_limit). */
export const maxAnswerEvents = (limits: { maxLimit: number; maxFilters: number }): number => limits.maxLimit * limits.maxFilters;
