// A NIP-50 search over the index: candidates come from postings in rank order, each is scored
// with the same tierOf live subscriptions use, checked against the rest of the filter, and the
// best `limit` are returned best tier first (NIP-50: relevance, not created_at).
//
// Order of work, each phase stopping as soon as `limit` results of its tier or better are found:
//   A  whole fields starting with the query (exact ones come first in the range)  -> tiers 0, 1
//   B  the rarest query key among name terms                                    -> tier 2 (and 3)
//   C  the rarest query key among name and body terms                           -> tier 3
// Every tier-t result has the key each phase reads, so a phase that ends early has already found
// every better one. Filters that name ids or authors are cheaper the other way round: their few
// events are scored directly. Bounded cost: at most search.maxPostings entries per filter (the best
// found so far are returned), every entry counted against the scan budget (the caller's signal is
// polled between steps), and the rarest key drives an intersection, so a very common word costs no
// more than a rare one. COUNT reads every match, within the scan budget like any COUNT.
//
// Trust ranks (store/ranks.ts, when stored and trust.searchWindow > 0): the candidates of every
// tier are ordered by their authors' trust, the tiers only weighing in a little, and accounts that
// repeat a far more trusted account's name come last (order.ts). A phase then reads up to
// searchWindow results of its tiers, not just `limit`, and the most trusted people are also read
// by rank (trusted()), so a trusted profile that is not among the newest matches still comes
// first; a rooted rank below trust.hideBelow leaves a profile out unless the query says include:spam.
import { KEY_CLASS, TIER, TIERS, tierOf, wholeNames, type SearchQuery } from '../../nostr/search.js';
import type { Filter } from '../../nostr/filter.js';
import { createdAtOf, headerLength, idHexOf, kindOf, OFF_PUBKEY } from '../codec.js';
import { RANK_META_KEY, rankOfValue, rankScoreOf, rankSeenOf, rankTrustedOf, searchHideBelow, type RankMeta } from '../ranks.js';
import type { FrameArena } from '../../nostr/frames.js';
import { addrKey, readSerial, serialKey, u32 } from '../keys.js';
import { CompiledFilter } from '../match.js';
import { planFilter } from '../planner.js';
import type { CountMode, Item, Scan, ScanEnv } from '../query.js';
import { exactRange, postingSerial, prefixRange, type SearchDbs } from './schema.js';
import { KEY_CHARS, lettersOf, trustedNames } from './trusted.js';
import { orderCandidates, readerTrustOf, type Candidate } from './order.js';

/**
 * Entries counted per key to find the rarest (it drives the intersection). Past this many, every
 * key counts as common and the longest (most specific) drives: counting further costs more than
 * it saves on typeahead queries (measured on 100,000 profiles).
 */
const ESTIMATE_CAP = 256;
/** Keys compared at most (a long CJK query has many bigrams; any of them can drive). */
const MAX_ESTIMATED_KEYS = 8;
/** Listed trusted people read at most per search (trusted.ts): each costs one tierOf on a string. */
const MAX_TRUSTED_READ = 4000;
/** First chunk of keys read from a range; chunks double up to MAX_CHUNK. */
const FIRST_CHUNK = 32;
const MAX_CHUNK = 1024;

interface Range {
  start: Buffer;
  end: Buffer;
}

/** What search knows of a candidate's author when ranks are stored (order.ts reads it). */
interface Trusted {
  trust: number;
  score: number;
  seen: number;
  doc: string;
}

export type MakeFilterScan = (f: Filter, limit: number) => Scan;

export class SearchScan implements Scan {
  readonly out: Item[] = [];
  count = 0;
  done = false;
  /** true when search.maxPostings stopped it before the index was exhausted */
  truncated = false;

  private readonly q: SearchQuery;
  private readonly s: SearchDbs;
  private readonly rest: Filter;
  private readonly cf: CompiledFilter;
  private readonly buckets: Item[][] = Array.from({ length: TIERS }, () => []);
  /** what is known of each bucket's items' authors, when ranks are stored */
  private readonly trust: Trusted[][] = Array.from({ length: TIERS }, () => []);
  /** results a phase collects before it stops: limit, or the rank window when ranks order them */
  private readonly want: number;
  /** rooted rank below which a profile is left out (include:spam: never); -1 = hide nothing */
  private readonly hideBelow: number;
  private readonly ranked: boolean;
  private readonly meta: RankMeta | undefined;
  /** results found by rank (trusted()), per tier: the index phases' stopping rule counts only their own */
  private readonly byRank: number[] = Array.from({ length: TIERS }, () => 0);
  private readonly pk = Buffer.allocUnsafe(32);
  private readonly seen = new Set<number>();
  private read = 0;
  /** entries read by the current phase (postings) */
  private phaseRead = 0;
  /** search.maxPostings for a REQ; a COUNT or an export (no limit) must see every match: only the scan budget bounds them */
  private readonly cap: number;
  private readonly work: Generator<number, void>;

  constructor(
    private readonly env: ScanEnv,
    f: Filter,
    private readonly limit: number,
    private readonly countMode: CountMode | undefined,
    /** where the results' bytes go (query.ts ScanOutput); copied when the best are known */
    private readonly arena: FrameArena | null,
    private readonly filterScan: MakeFilterScan,
  ) {
    this.q = f.search!;
    this.s = env.dbs.search!;
    this.rest = { ...f, search: undefined };
    this.cf = new CompiledFilter(this.rest);
    this.cap = limit === Infinity ? Infinity : this.s.maxPostings;
    // Trust ranks (src/trust) reorder results within a match tier: a phase reads up to rankWindow
    // results of its tiers instead of stopping at `limit` (the newest), then the most trusted come
    // first. Only a rooted rank hides anything, and never a pubkey it did not score.
    const meta = this.s.rankWindow > 0 ? (env.dbs.meta.get(RANK_META_KEY) as RankMeta | undefined) : undefined;
    this.ranked = meta !== undefined;
    this.meta = meta;
    this.want = this.ranked ? Math.max(limit, this.s.rankWindow) : limit;
    this.hideBelow = this.q.includeSpam ? -1 : searchHideBelow(meta);
    this.work = this.run();
    if (limit <= 0) this.done = true;
  }

  /** Reads about `budget` index entries. */
  step(budget: number): void {
    if (this.done) return;
    for (let n = 0; n < budget; ) {
      const r = this.work.next();
      if (r.done) {
        this.finish();
        return;
      }
      n += r.value;
    }
  }

  private finish(): void {
    const { arena } = this;
    const { dbs, now } = this.env;
    for (const b of this.ordered()) {
      for (const it of b) {
        if (this.out.length >= this.limit) break;
        if (arena) {
          // only the results kept are copied, read again (gone or expired since: skipped)
          const value = dbs.events.getBinaryFast(serialKey(it.serial));
          if (value === undefined || value.length === 0 || !this.cf.matches(value, now)) continue;
          it.start = arena.append(value, headerLength(value), value.length);
          it.end = arena.len;
        }
        this.out.push(it);
      }
    }
    this.done = true;
  }

  /**
   * The results in answer order. Unranked: tier by tier, index order (the newest first) within one.
   * Ranked: every tier in one order by trust (order.ts), marked impersonators last.
   */
  private ordered(): Item[][] {
    if (!this.ranked) return this.buckets;
    const items: Item[] = [];
    const cands: Candidate[] = [];
    for (let t = 0; t < TIERS; t++) {
      const info = this.trust[t]!;
      this.buckets[t]!.forEach((it, j) => {
        const c = info[j]!;
        items.push(it);
        cands.push({ tier: t, trust: c.trust, score: c.score, seen: c.seen, createdAt: it.created_at, names: wholeNames(c.doc) });
      });
    }
    return [orderCandidates(cands).order.map((i) => items[i]!)];
  }

  private *run(): Generator<number, void> {
    const { q } = this;
    const plan = planFilter(this.env.dbs, this.rest).name;
    if (plan === 'ids' || plan === 'pubkind' || plan === 'pubkey') return yield* this.byFilter();
    if (q.domain !== undefined) {
      const r = exactRange(KEY_CLASS.DOMAIN, q.domain);
      // a rare domain drives: all of its postings, since their tiers come in no order (stop early only for domain: alone)
      if (q.text === '' || (yield* this.estimate([r], ESTIMATE_CAP)) < ESTIMATE_CAP) return void (yield* this.postings([r], q.text === '' ? TIER.EXACT : -1));
    }
    if (q.text !== '') yield* this.trusted();
    if (q.text !== '') yield* this.byReader();
    if (q.text !== '' && (yield* this.postings([prefixRange(KEY_CLASS.FIELD, q.text)], TIER.FIELD_PREFIX))) return;
    if (q.terms.length === 0) return;
    if (yield* this.postings(yield* this.rarest([KEY_CLASS.NAME]), TIER.NAME)) return;
    yield* this.postings(yield* this.rarest([KEY_CLASS.NAME, KEY_CLASS.BODY]), TIER.BODY);
  }

  /**
   * The most trusted people whose names match, by rank (trusted.ts): up to the rank window of
   * name matches among the listed people under the query's first letters (and its first word's),
   * so a trusted person is found wherever its name falls in the index's key order. A REQ only: a
   * COUNT or an export reads every match anyway.
   */
  private *trusted(): Generator<number, void> {
    const { q } = this;
    if (!this.ranked || this.countMode || this.limit === Infinity || q.domain !== undefined) return;
    const t = trustedNames(this.env.dbs, this.s, this.meta!);
    if (!t) return;
    const first = q.terms[0];
    const keyA = lettersOf(q.text, KEY_CHARS);
    const keyB = first && !first.run ? lettersOf(first.text, KEY_CHARS) : keyA;
    const a = t.byPrefix.get(keyA) ?? [];
    const b = keyB !== keyA ? t.byPrefix.get(keyB) ?? [] : [];
    let found = 0;
    // both lists ascend (most trusted first): merged, each person once
    let i = 0;
    let j = 0;
    for (let read = 0; (i < a.length || j < b.length) && read < MAX_TRUSTED_READ && found < this.want; read++) {
      let at: number;
      if (j >= b.length || (i < a.length && a[i]! < b[j]!)) at = a[i++]!;
      else if (i >= a.length || b[j]! < a[i]!) at = b[j++]!;
      else {
        at = a[i++]!;
        j++;
      }
      if ((read & 63) === 63) yield 64;
      const tier = tierOf(q, t.docs[at]!);
      if (tier < 0 || tier > TIER.NAME) continue;
      const before = this.buckets[tier]!.length;
      this.consider(t.serials[at]!);
      if (this.buckets[tier]!.length > before) {
        this.byRank[tier]!++;
        found++;
      }
    }
    yield 1;
  }

  /**
   * Ranked for one reader: the profiles of the people the reader trusts most (ReaderTrust.top, best
   * first) that match by name, up to the rank window, as trusted() does for the global rank: the
   * namesake a reader's network follows is found wherever its name falls in the index's order.
   */
  private *byReader(): Generator<number, void> {
    const r = this.q.reader;
    if (!r || !this.ranked || this.countMode || this.limit === Infinity || this.q.domain !== undefined) return;
    const { dbs } = this.env;
    let found = 0;
    for (let k = 0; k < r.top.length && found < this.want; k++) {
      if ((k & 31) === 31) yield 32;
      const pk = dbs.graph.idpk.getBinaryFast(u32(r.top[k]!));
      if (!pk || pk.length !== 32) continue;
      const a = dbs.addr.getBinaryFast(addrKey(0, pk.toString('hex', 0, 32), ''));
      if (!a) continue;
      const serial = readSerial(a);
      const d = this.s.docs.getBinaryFast(serialKey(serial));
      if (!d) continue;
      const tier = tierOf(this.q, d.toString('utf8', 0, d.length));
      if (tier < 0 || tier > TIER.NAME) continue;
      const before = this.buckets[tier]!.length;
      this.consider(serial);
      if (this.buckets[tier]!.length > before) {
        this.byRank[tier]!++;
        found++;
      }
    }
    yield 1;
  }

  /** Scores the filter's own (few) events: ids and authors filters. */
  private *byFilter(): Generator<number, void> {
    const scan = this.filterScan(this.rest, this.cap);
    while (!scan.done) {
      scan.step(64);
      yield 64;
    }
    for (const it of scan.out) {
      this.consider(it.serial);
      yield 1;
    }
  }

  /**
   * Considers every posting of the ranges in order; true once `limit` results of tier `upTo` or
   * better are found (or the entry cap is reached): nothing later can rank above them. upTo -1: all.
   */
  private *postings(ranges: Range[], upTo: number): Generator<number, boolean> {
    this.phaseRead = 0;
    for (const r of ranges) {
      for (const key of this.keys(r)) {
        yield 1;
        this.phaseRead++;
        if (++this.read > this.cap) {
          this.truncated = true;
          return true;
        }
        this.consider(postingSerial(key));
        if (this.enough(upTo)) return true;
      }
    }
    return false;
  }

  /**
   * The ranges (over `classes`) of the query key with the fewest postings. The keys are counted in
   * lockstep with a doubling cap, so the cost is about (number of keys) x (postings of the rarest),
   * never a full count of a common one; past ESTIMATE_CAP the longest key is taken.
   */
  private *rarest(classes: number[]): Generator<number, Range[]> {
    const cands: Array<{ key: string; ranges: Range[] }> = [];
    for (const t of this.q.terms) for (const key of t.keys) if (cands.length < MAX_ESTIMATED_KEYS && !cands.some((c) => c.key === key)) cands.push({ key, ranges: classes.map((c) => prefixRange(c, key)) });
    if (cands.length === 1) return cands[0].ranges;
    for (let cap = 32; ; cap *= 2) {
      let best: { ranges: Range[]; n: number } | undefined;
      for (const c of cands) {
        const n = yield* this.estimate(c.ranges, Math.min(cap, ESTIMATE_CAP));
        if (n < Math.min(cap, ESTIMATE_CAP) && (!best || n < best.n)) best = { ranges: c.ranges, n };
      }
      if (best) return best.ranges;
      if (cap >= ESTIMATE_CAP) return cands.reduce((a, b) => (b.key.length > a.key.length ? b : a)).ranges;
    }
  }

  /** Postings in the ranges, counted up to `cap` (each range read whole before yielding: no iterator open across a yield). */
  private *estimate(ranges: Range[], cap: number): Generator<number, number> {
    let n = 0;
    for (const r of ranges) {
      let m = 0;
      for (const _ of this.s.keys.getKeys({ start: r.start, end: r.end, limit: cap - n })) m++;
      n += m;
      yield m;
      if (n >= cap) break;
    }
    return n;
  }

  /** Keys of one range in chunks (no read transaction held across the caller's yields). */
  private *keys(r: Range): Generator<Buffer> {
    let chunk = FIRST_CHUNK;
    let last: Buffer | null = null;
    for (;;) {
      const keys: Buffer[] = Array.from(this.s.keys.getKeys(last ? { start: last, exclusiveStart: true, end: r.end, limit: chunk } : { start: r.start, end: r.end, limit: chunk }));
      yield* keys;
      if (keys.length < chunk) return;
      last = keys[keys.length - 1];
      chunk = Math.min(chunk * 2, MAX_CHUNK);
    }
  }

  private enough(upTo: number): boolean {
    if (this.limit === Infinity) return false;
    let n = 0;
    for (let t = 0; t <= upTo && t < TIERS; t++) n += this.buckets[t].length - this.byRank[t]!;
    if (n < this.limit) return false;
    // ranked: go on past `limit` so the most trusted can be found, but only within the window
    // (results or entries read by this phase): a phase with few matches still ends at `limit`
    return !this.ranked || n >= this.want || this.phaseRead >= this.want;
  }

  /** The reader's trust in the author in this.pk (by its store pubkey id), 0 when the graph does not know it. */
  private readerTrust(reader: NonNullable<SearchQuery['reader']>): number {
    const v = this.env.dbs.graph.pkid.getBinaryFast(this.pk);
    return v && v.length >= 4 ? readerTrustOf(reader, v.readUInt32BE(0)) : 0;
  }

  /** Scores one candidate event and keeps it when it matches the query and the rest of the filter. */
  private consider(serial: number): void {
    if (this.seen.has(serial)) return;
    this.seen.add(serial);
    const key = serialKey(serial);
    // getBinaryFast returns a reused buffer: score the doc before reading the event
    const d = this.s.docs.getBinaryFast(key);
    if (d === undefined) return; // removed since the posting was read
    const doc = d.toString('utf8', 0, d.length); // explicit end: see codec.ts jsonOf
    const tier = tierOf(this.q, doc);
    if (tier < 0) return;
    const { dbs, now } = this.env;
    const value = dbs.events.getBinaryFast(key);
    if (value === undefined || value.length === 0 || !this.cf.matches(value, now)) return;
    const cm = this.countMode;
    if (cm) for (const e of cm.exclude) if (e.matches(value, now)) return;
    const item: Item | null = cm ? null : { created_at: createdAtOf(value), id: idHexOf(value), serial, kind: kindOf(value), start: -1, end: -1 };
    let trusted: Trusted | undefined;
    if (this.ranked) {
      // value is a reused buffer: copy the author out before the next read
      value.copy(this.pk, 0, OFF_PUBKEY, OFF_PUBKEY + 32);
      const r = dbs.rank.getBinaryFast(this.pk);
      if (r !== undefined && r.length > 8) {
        if (rankOfValue(r) < this.hideBelow) return;
        const score = rankScoreOf(r);
        const t = rankTrustedOf(r);
        // a value from before trusted followers were stored: its score relative to the average, until the next pass
        const global = t >= 0 ? t : score * this.meta!.nodes;
        // ranked for one reader (observer:): the reader's trust orders, the global rank breaks its ties
        const reader = this.q.reader;
        trusted = reader ? { trust: this.readerTrust(reader), score: global, seen: rankSeenOf(r), doc: '' } : { trust: global, score, seen: rankSeenOf(r), doc: '' };
      } else trusted = { trust: -1, score: 0, seen: -1, doc: '' };
    }
    if (!item) {
      this.count++;
      return;
    }
    this.buckets[tier]!.push(item);
    if (trusted) {
      trusted.doc = doc;
      this.trust[tier]!.push(trusted);
    }
  }
}
