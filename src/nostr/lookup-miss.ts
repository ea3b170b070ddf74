// Lookup on a miss, the pure part: which filters of a REQ ask for authors' replaceable directory
// lists (profiles, follows, the 1xxxx lists), and which of those authors the scan's answer lacks or
// holds only in a stale version. The relay then asks the network for them (src/spider/lookup/).
// Pure: no I/O.
//
// A filter qualifies only when its answer says for sure what the store holds for each author:
//   - every kind is a replaceable kind of the directory (0, 3, 10000-19999): one current version
//     per author and kind, so "not in the answer" means "not stored";
//   - `authors` are full pubkeys (a prefix names nobody to look for);
//   - no ids, tags, search, since or until: each of them could leave a stored event out of the
//     answer, and a client asking for a time window wants history, not a lookup;
//   - its scan limit covers every author and kind (answerLimits gives a lookup its own size unless
//     the client or the REQ's overall bound gave less): a cut answer proves nothing.
import type { Filter } from './filter.js';

/** The replaceable kinds a lookup fetches: profiles, follows and every replaceable list (10000-19999). */
export const isDirectoryKind = (kind: number): boolean => kind === 0 || kind === 3 || (kind >= 10000 && kind < 20000);

const isFullHex = (v: string): boolean => v.length === 64;

/** Authors and kinds a filter asks for, when it qualifies for a lookup. */
export interface LookupWant {
  authors: string[];
  kinds: number[];
}

/**
 * The qualifying filters of a REQ, as they were scanned (with the limit each scan got: `scanned`
 * are answerLimits' output, the filters with limit 0 and the empty ones already left out).
 */
export function lookupWants(scanned: Filter[]): LookupWant[] {
  const out: LookupWant[] = [];
  for (const f of scanned) {
    if (!f.authors || !f.kinds || f.authors.length === 0 || f.kinds.length === 0) continue;
    if (f.ids || f.tags || f.search || f.since !== undefined || f.until !== undefined) continue;
    if (!f.kinds.every(isDirectoryKind) || !f.authors.every(isFullHex)) continue;
    if (f.limit !== undefined && f.limit < f.authors.length * f.kinds.length) continue;
    out.push({ authors: f.authors, kinds: f.kinds });
  }
  return out;
}

/** One event of the scan's answer: whose, which kind, when. */
export interface HeldEvent {
  pubkey: string;
  kind: number;
  created_at: number;
}

/** An author to look up: the kinds missing, and whether every one of them is held, only stale. */
export interface AuthorMiss {
  pubkey: string;
  kinds: number[];
  /** every kind asked is stored, in a version older than the stale age (else at least one is absent) */
  stale: boolean;
}

/**
 * The authors of `wants` whose asked kinds the answer lacks, or holds only created before
 * `staleBefore` (seconds; 0 = nothing is stale). Each author once, its kinds merged across filters,
 * in the order the filters name them.
 */
export function missingAuthors(wants: LookupWant[], held: Iterable<HeldEvent>, staleBefore: number): AuthorMiss[] {
  const newest = new Map<string, number>();
  for (const h of held) {
    const key = `${h.pubkey}:${h.kind}`;
    const at = newest.get(key);
    if (at === undefined || h.created_at > at) newest.set(key, h.created_at);
  }
  const out = new Map<string, { kinds: Set<number>; absent: boolean }>();
  for (const w of wants) {
    for (const pubkey of w.authors) {
      for (const kind of w.kinds) {
        const at = newest.get(`${pubkey}:${kind}`);
        if (at !== undefined && at >= staleBefore) continue;
        let m = out.get(pubkey);
        if (!m) out.set(pubkey, (m = { kinds: new Set(), absent: false }));
        m.kinds.add(kind);
        if (at === undefined) m.absent = true;
      }
    }
  }
  return [...out].map(([pubkey, m]) => ({ pubkey, kinds: [...m.kinds], stale: !m.absent }));
}
