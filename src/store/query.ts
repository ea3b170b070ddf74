// Running filters: one plan per filter, a newest-first scan with the tie rule, the OR of several
// filters with their own limits, count() and the unlimited iterate().
import { compareNewestFirst, isEmptyFilter, type Filter } from '../nostr/filter.js';
import { hllAdd, hllMerge, HLL_REGISTERS } from '../nostr/nip45.js';
import { isActiveSearch } from '../nostr/search.js';
import { createdAtOf, expirationOfValue, headerLength, idHexOf, kindOf, MAX_CREATED_AT, OFF_PUBKEY } from './codec.js';
import { counterOffset, isCountedPair, isHexPrefix, readCounter } from './counters.js';
import { addrMemo, type AddrMemo } from './addr-memo.js';
import { assemble, FrameArena, NO_FRAMING, type EventFrames, type Framing } from '../nostr/frames.js';
import { addrKey, expiryKey, hexBytes, keyCreatedAt, keySerial, kindPrefix, MAX_SERIAL, NEXT_SERIAL_KEY, readSerial, serialKeyRef, tagKindPrefix, tagPrefix, timeRange } from './keys.js';
import { CompiledFilter } from './match.js';
import { planCost, planFilter, sinceUntil, type Plan, type ScanRange } from './planner.js';
import { MergeScan, type KeyCursor } from './scan.js';
import { followerCount, followerCounter, GraphSetCursor, GraphWalkCursor, isGraphKind, listCount, pubkeyId, type GraphSource } from './graph.js';
import { followerSet, MIN_CACHED } from './follower-cache.js';
import type { BinDb, Dbs } from './schema.js';
import type { AnswerCache } from './answer-cache.js';
import { SearchScan } from './search/scan.js';
import type { CountResult, ScanSignal, SeenSerials } from './types.js';

export interface Item {
  created_at: number;
  id: string;
  serial: number;
  kind: number;
  /** the frame in the query's arena; -1 until its bytes are copied */
  start: number;
  end: number;
}

export interface ScanEnv {
  dbs: Dbs;
  now: number;
  yieldEvery: number;
  signal?: ScanSignal;
  /** this handle's kept answers (answer-cache.ts); absent: every REQ is scanned */
  answers?: AnswerCache;
}

/** A filter that can match stored events at all (storage: created_at fits 32 bits). */
export const canMatch = (f: Filter): boolean => !isEmptyFilter(f) && (f.since ?? 0) <= MAX_CREATED_AT;

/**
 * Receives each match instead of the result list (negentropy items): the stored value (volatile:
 * read what is needed before returning) and its created_at. Returning false ends the scan.
 * Matches come newest first from index plans; the ids plan hands them in no particular order.
 */
export type MatchSink = (createdAt: number, value: Buffer) => boolean;

export interface CountMode {
  /** filters counted before this one: an event matching one of them is not counted again */
  exclude: CompiledFilter[];
  /** serials expired but not yet swept (for index-only counting) */
  expired: () => Set<number>;
}

/** Past this many expired-but-unswept events, index-only counts check each key instead of subtracting them. */
const MAX_EXPIRED_ADJUST = 1000;
/** Largest index-only count done natively (see FilterScan.stepNativeCount). */
const NATIVE_COUNT_MAX = 1_000_000;
/** Fewest newest entries an extrapolated count is based on. */
const MIN_SAMPLE = 1000;

/** Index entries a scan that reached its limit reads on, at most, for one more match (NIP-67 `more`). */
const PEEK_KEYS = 64;

/** One filter's scan, run in steps of about `budget` index entries. */
export interface Scan {
  readonly out: Item[];
  count: number;
  /** the count is an estimate (FilterScan.stepNativeCount) */
  approximate?: boolean;
  done: boolean;
  /** set when the scan stopped at its byte budget (ScanOutput.bytes): the filter that reads the rest */
  cut?: Filter | null;
  /** every match was handed out, fewer than the limit (FilterScan) */
  exhausted?: boolean;
  /** a match beyond the limit was read, so the limit left matches out (FilterScan; NIP-67 `more`) */
  more?: boolean;
  step(budget: number): void;
}

/**
 * Where a scan's matches go: event bytes into `arena` (REQ, iterate; without one the items carry
 * no bytes), counted (`countMode`), or handed to `sink` (negentropy). `copyAtFlush` (iterate)
 * defers every copy to the end of a run of equal created_at.
 */
export interface ScanOutput {
  arena?: FrameArena | null;
  countMode?: CountMode;
  sink?: MatchSink;
  copyAtFlush?: boolean;
  /** an answer read in pieces: the bytes of the frames handed out so far, all filters together, and where to stop */
  bytes?: ByteBudget;
  /** NIP-67 `more`: a scan that reaches its limit reads on (PEEK_KEYS at most) for one more match */
  peekMore?: boolean;
}

/** Bytes of frames a query handed out (`used`) and the most it may (`max`: the match that reaches it is the last). */
export interface ByteBudget {
  used: number;
  readonly max: number;
}

/** The scan of one filter: a NIP-50 search (search/scan.ts, results by relevance) or a time-ordered scan. */
export function scanFor(env: ScanEnv, f: Filter, limit: number, out: ScanOutput): Scan {
  if (!isActiveSearch(f.search) || !env.dbs.search) return new FilterScan(env, f, limit, out);
  return new SearchScan(env, f, limit, out.countMode, out.arena ?? null, (g, n) => new FilterScan(env, g, n, {}));
}

/**
 * One filter's scan, run in steps of a bounded number of index entries so the caller can yield
 * between steps. Matches come out newest first and, within one created_at, by id: the keys give
 * equal created_at in arrival (serial) order, so each run of equal created_at is collected whole,
 * sorted by id, then emitted; when the limit falls inside a run, the run's lowest ids are kept.
 *
 * Matches' bytes go into `arena` as they are read while the run may still need them; a run longer
 * than what the limit leaves keeps only ids beyond that and reads the bytes of the ones it keeps
 * when it ends, so a query holds at most about twice its limit in event bytes however many events
 * share one created_at. `copyAtFlush` (iterate) defers every copy to the end of the run.
 */
export class FilterScan implements Scan {
  /** matches ready to hand out, in final order */
  readonly out: Item[] = [];
  /** matches counted (count mode) */
  count = 0;
  /** the count is an estimate (see stepNativeCount) */
  approximate = false;
  done = false;
  /** the continuation when the byte budget stopped the scan (an answer read in pieces) */
  cut: Filter | null = null;
  /** the scan handed out every match it found, fewer than its limit: none was left out (NIP-67 `finish`) */
  exhausted = false;
  more = false;
  /** index entries left to read past the limit for one more match (NIP-67 `more`); 0: not looking */
  private peekLeft = 0;
  private readonly peekMore: boolean;

  private readonly plan: Plan;
  private readonly cf: CompiledFilter;
  private emitted = 0;
  private nativeTried = false;
  // scan plans
  private merge?: MergeScan;
  private run: Item[] = [];
  private runCa = -1;
  // lookup plans (ids, addr)
  private ids: string[] = [];
  /** addr plans: lookup i is kind addrKinds[i / addrAuthors.length] of author addrAuthors[i % addrAuthors.length] */
  private addrKinds: number[] = [];
  private addrAuthors: string[] = [];
  private idPos = 0;
  private readonly idSerials = new Set<number>();
  private memo: AddrMemo | null = null;
  /** serials taken from the memo, with the index of their address */
  private readonly recalled = new Map<number, number>();
  // where matches go (ScanOutput)
  private readonly arena: FrameArena | null;
  private readonly countMode?: CountMode;
  private readonly sink?: MatchSink;
  private readonly copyAtFlush: boolean;
  private readonly bytes: ByteBudget | undefined;
  /** a continuation's start (Filter.after): matches dated `until` with an id at or below `after` were handed out before */
  private readonly afterAt: number;
  private readonly after: string | undefined;

  constructor(
    private readonly env: ScanEnv,
    private readonly f: Filter,
    private readonly limit: number,
    out: ScanOutput,
  ) {
    this.arena = out.arena ?? null;
    this.countMode = out.countMode;
    this.sink = out.sink;
    this.copyAtFlush = out.copyAtFlush ?? false;
    this.bytes = out.bytes;
    this.peekMore = out.peekMore === true;
    this.after = f.until !== undefined ? f.after : undefined;
    this.afterAt = f.until ?? -1;
    this.plan = planFilter(env.dbs, f);
    const plan = this.plan;
    env.signal?.charge?.(planCost(plan));
    this.cf = new CompiledFilter(f, plan.name === 'ids' || plan.name === 'addr' ? undefined : plan.exactTag, plan.name === 'addr');
    if (plan.name === 'ids') this.ids = plan.ids;
    else if (plan.name === 'addr') {
      this.addrKinds = plan.kinds;
      this.addrAuthors = plan.authors;
      this.memo = addrMemo(env.dbs.addr);
    }
    else {
      const graph = plan.graph;
      const more = graph ? (chunk: number) => graphCursors(env, graph, sinceUntil(f), limit, chunk) : undefined;
      this.merge = new MergeScan(plan.db, plan.ranges, limit === Infinity ? 256 : limit, more);
    }
    if (limit <= 0) this.done = true;
  }

  get planName(): string {
    return this.plan.name;
  }

  /** Reads up to `budget` index entries. */
  step(budget: number): void {
    if (this.done) return;
    if (this.plan.name === 'ids' || this.plan.name === 'addr') this.stepLookups(budget);
    else if (!this.nativeTried && this.countMode && ((this.nativeTried = true), this.stepNativeCount())) return;
    else this.stepScan(budget);
  }

  // ---- index-only count in native code ----

  /**
   * An index-only count over disjoint ranges, with no earlier filter to exclude, is the sum of the
   * ranges' sizes, counted by LMDB without a JS step per key (~60 ns instead of ~450 ns a key),
   * less the expired events not yet swept that are in them. The entries counted are charged to the
   * scan guard, one `aborted` check per yieldEvery entries as for a scan. A count that would pass
   * what is left of the read budget (the guard's `budgetLeft`, else NATIVE_COUNT_MAX) is not
   * refused but extrapolated: the budget's worth of newest entries is counted exactly, the rest of
   * the range is estimated from the time those took, and the answer is marked approximate (NIP-45).
   * False when this does not apply.
   */
  private stepNativeCount(): boolean {
    const plan = this.plan;
    const cm = this.countMode!;
    if (plan.name === 'ids' || plan.name === 'addr' || !plan.indexOnly || !plan.disjoint || plan.graph || cm.exclude.length > 0) return false;
    const expired = cm.expired();
    if (expired.size > MAX_EXPIRED_ADJUST) return false;
    const { yieldEvery, signal } = this.env;
    const budget = signal?.budgetLeft;
    const left = Math.min(NATIVE_COUNT_MAX, budget ?? NATIVE_COUNT_MAX);
    let read = 0;
    let n = 0;
    for (const r of plan.ranges) {
      const cap = Math.max(0, left - read);
      const c = countRange(plan.db, r, cap);
      if (c <= cap) {
        read += c;
        n += c;
        continue;
      }
      if (budget === undefined) return false; // no budget to estimate within: scan and count every key
      if (cap < MIN_SAMPLE) {
        // too little budget left to estimate from: refused as a scan past its budget would be
        this.done = true;
        while (!signal!.aborted);
        return true;
      }
      read += cap;
      n += extrapolate(plan.db, r, cap);
      this.approximate = true;
    }
    this.done = true;
    for (let charged = yieldEvery; charged <= read; charged += yieldEvery) if (signal?.aborted) return true;
    this.count = n - (this.approximate ? 0 : this.expiredIn(expired));
    return true;
  }

  /** Expired-unswept events this filter would otherwise count (index-only plans count by key). */
  private expiredIn(expired: Set<number>): number {
    if (expired.size === 0) return 0;
    const full = new CompiledFilter(this.f); // this.cf skips the condition the index decides
    let n = 0;
    for (const serial of expired) {
      const value = this.env.dbs.events.getBinaryFast(serialKeyRef(serial));
      if (value && value.length > 0 && full.matches(value, this.env.now, true)) n++;
    }
    return n;
  }

  // ---- time-ordered index scan ----

  private stepScan(budget: number): void {
    const { dbs, now } = this.env;
    const cm = this.countMode;
    const plan = this.plan;
    const indexOnly = cm !== undefined && cm.exclude.length === 0 && plan.name !== 'ids' && plan.name !== 'addr' && plan.indexOnly;
    const expired = indexOnly ? cm.expired() : undefined;
    for (let n = 0; n < budget; n++) {
      if (this.peekLeft > 0 && --this.peekLeft === 0) {
        this.done = true; // no match within the look past the limit: `more` stays unknown
        return;
      }
      const key = this.merge!.next();
      if (key === undefined) {
        this.flushRun();
        this.done = true;
        // the index ran out: every match was handed out unless the limit took the last of them
        this.exhausted = this.cut === null && this.emitted < this.limit;
        return;
      }
      if (indexOnly) {
        if (!expired!.has(keySerial(key))) this.count++;
        continue;
      }
      const ca = keyCreatedAt(key);
      if (!cm && ca !== this.runCa) {
        this.flushRun();
        if (this.done) return;
        this.runCa = ca;
      }
      const serial = keySerial(key);
      // Volatile buffer: used up before the next read.
      const value = dbs.events.getBinaryFast(serialKeyRef(serial));
      if (value === undefined || value.length === 0) continue; // deleted since the key was read
      if (!this.cf.matches(value, now)) continue;
      if (this.sink) {
        if (this.sink(ca, value)) continue;
        this.done = true;
        return;
      }
      if (cm) {
        if (!excluded(cm, value, now)) this.count++;
        continue;
      }
      const it: Item = { created_at: ca, id: idHexOf(value), serial, kind: kindOf(value), start: -1, end: -1 };
      if (this.handedOut(it)) continue;
      if (this.peekLeft > 0) {
        this.more = true; // a match past the limit
        this.done = true;
        return;
      }
      const need = this.limit - this.emitted;
      if (!this.copyAtFlush && this.run.length < need) this.place(it, value);
      this.run.push(it);
      // a long run of equal created_at keeps the `need` lowest ids (and at most that many copies)
      if (this.run.length >= 2 * need + 64) this.trimRun(need);
    }
  }

  /** Copies the event's JSON into the arena (no arena: the caller wants the items only). */
  private place(it: Item, value: Buffer): void {
    if (!this.arena) return;
    it.start = this.arena.append(value, headerLength(value), value.length);
    it.end = this.arena.len;
  }

  /** Handed out by the piece before this continuation (Filter.after). */
  private handedOut(it: Item): boolean {
    return this.after !== undefined && it.created_at === this.afterAt && it.id <= this.after;
  }

  /**
   * Counts a match handed out against the byte budget; true when it was the last one: the scan is
   * done and `cut` reads the rest (after this match, with the limit that is left).
   */
  private spend(it: Item, emitted: number): boolean {
    const b = this.bytes;
    if (!b || it.start < 0) return false;
    b.used += it.end - it.start;
    if (b.used < b.max || emitted >= this.limit) return false;
    this.cut = { ...this.f, until: it.created_at, after: it.id, limit: this.limit - emitted };
    this.done = true;
    this.exhausted = false;
    return true;
  }

  private trimRun(need: number): void {
    this.run.sort(byId);
    this.run.length = need;
    this.more = true; // the matches trimmed were beyond what the limit takes
  }

  private flushRun(): void {
    const run = this.run;
    if (run.length === 0) return;
    if (run.length > 1) run.sort(byId);
    const need = this.limit - this.emitted;
    let taken = 0;
    let i = 0;
    for (; i < run.length && taken < need; i++) {
      const it = run[i]!;
      if (it.start < 0 && this.arena) {
        // not copied while scanning: read it again (gone or expired since: skipped)
        const value = this.env.dbs.events.getBinaryFast(serialKeyRef(it.serial));
        if (value === undefined || value.length === 0 || !this.cf.matches(value, this.env.now)) continue;
        this.place(it, value);
      }
      this.out.push(it);
      taken++;
      if (this.spend(it, this.emitted + taken)) break;
    }
    // matches of this run the limit left out: every item in a run matched when it was read, and the
    // read snapshot keeps it so (a byte cut is not this: its rest goes on in the next piece)
    if (taken === need && i < run.length && this.cut === null) this.more = true;
    this.emitted += taken;
    this.run = [];
    if (this.emitted >= this.limit) {
      // NIP-67 `more`: read a few entries on for one match past the limit, where nothing said so yet
      // (most entries of an index range match, so this is usually one read)
      if (this.peekMore && !this.more && this.cut === null) this.peekLeft = PEEK_KEYS + 1;
      else this.done = true;
    }
  }

  // ---- lookup plans: gets (and id prefix ranges) of the id or address index, then one sort ----

  /** Kind and author of address i of an addr plan. */
  private addrKindAt(i: number): number {
    return this.addrKinds[Math.floor(i / this.addrAuthors.length)]!;
  }
  private addrAuthorAt(i: number): string {
    return this.addrAuthors[i % this.addrAuthors.length]!;
  }

  /** The serial the address index holds for address i of the plan (remembered), or undefined. */
  private addressSerial(i: number): number | undefined {
    const kind = this.addrKindAt(i);
    const pubkey = this.addrAuthorAt(i);
    const s = this.env.dbs.addr.getBinaryFast(addrKey(kind, pubkey, ''));
    if (!s) {
      this.memo!.delete(kind, pubkey);
      return undefined;
    }
    const serial = readSerial(s);
    this.memo!.set(kind, pubkey, serial);
    return serial;
  }

  private stepLookups(budget: number): void {
    const { dbs, now } = this.env;
    let n = 0;
    const lookups = this.addrKinds.length * this.addrAuthors.length;
    while (this.idPos < lookups && n < budget) {
      const i = this.idPos++;
      n++;
      const known = this.memo!.get(this.addrKindAt(i), this.addrAuthorAt(i));
      if (known !== undefined) {
        this.idSerials.add(known);
        this.recalled.set(known, i);
        continue;
      }
      const s = this.addressSerial(i);
      if (s !== undefined) this.idSerials.add(s);
    }
    if (this.idPos < lookups) return;
    while (this.idPos < this.ids.length && n < budget) {
      const id = this.ids[this.idPos++];
      if (id.length === 64) {
        const s = dbs.id.getBinaryFast(hexBytes(id));
        n++;
        if (s) this.idSerials.add(readSerial(s));
      } else {
        const start = hexBytes(id.padEnd(64, '0'));
        const end = hexBytes(id.padEnd(64, 'f'));
        for (const { value } of dbs.id.getRange({ start, end, inclusiveEnd: true })) {
          n++;
          this.idSerials.add(readSerial(value));
        }
      }
    }
    if (this.idPos < this.ids.length) return;
    const items: Item[] = [];
    const cm = this.countMode;
    // All found within the limit (the usual case: 150 relay lists, limit 500): copied as they are
    // read. Otherwise only the ones kept are copied, read again after the sort.
    const copyNow = !cm && this.arena !== null && this.idSerials.size <= this.limit;
    // an answer read in pieces copies no more than its budget ahead of the sort
    const copyUpTo = this.bytes ? this.bytes.max - this.bytes.used : Infinity;
    let copied = 0;
    for (let serial of this.idSerials) {
      let value = dbs.events.getBinaryFast(serialKeyRef(serial));
      if (value === undefined || value.length === 0) {
        // a remembered address whose event has gone: the address index tells its current one
        const i = this.recalled.get(serial);
        if (i === undefined) continue;
        const s = this.addressSerial(i);
        if (s === undefined || this.idSerials.has(s)) continue;
        serial = s;
        value = dbs.events.getBinaryFast(serialKeyRef(serial));
        if (value === undefined || value.length === 0) continue;
      }
      if (!this.cf.matches(value, now)) continue;
      if (this.sink) {
        if (this.sink(createdAtOf(value), value)) continue;
        break;
      }
      if (cm) {
        if (!excluded(cm, value, now)) this.count++;
        continue;
      }
      const it: Item = { created_at: createdAtOf(value), id: idHexOf(value), serial, kind: kindOf(value), start: -1, end: -1 };
      if (this.handedOut(it)) continue;
      if (copyNow && copied < copyUpTo) {
        this.place(it, value);
        copied += it.end - it.start;
      }
      items.push(it);
    }
    items.sort(compareNewestFirst);
    const take = Math.min(items.length, this.limit);
    this.done = true;
    this.exhausted = items.length <= this.limit; // every match was found: all handed out (a cut, below, takes it back)
    this.more = items.length > this.limit; // every match was found: the limit left some out
    for (let i = 0; i < take; i++) {
      const it = items[i]!;
      if (it.start < 0 && this.arena) this.place(it, dbs.events.getBinaryFast(serialKeyRef(it.serial))!);
      this.out.push(it);
      if (this.spend(it, i + 1)) break;
    }
  }
}

const byId = (a: Item, b: Item): number => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** B-tree reads per follower when the set is read (its entry, the follower's current list). */
const SET_READS = 2;
/** B-tree reads per list when the kind is walked (the event's header, the author's id, the probe). */
const WALK_READS = 3;

/**
 * A cursor per follower set of a plan: the set read whole (GraphSetCursor), or the kind's lists
 * walked newest first probing the set (GraphWalkCursor), whichever reads less for `wanted` matches:
 * the set costs its size, the walk about wanted x lists / set size (the followers are spread over
 * the kind's lists). A COUNT or an unlimited iteration wants every match: the set, or, within a
 * since/until window that holds fewer lists than the set has followers, the window walked.
 */
function graphCursors(env: ScanEnv, sources: GraphSource[], { since, until }: { since: number; until: number }, wanted: number, chunk: number): KeyCursor[] {
  const charge = (n: number): void => env.signal?.charge?.(n);
  const bounded = since > 0 || until < MAX_CREATED_AT;
  return sources.map((src) => {
    const set = (): KeyCursor => new GraphSetCursor(env.dbs, src, since, until, charge);
    // every match and no time window: the set, without reading its counter
    if (wanted === Infinity && !bounded) return set();
    const counter = followerCounter(env.dbs, src.kind, src.followee);
    const size = followerCount(env.dbs, src.kind, src.followee, counter);
    // the walk tests each list's author in the set in memory when it is kept, or worth reading
    // (follower-cache.ts): it costs its size once, where the probes cost a read per list each time
    const walk = (): KeyCursor => new GraphWalkCursor(env.dbs, src, since, until, chunk, charge, counter ? followerSet(env.dbs, src.kind, src.followee, counter, size) : null);
    if (wanted === Infinity) {
      // every match in a time window: the window's lists tested against the set, when the window
      // holds fewer lists than the set has followers (the set costs two reads per follower)
      if (size < MIN_CACHED) return set();
      const inWindow = countRange(env.dbs.graph.graphtime, timeRange(kindPrefix(src.kind), since, until), size);
      return inWindow < size ? walk() : set();
    }
    const lists = listCount(env.dbs, src.kind);
    const walkReads = WALK_READS * Math.min(lists, ((wanted + 1) * lists) / Math.max(1, size));
    return walkReads < SET_READS * size ? walk() : set();
  });
}

/**
 * Estimated entries of a range with more than `cap`: `cap` newest entries took the time from the
 * newest key's created_at back to the cap-th's; the rest of the range, back to its oldest key, is
 * assumed to hold entries at the same rate.
 */
function extrapolate(db: BinDb, r: ScanRange, cap: number): number {
  if (cap === 0) return 0;
  let newest = 0;
  let capth = 0;
  let oldest = 0;
  for (const k of db.getKeys({ start: r.start, end: r.end, reverse: true, limit: 1 })) newest = keyCreatedAt(k);
  for (const k of db.getKeys({ start: r.start, end: r.end, reverse: true, offset: cap - 1, limit: 1 })) capth = keyCreatedAt(k);
  for (const k of db.getKeys({ start: r.end, end: r.start, limit: 1 })) oldest = keyCreatedAt(k);
  return Math.max(cap + 1, Math.round((cap * (newest - oldest + 1)) / (newest - capth + 1)));
}

/** First skip of a range count's probe; each next probe skips PROBE_GROWTH times more. */
const FIRST_PROBE = 1024;
const PROBE_GROWTH = 16;

/**
 * Entries in one range, counted natively up to `cap` (cap + 1: more than cap). lmdb-js counts a
 * range natively to its end key but without a limit, and its `offset` skip does not stop at the
 * end key (lmdb-js 3.5.6 cursor.cpp: it walks on through the rest of the index, ~40 ns a key:
 * a 1,000-entry count with a 1,000,000 skip took 25 ms). So skips of growing length probe whether
 * the range is longer than each (the key found past the skip is checked against the end), and the
 * range is counted once a probe falls off its end: the work is a few times min(size, cap).
 */
function countRange(db: BinDb, r: ScanRange, cap: number): number {
  for (let probe = FIRST_PROBE; ; probe *= PROBE_GROWTH) {
    const skip = Math.min(probe, cap);
    let longer = false;
    for (const _ of db.getKeys({ start: r.start, end: r.end, reverse: true, offset: skip, limit: 1 })) longer = true;
    if (!longer) return db.getKeysCount({ start: r.start, end: r.end, reverse: true });
    if (skip === cap) return cap + 1;
  }
}

function excluded(cm: CountMode, value: Buffer, now: number): boolean {
  for (const e of cm.exclude) if (e.matches(value, now)) return true;
  return false;
}

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Runs a scan to the end, yielding to the event loop between steps. False when aborted. */
export async function drive(scan: Scan, env: ScanEnv): Promise<boolean> {
  for (;;) {
    if (env.signal?.aborted) return false;
    scan.step(env.yieldEvery);
    if (scan.done) return true;
    await tick();
  }
}

/**
 * The highest serial committed and visible now, or one that was allocated and freed since (serials
 * only grow and are never reused, so nothing can appear at or below it later). The writer keeps
 * the next serial in meta in each transaction that stored an event: one get, where the newest key of
 * the events table took a cursor (a tenth of the main thread answering one-author REQs inline).
 */
export function lastSerial(dbs: Dbs): number {
  const next = dbs.meta.get(NEXT_SERIAL_KEY);
  if (typeof next === 'number') return next - 1;
  for (const k of dbs.events.getKeys({ reverse: true, limit: 1 })) return readSerial(k);
  return 0;
}

/** Matches of the filters as frames (see nostr/frames.ts), newest first, each filter's limit applied. */
export async function runQuery(env: ScanEnv, filters: Filter[], defaultLimit: number, maxLimit: number, seen?: SeenSerials, framing: Framing = NO_FRAMING, lend = false, maxBytes?: number, peekMore = false): Promise<EventFrames> {
  const upTo = lastSerial(env.dbs); // read before the first chunk of any scan
  if (seen) seen.upTo = upTo;
  const answers = env.answers;
  const key = answers?.keyOf(filters, defaultLimit, maxLimit) ?? null;
  const stamp = key !== null ? answers!.stamp(env.dbs, upTo) : null;
  if (stamp) {
    // a kept answer holds at this snapshot: no event in it was added after `upTo`, so `seen` stays as set
    const kept = answers!.get(env.dbs, key!, stamp, env.now, framing, lend, maxBytes);
    if (kept) return kept;
  }
  let complete = true;
  let exhausted = true;
  const limited: number[] = [];
  let cut: EventFrames['cut'];
  const bytes: ByteBudget | undefined = maxBytes !== undefined ? { used: 0, max: maxBytes } : undefined;
  const arena = new FrameArena(framing);
  const byId = new Map<string, Item>();
  // NIP-50: search results keep their rank order (filter by filter, each event once where it first ranks)
  let ranked = false;
  /** the one filter's matches: a scan hands them out distinct and in final order */
  let only: Item[] | null = null;
  for (let i = 0; i < filters.length; i++) {
    const f = filters[i]!;
    if (!canMatch(f)) continue;
    const limit = Math.min(f.limit ?? defaultLimit, maxLimit);
    if (limit <= 0) {
      exhausted = false; // nothing asked for: whatever matches was left out
      continue;
    }
    const scan = scanFor(env, f, limit, { arena, bytes, peekMore });
    ranked ||= scan instanceof SearchScan;
    const finished = await drive(scan, env);
    if (filters.length === 1) only = scan.out;
    else for (const it of scan.out) if (!byId.has(it.id)) byId.set(it.id, it);
    if (!finished) {
      complete = exhausted = false;
      break;
    }
    if (scan instanceof SearchScan) {
      exhausted = false; // its reads are bounded by the postings it may read, not by its matches
      continue;
    }
    if (scan.cut) {
      complete = false;
      cut = { filter: i, rest: scan.cut };
      break;
    }
    exhausted &&= scan.exhausted === true;
    if (scan.more === true) limited.push(i); // its limit left matches out (whose limit it was, the caller knows)
  }
  const all = only ?? [...byId.values()];
  if (!ranked && !only) all.sort(compareNewestFirst);
  if (seen) for (const it of all) if (it.serial > upTo) seen.newer.add(it.id);
  const frames = assemble(arena, all);
  if (cut) frames.cut = cut;
  if (exhausted) frames.exhausted = true;
  if (limited.length > 0) frames.limited = limited;
  if (stamp && complete) answers!.offer(env.dbs, key!, stamp, filters, frames, all);
  return frames;
}

export async function runCount(env: ScanEnv, filters: Filter[]): Promise<CountResult> {
  let expired: Set<number> | undefined;
  const expiredSerials = (): Set<number> => {
    if (!expired) {
      expired = new Set();
      const end = expiryKey(env.now, MAX_SERIAL);
      for (const k of env.dbs.expiry.getKeys({ start: expiryKey(0, 0), end, inclusiveEnd: true })) expired.add(readSerial(k, 4));
    }
    return expired;
  };
  const live = filters.filter(canMatch);
  if (live.length === 1) {
    const counted = countFromCounters(env, live[0]!, expiredSerials);
    if (counted) return counted;
  }
  const exclude: CompiledFilter[] = [];
  let total = 0;
  let approximate = false;
  for (const f of live) {
    const scan = scanFor(env, f, Infinity, { countMode: { exclude: [...exclude], expired: expiredSerials } });
    const finished = await drive(scan, env);
    total += scan.count;
    approximate ||= scan.approximate ?? false;
    if (!finished) break;
    exclude.push(new CompiledFilter(f));
  }
  return approximate ? { count: total, approximate } : { count: total };
}

/** Most events whose pubkeys are read to recompute a stale counter's HLL registers for one answer. */
const MAX_HLL_RECOMPUTE = 50_000;

/**
 * NIP-45's common counts ({"kinds":[3],"#p":[pk]}, {"kinds":[7],"#e":[id]}, ...: one hex tag value,
 * counted kinds, nothing else) from the maintained counters (counters.ts): exact count and HLL
 * registers in one read per kind. Read synchronously, so everything comes from one snapshot.
 * Undefined when the filter is not such a count.
 */
function countFromCounters(env: ScanEnv, f: Filter, expiredSerials: () => Set<number>): CountResult | undefined {
  if (f.ids || f.authors || isActiveSearch(f.search) || f.since !== undefined || f.until !== undefined || !f.kinds || f.kinds.length === 0) return undefined;
  if (!f.tags || f.tags.length !== 1 || f.tags[0]![1].length !== 1) return undefined;
  const [name, [value]] = f.tags[0]!;
  if (!f.kinds.every((k) => isCountedPair(name, k))) return undefined;
  const { prefix } = tagPrefix(name, value!);
  if (!isHexPrefix(prefix)) return undefined;
  const expired = expiredSerials();
  if (expired.size > MAX_EXPIRED_ADJUST) return undefined;

  const { dbs, now } = env;
  let count = 0;
  let stale = false;
  const registers = new Uint8Array(HLL_REGISTERS);
  const keys = f.kinds.map((k) => tagKindPrefix(prefix, k));
  const versions: number[] = [];
  for (const key of keys) {
    const c = readCounter(dbs.tagcount, key);
    versions.push(c?.version ?? -1);
    if (!c) continue;
    count += c.count;
    stale ||= c.stale;
    hllMerge(registers, c.registers);
  }
  // Expired events not swept yet are still counted there: take them out (registers recomputed).
  const cf = new CompiledFilter(f);
  let dirty = false;
  for (const serial of expired) {
    const v = dbs.events.getBinaryFast(serialKeyRef(serial));
    if (v && v.length > 0 && cf.matches(v, now, true)) {
      count--;
      dirty = true;
    }
  }
  if (!stale && !dirty) return { count, hll: registers };
  if (count > MAX_HLL_RECOMPUTE) return { count };
  const fresh = new Uint8Array(HLL_REGISTERS);
  const offset = counterOffset(keys[0]!);
  const { since, until } = sinceUntil(f);
  const perKey: Uint8Array[] = [];
  const followee = name === 'p' ? pubkeyId(dbs, value!) : undefined;
  for (const [i, key] of keys.entries()) {
    const regs = new Uint8Array(HLL_REGISTERS);
    const kind = f.kinds[i]!;
    for (const serial of countedSerials(env, key, name, kind, followee, since, until)) {
      const v = dbs.events.getBinaryFast(serialKeyRef(serial));
      if (!v || v.length === 0) continue;
      const exp = expirationOfValue(v);
      if (exp !== null && exp <= now) continue;
      hllAdd(regs, v, OFF_PUBKEY, offset);
    }
    hllMerge(fresh, regs);
    perKey.push(regs);
  }
  const refresh = dirty ? undefined : keys.map((key, i) => ({ key, version: versions[i]!, registers: perKey[i]! })).filter((x) => x.version >= 0);
  return { count, hll: fresh, refresh };
}

/** Serials of the events counted under a counter key: its tag+kind range, or a follower set of the graph. */
function* countedSerials(env: ScanEnv, key: Buffer, name: string, kind: number, followee: number | undefined, since: number, until: number): Generator<number> {
  if (name === 'p' && isGraphKind(kind)) {
    if (followee === undefined) return;
    const c = new GraphSetCursor(env.dbs, { kind, followee }, since, until, () => {});
    for (; c.head() !== undefined; c.advance()) yield c.serial;
    return;
  }
  const r = { start: Buffer.concat([key, tail(until, MAX_SERIAL)]), end: Buffer.concat([key, tail(since, 0)]) };
  for (const k of env.dbs.tagkind.getKeys({ start: r.start, end: r.end, reverse: true })) yield keySerial(k);
}

/** created_at + serial suffix bytes of a time-ordered key */
function tail(createdAt: number, serial: number): Buffer {
  const b = Buffer.allocUnsafe(9);
  b.writeUInt32BE(createdAt, 0);
  b.writeUIntBE(serial, 4, 5);
  return b;
}

export async function* runIterate(env: ScanEnv, f: Filter): AsyncGenerator<string> {
  if (!canMatch(f)) return;
  const arena = new FrameArena(NO_FRAMING);
  const scan = scanFor(env, f, Infinity, { arena, copyAtFlush: true });
  for (;;) {
    if (env.signal?.aborted) return;
    scan.step(env.yieldEvery);
    for (const it of scan.out) yield arena.buf.toString('utf8', it.start, it.end);
    scan.out.length = 0;
    arena.reset(); // the run in progress holds no bytes (copyAtFlush)
    if (scan.done) return;
    await tick();
  }
}

/** The unexpired stored value with this id, as a fresh Buffer. */
/** Whether the event is stored (and not expired), without copying or decoding it. */
export function holdsEvent(dbs: Dbs, id: string, now: number): boolean {
  if (!/^[0-9a-f]{64}$/.test(id)) return false;
  const s = dbs.id.getBinaryFast(hexBytes(id));
  if (!s) return false;
  const value = dbs.events.getBinaryFast(serialKeyRef(readSerial(s)));
  if (!value || value.length === 0) return false;
  const exp = expirationOfValue(value);
  return exp === null || exp > now;
}

export function getValue(dbs: Dbs, id: string, now: number): Buffer | undefined {
  if (!/^[0-9a-f]{64}$/.test(id)) return undefined;
  const s = dbs.id.getBinary(hexBytes(id));
  if (!s) return undefined;
  const value = dbs.events.getBinary(serialKeyRef(readSerial(s)));
  if (!value) return undefined;
  const exp = expirationOfValue(value);
  return exp !== null && exp <= now ? undefined : value;
}
