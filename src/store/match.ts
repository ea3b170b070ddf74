// The post-filter: the full filter checked against a stored value. Header fields first (no
// JSON.parse); tag conditions parse the JSON only when the plan's index did not already decide them.
import type { Filter } from '../nostr/filter.js';
import { isActiveSearch, matchSearch, type SearchQuery } from '../nostr/search.js';
import { createdAtOf, expirationOfValue, idHexOf, jsonOf, kindOf, pubkeyHexOf } from './codec.js';

class HexMatcher {
  private readonly full = new Set<string>();
  private readonly prefixes: string[] = [];
  constructor(list: string[]) {
    for (const p of list) {
      if (p.length === 64) this.full.add(p);
      else this.prefixes.push(p);
    }
  }
  has(hex: string): boolean {
    if (this.full.has(hex)) return true;
    for (const p of this.prefixes) if (hex.startsWith(p)) return true;
    return false;
  }
}

export class CompiledFilter {
  private readonly ids?: HexMatcher;
  private readonly authors?: HexMatcher;
  private readonly kinds?: Set<number>;
  private readonly since: number;
  private readonly until: number;
  /** tag conditions still to check on the parsed event */
  private readonly tags: Array<[string, Set<string>]>;
  /** NIP-50, checked on the parsed event (a search filter scanned by time, a COUNT's earlier filters) */
  private readonly search?: SearchQuery;

  /**
   * `skipTag`: index in f.tags of the condition the plan's ranges already guarantee;
   * `keyed`: the plan's keys already guarantee authors and kinds (address lookups).
   */
  constructor(f: Filter, skipTag?: number, keyed = false) {
    if (f.ids) this.ids = new HexMatcher(f.ids);
    if (f.authors && !keyed) this.authors = new HexMatcher(f.authors);
    if (f.kinds && !keyed) this.kinds = new Set(f.kinds);
    this.since = f.since ?? 0;
    this.until = f.until ?? Number.MAX_SAFE_INTEGER;
    if (isActiveSearch(f.search)) this.search = f.search;
    this.tags = [];
    (f.tags ?? []).forEach(([name, values], i) => {
      if (i !== skipTag) this.tags.push([name, new Set(values)]);
    });
  }

  /** Whether the stored value's header fields match (and it has not expired at `now`, unless `anyExpiry`): the tags and search are not checked. */
  headerMatches(value: Buffer, now: number, anyExpiry = false): boolean {
    if (!anyExpiry) {
      const exp = expirationOfValue(value);
      if (exp !== null && exp <= now) return false;
    }
    const ca = createdAtOf(value);
    if (ca < this.since || ca > this.until) return false;
    if (this.kinds && !this.kinds.has(kindOf(value))) return false;
    if (this.authors && !this.authors.has(pubkeyHexOf(value))) return false;
    if (this.ids && !this.ids.has(idHexOf(value))) return false;
    return true;
  }

  /** Whether the stored value matches and has not expired at `now` (unless `anyExpiry`). */
  matches(value: Buffer, now: number, anyExpiry = false): boolean {
    if (!this.headerMatches(value, now, anyExpiry)) return false;
    if (this.tags.length > 0) {
      const { tags } = JSON.parse(jsonOf(value)) as { tags: string[][] };
      for (const [name, values] of this.tags) {
        let found = false;
        for (const t of tags) {
          if (t.length >= 2 && t[0] === name && values.has(t[1])) {
            found = true;
            break;
          }
        }
        if (!found) return false;
      }
    }
    if (this.search && !matchSearch(this.search, JSON.parse(jsonOf(value)) as { kind: number; content: string })) return false;
    return true;
  }
}
