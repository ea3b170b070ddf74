// One query plan per filter: which index, which ranges of it, and how much of the filter those
// ranges already guarantee (so the post-filter, and count(), can skip work).
import type { Filter } from '../nostr/filter.js';
import { MAX_CREATED_AT } from './codec.js';
import { isReplaceable } from '../nostr/kinds.js';
import { CREATED_PREFIX, kindPrefix, PK_PREFIX_BYTES, tagKindPrefix, tagPrefix, timeRange, timeRanges } from './keys.js';
import type { BinDb, Dbs } from './schema.js';
import { GRAPH_KINDS, isGraphKind, isHexP, prefixPubkey, pubkeyId, setRange, setSize, type GraphSource } from './graph.js';

/** ids shorter than this (hex chars) are too unselective for the id index: they are post-filtered. */
export const MIN_ID_PREFIX = 8;
/** authors shorter than this can't use the pubkey indexes (keys hold the first 8 bytes). */
export const MIN_AUTHOR_PREFIX = 2 * PK_PREFIX_BYTES;
/** more author x kind ranges than this and the plan falls back to one range per author */
export const MAX_RANGES = 4096;
/** index entries read per tag condition to estimate its selectivity */
const ESTIMATE_BUDGET = 1000;

export interface ScanRange {
  /** highest key, inclusive (a reverse scan starts here) */
  start: Buffer;
  /** lowest key, exclusive */
  end: Buffer;
}

export type PlanName = 'ids' | 'addr' | 'tag' | 'pubkind' | 'pubkey' | 'kind' | 'created';

export type Plan =
  | { name: 'ids'; ids: string[] }
  /**
   * point lookups in the address index, one per replaceable address (kind, author): every kind with
   * every author. The keys are made by the scan, and only for addresses its memo does not hold.
   */
  | { name: 'addr'; kinds: number[]; authors: string[] }
  | {
      name: Exclude<PlanName, 'ids' | 'addr'>;
      db: BinDb;
      ranges: ScanRange[];
      /** index in f.tags of the condition the ranges guarantee exactly (the post-filter skips it) */
      exactTag?: number;
      /** the ranges alone decide the filter: count() needs no event reads */
      indexOnly: boolean;
      /** no event is in two of the ranges: an index-only count is the sum of the ranges' counts */
      disjoint: boolean;
      /** index entries read and ranges opened while planning (kind seeks, tag estimates), see planCost */
      planned?: number;
      /** follower sets of the graph (graph.ts) merged with the ranges: the graph kinds' `p` tags */
      graph?: GraphSource[];
    };

export function sinceUntil(f: Filter): { since: number; until: number } {
  return { since: f.since ?? 0, until: Math.min(f.until ?? MAX_CREATED_AT, MAX_CREATED_AT) };
}

/** The filter has only these keys (besides since/until/limit). */
function onlyHas(f: Filter, ...keys: Array<'ids' | 'authors' | 'kinds' | 'tags'>): boolean {
  for (const k of ['ids', 'authors', 'kinds', 'tags'] as const) if (f[k] !== undefined && !keys.includes(k)) return false;
  return true;
}

/** One tag condition and nothing else but kinds (and since, until, limit): with exact values its tag+kind ranges hold only matches. */
const onlyOneTag = (f: Filter): boolean => f.tags?.length === 1 && onlyHas(f, 'tags', 'kinds');

export function planFilter(dbs: Dbs, f: Filter): Plan {
  const { since, until } = sinceUntil(f);
  const rangesOf = (prefixes: Buffer[]): ScanRange[] => dedupePrefixes(prefixes).map((p) => timeRange(p, since, until));

  if (f.ids && f.ids.every((id) => id.length >= MIN_ID_PREFIX)) return { name: 'ids', ids: f.ids };

  // Replaceable kinds of given authors: each (kind, author) is at most one stored event, found in
  // the address index without scanning (the outbox model's relay lists, profiles and follow lists
  // of many authors at once). Addressable kinds are not looked up by #d: an event with several d
  // tags matches each of them but has one address (its first).
  if (addressLookups(f) !== null) return { name: 'addr', kinds: f.kinds!, authors: f.authors! };

  if (f.tags && f.tags.length > 0) {
    // The tag condition with the fewest entries (estimated when there are several), on the tag+kind
    // index: one range per value and kind — the filter's kinds, or the kinds each value has.
    let best: { index: number; ranges: ScanRange[]; graph: GraphSource[]; values: number; exact: boolean; cost: number } | undefined;
    const work = { planned: 0 };
    f.tags.forEach(([name, values], index) => {
      const tps = values.map((v) => tagPrefix(name, v));
      const prefixes = dedupePrefixes(tps.map((t) => t.prefix));
      const graph: GraphSource[] = [];
      const ranges = tagRanges(dbs, prefixes, f.kinds, since, until, work, graph);
      const cost = f.tags!.length === 1 ? 0 : estimate(dbs.tagkind, ranges, work) + graphEstimate(dbs, graph, work);
      if (!best || cost < best.cost) best = { index, ranges, graph, values: prefixes.length, exact: tps.every((t) => t.exact), cost };
    });
    const b = best!;
    return {
      name: 'tag',
      db: dbs.tagkind,
      ranges: b.ranges,
      exactTag: b.exact ? b.index : undefined,
      indexOnly: b.exact && onlyOneTag(f),
      disjoint: b.values === 1,
      planned: work.planned,
      ...(b.graph.length > 0 ? { graph: b.graph } : {}),
    };
  }

  if (f.authors && f.authors.every((a) => a.length >= MIN_AUTHOR_PREFIX)) {
    // keys hold the first 8 bytes of a pubkey: authors sharing those scan one range (parseFilter
    // made the hex lowercase and the kinds distinct); all of them decoded at once
    const hex = [...new Set(f.authors.map((a) => a.slice(0, 2 * PK_PREFIX_BYTES)))];
    const pks = Buffer.from(hex.join(''), 'hex');
    const kinds = f.kinds;
    if (kinds && hex.length * kinds.length <= MAX_RANGES) {
      const w = PK_PREFIX_BYTES + 2;
      const prefixes = Buffer.allocUnsafe(hex.length * kinds.length * w);
      let o = 0;
      for (let p = 0; p < hex.length; p++) {
        for (const k of kinds) {
          pks.copy(prefixes, o, p * PK_PREFIX_BYTES, (p + 1) * PK_PREFIX_BYTES);
          prefixes.writeUInt16BE(k, o + PK_PREFIX_BYTES);
          o += w;
        }
      }
      return { name: 'pubkind', db: dbs.pubkind, ranges: timeRanges(prefixes, w, since, until), indexOnly: false, disjoint: true };
    }
    if (hex.length <= MAX_RANGES || !kinds) return { name: 'pubkey', db: dbs.pubkey, ranges: timeRanges(pks, PK_PREFIX_BYTES, since, until), indexOnly: false, disjoint: true };
  }

  if (f.kinds) return { name: 'kind', db: dbs.kind, ranges: rangesOf(f.kinds.map(kindPrefix)), indexOnly: onlyHas(f, 'kinds'), disjoint: true };

  return { name: 'created', db: dbs.created, ranges: [timeRange(CREATED_PREFIX, since, until)], indexOnly: onlyHas(f), disjoint: true };
}

/**
 * Ranges of the tag+kind index for these tag prefixes: with kinds, each (value, kind); without,
 * each kind the value has, found by seeking past one kind's entries to the next kind's first key.
 * A pubkey `p` value with a graph kind is a follower set of the graph instead, added to `graph`
 * (only when the pubkey is followed at all: one seek).
 */
function tagRanges(dbs: Dbs, prefixes: Buffer[], kinds: number[] | undefined, since: number, until: number, work: { planned: number }, graph: GraphSource[]): ScanRange[] {
  const out: ScanRange[] = [];
  // Many values times many kinds: only the kinds the values have (at most the kinds stored).
  const wanted = kinds && prefixes.length * kinds.length > MAX_RANGES ? new Set(kinds) : undefined;
  for (const p of prefixes) {
    const hexP = isHexP(p);
    const followee = hexP ? pubkeyId(dbs, prefixPubkey(p)) : undefined;
    const addSet = (k: number): void => {
      work.planned += RANGE_COST;
      if (followee !== undefined && followed(dbs, k, followee)) graph.push({ kind: k, followee });
    };
    if (kinds && !wanted) {
      for (const k of kinds) {
        if (hexP && isGraphKind(k)) addSet(k);
        else out.push(timeRange(tagKindPrefix(p, k), since, until));
      }
      continue;
    }
    const have = kindsOf(dbs.tagkind, p);
    work.planned += (have.length + 1) * RANGE_COST; // one seek per kind found and one past the last
    for (const k of have) if (!wanted || wanted.has(k)) out.push(timeRange(tagKindPrefix(p, k), since, until));
    if (hexP) for (const k of GRAPH_KINDS) if (!wanted || wanted.has(k)) addSet(k);
  }
  return out;
}

/** Whether (kind, followee) has any follower: one seek. */
function followed(dbs: Dbs, kind: number, followee: number): boolean {
  const r = setRange(kind, followee);
  for (const _ of dbs.graph.graph.getKeys({ start: r.start, end: r.end, limit: 1 })) return true;
  return false;
}

/** Follower set sizes, counted up to the estimate's budget (multi-tag planning). */
function graphEstimate(dbs: Dbs, graph: GraphSource[], work: { planned: number }): number {
  let n = 0;
  for (const g of graph) {
    n += setSize(dbs, g.kind, g.followee, ESTIMATE_BUDGET);
    work.planned += RANGE_COST;
    if (n >= ESTIMATE_BUDGET) break;
  }
  work.planned += Math.min(n, ESTIMATE_BUDGET);
  return n;
}

/** Kinds present under a tag prefix, ascending: one seek per kind. */
export function kindsOf(db: BinDb, prefix: Buffer): number[] {
  const kinds: number[] = [];
  const end = Buffer.concat([prefix, Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff])]);
  let from = tagKindPrefix(prefix, 0);
  for (;;) {
    let found = -1;
    for (const k of db.getKeys({ start: from, end, limit: 1 })) found = k.readUInt16BE(prefix.length);
    if (found < 0) return kinds;
    kinds.push(found);
    if (found === 0xffff) return kinds;
    from = tagKindPrefix(prefix, found + 1);
  }
}

/** Most point lookups an 'addr' plan makes; more and the filter is scanned. */
export const MAX_LOOKUPS = 4096;

/** How many address lookups answer the filter, or null when it is not answered by them. */
function addressLookups(f: Filter): number | null {
  if (!f.authors || !f.kinds || f.kinds.length === 0 || f.authors.length === 0) return null;
  for (const a of f.authors) if (a.length !== 64) return null;
  for (const k of f.kinds) if (!isReplaceable(k)) return null;
  const n = f.authors.length * f.kinds.length;
  return n <= MAX_LOOKUPS ? n : null;
}

/**
 * Point lookups (full ids, addresses) that answer these filters, or null when one of them needs a
 * scan: small lookups are cheaper on the calling thread than a round trip to a query thread.
 */
export function pointLookups(filters: Filter[]): number | null {
  let n = 0;
  for (const f of filters) {
    if (f.ids) {
      for (const id of f.ids) if (id.length !== 64) return null;
      n += f.ids.length;
      continue;
    }
    const a = addressLookups(f);
    if (a === null) return null;
    n += a;
  }
  return n;
}

/** Most ranges (tag values × kinds) of a filter that answerBoundedReads still accepts. */
const BOUNDED_RANGES = 16;

/**
 * Most events scans of these filters read when every index entry they read is one they return, or
 * null when a filter may read entries it does not return. Such a filter has one tag condition of
 * exact values, its kinds, and nothing else but since, until and a limit: its ranges of the
 * tag+kind index (one per value and kind) hold only matches, so its work is its answer's size (the
 * followers of a pubkey, the reactions to a note). A run of equal created_at at the limit is read
 * whole; the scan budget bounds that as for any scan. A follower set of the graph (`#p` with kind 3
 * or 10000) is not: it reads more than it returns (the walk reads each list's author and probes the
 * set, the set reads each follower's current list), so it is work for a query thread. Measured on
 * the directory benchmark's followers shape at 600,000 events (bench/RESULTS.md, "The bulk merge"):
 * inline, the main thread was the relay's only busy thread (99%) at 50 answers/s.
 */
export function answerBoundedReads(filters: Filter[], defaultLimit: number, maxLimit: number): number | null {
  let n = 0;
  for (const f of filters) {
    // the planner's index-only tag plan (planFilter), with kinds: no seeks for the kinds a value has
    if (!onlyOneTag(f) || !f.kinds || f.search !== undefined) return null;
    const [name, values] = f.tags![0]!;
    if (values.length * f.kinds.length > BOUNDED_RANGES) return null;
    if (name === 'p' && f.kinds.some(isGraphKind)) return null;
    for (const v of values) if (!tagPrefix(name, v).exact) return null;
    n += Math.min(f.limit ?? defaultLimit, maxLimit);
  }
  return n;
}

/** Equal prefixes scan the same range once. */
function dedupePrefixes(prefixes: Buffer[]): Buffer[] {
  const seen = new Set<string>();
  const out: Buffer[] = [];
  for (const p of prefixes) {
    const k = p.toString('latin1');
    if (!seen.has(k)) {
      seen.add(k);
      out.push(p);
    }
  }
  return out;
}

/** Entries in the ranges, counted up to a budget (a cheap selectivity estimate); `work` adds what it cost (planCost). */
function estimate(db: BinDb, ranges: ScanRange[], work: { planned: number }): number {
  let n = 0;
  for (const r of ranges) {
    work.planned += RANGE_COST;
    for (const _ of db.getKeys({ start: r.start, end: r.end, reverse: true, limit: ESTIMATE_BUDGET - n })) n++;
    if (n >= ESTIMATE_BUDGET) break;
  }
  work.planned += n;
  return n;
}

/**
 * Opening one range (a cursor seek and its first small read) in index entries' worth of work.
 * Measured (lmdb-js 3.5.6, warm): ~5.6 µs per range opened, ~2 µs per entry of an index-only
 * count, ~5.8 µs per entry read with its event decoded and matched.
 */
export const RANGE_COST = 3;

/**
 * The work a plan costs before its first step, in index entries, for read budgets (a REQ's scan
 * budget counts it): the entries and ranges the tag estimates read while planning, plus one
 * RANGE_COST for each range the scan opens. ids and addr plans count each lookup in their steps.
 */
export function planCost(plan: Plan): number {
  if (plan.name === 'ids' || plan.name === 'addr') return 0;
  return (plan.planned ?? 0) + (plan.ranges.length + (plan.graph?.length ?? 0)) * RANGE_COST;
}
