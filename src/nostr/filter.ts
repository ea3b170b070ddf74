// NIP-01 filters: parsing untrusted JSON into a checked form, and matching.
// Pure: no I/O.
import type { NostrEvent } from './event.js';
import { matchSearch, parseSearch, type SearchQuery } from './search.js';
import { MAX_SEARCH_CHARS } from './search-query.js';

/** A filter as it travels on the wire. */
export interface WireFilter {
  ids?: string[];
  authors?: string[];
  kinds?: number[];
  since?: number;
  until?: number;
  limit?: number;
  /** NIP-50 */
  search?: string;
  [tag: `#${string}`]: string[] | undefined;
}

/** A checked filter. `ids`/`authors` hold lowercase hex, full (64) or prefixes. */
export interface Filter {
  ids?: string[];
  authors?: string[];
  kinds?: number[];
  since?: number;
  until?: number;
  limit?: number;
  /** single-letter tag name -> accepted values (any of) */
  tags?: Array<[string, string[]]>;
  /** NIP-50 search, parsed (search-query.ts) */
  search?: SearchQuery;
  /**
   * Never from the wire (parseFilter does not read it): the continuation of an answer read in
   * pieces (store/query.ts). With `until`, the events dated exactly `until` whose id is at or
   * below this one are left out: the piece before ended with that event, and within one
   * created_at answers run by id.
   */
  after?: string;
}

export interface FilterLimits {
  /** most values in any one list (ids, authors, kinds, one tag's values) */
  maxFilterValues: number;
  /** most tag conditions in one filter */
  maxTagFilters: number;
  /**
   * NIP-50: the kinds this relay's search covers. A search filter without kinds gets them; one
   * naming another kind is refused; an empty list refuses every search. Absent: search is parsed
   * and no kinds are checked (matching outside the relay).
   */
  searchKinds?: readonly number[];
}

export const DEFAULT_FILTER_LIMITS: FilterLimits = { maxFilterValues: 5000, maxTagFilters: 16 };

/** 1-64 lowercase hex digits (a loop: the regex was ~9% of the main thread for 150-author filters) */
function isHexPrefix(v: string): boolean {
  const n = v.length;
  if (n === 0 || n > 64) return false;
  for (let i = 0; i < n; i++) {
    const c = v.charCodeAt(i);
    if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102))) return false;
  }
  return true;
}

/** Parses one filter; throws FilterError with a message (no prefix) on bad input. */
export function parseFilter(raw: unknown, limits: FilterLimits = DEFAULT_FILTER_LIMITS): Filter {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new FilterError('filter must be an object');
  const f: Filter = {};
  let tagCount = 0;
  for (const [key, value] of Object.entries(raw as Record<string, unknown>)) {
    switch (key) {
      case 'ids':
      case 'authors':
        f[key] = hexList(key, value, limits);
        break;
      case 'kinds':
        if (!Array.isArray(value)) throw new FilterError('kinds must be an array');
        if (value.length > limits.maxFilterValues) throw new FilterError(`kinds has more than ${limits.maxFilterValues} values`);
        for (const k of value) if (!Number.isInteger(k) || k < 0 || k > 65535) throw new FilterError('kinds must be integers 0-65535');
        f.kinds = [...new Set(value as number[])];
        break;
      case 'since':
      case 'until':
      case 'limit':
        if (!Number.isSafeInteger(value) || (value as number) < 0) throw new FilterError(`${key} must be a non-negative integer`);
        f[key] = value as number;
        break;
      case 'search':
        if (typeof value !== 'string') throw new FilterError('search must be a string');
        if (value.length > MAX_SEARCH_CHARS) throw new FilterError(`search is longer than ${MAX_SEARCH_CHARS} characters`);
        f.search = parseSearch(value);
        break;
      default:
        if (key.length === 2 && key[0] === '#') {
          if (!Array.isArray(value)) throw new FilterError(`${key} must be an array`);
          if (value.length > limits.maxFilterValues) throw new FilterError(`${key} has more than ${limits.maxFilterValues} values`);
          for (const v of value) if (typeof v !== 'string') throw new FilterError(`${key} values must be strings`);
          if (++tagCount > limits.maxTagFilters) throw new FilterError(`more than ${limits.maxTagFilters} tag filters`);
          (f.tags ??= []).push([key[1], [...new Set(value as string[])]]);
        }
        // Other unknown keys are ignored, as most relays do, so newer clients keep working.
    }
  }
  if (f.search && limits.searchKinds) searchKinds(f, limits.searchKinds);
  return f;
}

/** A search filter's kinds: the searched kinds when it names none; refused when it names another. */
function searchKinds(f: Filter, indexed: readonly number[]): void {
  if (indexed.length === 0) throw new FilterError('search (NIP-50) is not supported on this relay');
  if (!f.kinds) {
    f.kinds = [...indexed];
    return;
  }
  const other = f.kinds.filter((k) => !indexed.includes(k));
  if (other.length > 0) throw new FilterError(`search (NIP-50) covers kind${indexed.length > 1 ? 's' : ''} ${indexed.join(', ')} on this relay, not ${other.join(', ')}`);
}

function hexList(key: string, value: unknown, limits: FilterLimits): string[] {
  if (!Array.isArray(value)) throw new FilterError(`${key} must be an array`);
  if (value.length > limits.maxFilterValues) throw new FilterError(`${key} has more than ${limits.maxFilterValues} values`);
  for (const v of value) if (typeof v !== 'string' || !isHexPrefix(v)) throw new FilterError(`${key} must be lowercase hex strings`);
  return [...new Set(value as string[])];
}

export class FilterError extends Error {}

/** True when the filter can match no event at all (an empty list, or since > until). */
export function isEmptyFilter(f: Filter): boolean {
  if (f.ids?.length === 0 || f.authors?.length === 0 || f.kinds?.length === 0) return true;
  if (f.tags?.some(([, vals]) => vals.length === 0)) return true;
  return f.since !== undefined && f.until !== undefined && f.since > f.until;
}

const matchesHex = (list: string[], value: string): boolean => {
  for (const p of list) if (p.length === 64 ? p === value : value.startsWith(p)) return true;
  return false;
};

/** A filter matches when all its present conditions hold; ids/authors by prefix; since/until inclusive. */
export function matchFilter(f: Filter, ev: NostrEvent): boolean {
  if (f.ids && !matchesHex(f.ids, ev.id)) return false;
  if (f.authors && !matchesHex(f.authors, ev.pubkey)) return false;
  if (f.kinds && !f.kinds.includes(ev.kind)) return false;
  if (f.since !== undefined && ev.created_at < f.since) return false;
  if (f.until !== undefined && ev.created_at > f.until) return false;
  if (f.tags) {
    for (const [name, values] of f.tags) {
      let found = false;
      for (const t of ev.tags) {
        if (t.length >= 2 && t[0] === name && values.includes(t[1])) { found = true; break; }
      }
      if (!found) return false;
    }
  }
  if (f.search && !matchSearch(f.search, ev)) return false;
  return true;
}

/** An event matches a REQ when any of its filters matches (filters are ORed). */
export function matchAny(filters: Filter[], ev: NostrEvent): boolean {
  for (const f of filters) if (matchFilter(f, ev)) return true;
  return false;
}

/** Back to the wire form (for logging, and for the spider's outgoing REQs). */
export function toWire(f: Filter): WireFilter {
  const w: WireFilter = {};
  if (f.ids) w.ids = f.ids;
  if (f.authors) w.authors = f.authors;
  if (f.kinds) w.kinds = f.kinds;
  if (f.since !== undefined) w.since = f.since;
  if (f.until !== undefined) w.until = f.until;
  if (f.limit !== undefined) w.limit = f.limit;
  for (const [name, values] of f.tags ?? []) w[`#${name}`] = values;
  if (f.search) w.search = f.search.raw;
  return w;
}

/** Result order: newest first, then lower id first. */
export function compareNewestFirst(a: { created_at: number; id: string }, b: { created_at: number; id: string }): number {
  return b.created_at - a.created_at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}
