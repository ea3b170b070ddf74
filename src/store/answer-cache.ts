// Large REQ answers kept by the thread that made them, and given again while the store has not
// changed under them: the followers of a person much of the network follows (500 follow lists,
// ~3.5 MB) cost a query thread ~4 ms to read and copy out of LMDB, and the same answer kept is
// lent to the REQ as it is (below; docs/storage.md, "Answers kept").
//
// An answer is exact at the snapshot it is given from. It was made by a scan that began after the
// store's last serial was S and its removal log's last record R (read before the first step). At a
// later snapshot the store differs from the scan's view only by
// - the events added since, which are the events with a serial above S (serials only grow): the
//   answer still holds unless one of them matches a filter (then it is dropped, whether the scan
//   saw that event or not);
// - the events removed since, which the removal log lists (removal-log.ts): the answer still holds
//   unless one of them is in it. A removed event that matched but was past the limit changes
//   nothing; one that was not seen because it went before the scan reached it left the answer as
//   the later snapshot has it.
// - time: an answer holding an event with a NIP-40 expiration is given only before it.
// Checked, the answer's S and R move up to the snapshot's, so each check reads only what is new.
// While an import holds index entries back (spool.ts) or a repair rebuilds them, the indexes do not
// yet show every event, and no answer is kept or given.
//
// A kept answer lives in the cache's shared memory (answer-arena.ts), each event's JSON behind a
// slot of SLOT_BYTES and before a `]`. A REQ that sends the frames itself (QueryOptions.lend) is
// lent the answer as it is: the main thread writes its `["EVENT","<subid>",` into each slot right
// before it hands that frame to uWS, which copies it, so one answer serves every REQ without being
// copied here (the copy was most of a query thread's time on the followers shape). A lent answer
// is not overwritten until every REQ it was lent to gave it back, even when it was dropped.
// Other callers get a copy in their framing.
//
// Kept: answers of at least MIN_ENTRY_BYTES whose filters were asked before (a one-off REQ is
// never copied), without `ids` (point reads) or `search` (the order follows the trust ranks, which
// change without an event), whose scan ran to the end. Least recently given go first past the
// byte budget (config store.answerCache).
import { hash } from 'node:crypto';
import type { Filter } from '../nostr/filter.js';
import { copyInto, FrameArena, assemble, frameJsonEnd, frameJsonStart, framesJsonBytes, onLentReturn, type EventFrames, type Framing } from '../nostr/frames.js';
import { AnswerArena } from './answer-arena.js';
import { expirationOfValue, headerLength } from './codec.js';
import { serialKey, serialKeyRef } from './keys.js';
import { CompiledFilter } from './match.js';
import { pointLookups } from './planner.js';
import { lastRemoval, removalsSince } from './removal-log.js';
import { REPAIR_META_KEY, type Dbs } from './schema.js';
import { SPOOL_FROM_KEY } from './spool.js';

/** Smallest answer kept (JSON bytes): a smaller one costs little to read again. */
export const MIN_ENTRY_BYTES = 64 * 1024;
/** Events added since the last check read at most; past it the answer is dropped (reading it again costs about as much). */
const MAX_ADDED = 1024;
/** Removal log records (write transactions) read at most per check; past it the answer is dropped. */
const MAX_REMOVAL_RECORDS = 256;
/** Filter sets remembered as asked once (their hashes), cleared when full. */
const MAX_ASKED = 4096;
/**
 * Room before each kept event for a caller's `["EVENT","<subid>",`: 12 bytes and a subscription
 * id of up to 68 bytes as JSON (limits.maxSubIdLength is 64 by default). A longer prefix gets a copy.
 */
export const SLOT_BYTES = 80;
const CLOSE_BRACKET = 0x5d;

/** Lent answers not yet given back, on this thread: lend number -> its cache and entry. */
const lentOut = new Map<number, { cache: AnswerCache; entry: Entry }>();
let nextLend = 1;
onLentReturn((id) => {
  const l = lentOut.get(id);
  if (!l) return;
  lentOut.delete(id);
  l.cache.giveBack(l.entry);
});

/** What the store was when a scan began: its last serial and its removal log's last record. */
export interface Stamp {
  upTo: number;
  removals: number;
}

/** One answer's events as a later check needs them. */
export interface Answered {
  serial: number;
  kind: number;
  start: number;
  end: number;
}

/** A filter's test for an added event: could it match? (may say yes when it does not: sound, not exact) */
class AddedProbe {
  private readonly cf: CompiledFilter;
  /** per tag condition, each accepted value as it appears in JSON.stringify output (`"value"`), when it has one plain form */
  private readonly needles: Array<Buffer[] | null>;

  constructor(f: Filter) {
    this.cf = new CompiledFilter(f);
    this.needles = (f.tags ?? []).map(([, values]) => (values.every(plainJson) ? values.map((v) => Buffer.from(`"${v}"`)) : null));
  }

  mayMatch(value: Buffer): boolean {
    if (!this.cf.headerMatches(value, 0, true)) return false;
    // A tag value the stored JSON does not hold anywhere (in its one escape-free spelling, and the
    // JSON has no escapes at all) is not among its tags: no JSON.parse. Else the exact test.
    const json = headerLength(value);
    if (this.needles.length > 0 && value.indexOf(0x5c, json) < 0) {
      for (const n of this.needles) {
        if (n && !n.some((needle) => value.indexOf(needle, json) >= 0)) return false;
      }
    }
    return this.cf.matches(value, 0, true);
  }
}

/** Printable ASCII without `"` and `\`: JSON.stringify writes it as it is, and no other way exists without a backslash. */
function plainJson(v: string): boolean {
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) return false;
  }
  return true;
}

interface Entry {
  stamp: Stamp;
  /** where the answer is in the cache's arena: `size` bytes from `at` */
  at: number;
  size: number;
  /** end of each event's region (slot, JSON, `]`) from `at` */
  ends: Uint32Array;
  kinds: Uint16Array;
  serials: Set<number>;
  /** earliest NIP-40 expiration among the events (Infinity: none) */
  expires: number;
  probes: AddedProbe[];
  bytes: number;
  /** REQs it is lent to now */
  lent: number;
  /** dropped while lent: its extent is freed when the last REQ gives it back */
  dropped: boolean;
  /** what the scan knew of the matches it left out (EventFrames.exhausted, .limited): true while the entry holds */
  exhausted: boolean;
  limited: number[] | undefined;
}

export interface AnswerCacheStats {
  hits: number;
  misses: number;
  /** answers dropped because the store changed under them (or their check could not be made) */
  dropped: number;
  kept: number;
  bytes: number;
  /** kept answers lent out now (given back when their frames were sent) */
  lent: number;
}

export class AnswerCache {
  private readonly entries = new Map<string, Entry>();
  private readonly asked = new Set<string>();
  /** made at the first answer kept */
  private arena: AnswerArena | null = null;
  /** `stats.bytes`: the kept entries' bytes, their arena extents and index arrays (the arena, the budget's size, bounds the extents) */
  readonly stats: AnswerCacheStats = { hits: 0, misses: 0, dropped: 0, kept: 0, bytes: 0, lent: 0 };

  constructor(private readonly maxBytes: number) {}

  /**
   * The key of a REQ's filters as asked, or null when such an answer is never kept: point reads
   * (`ids`, addresses), NIP-50 search, or small limits (the answer would be under MIN_ENTRY_BYTES).
   */
  keyOf(filters: Filter[], defaultLimit: number, maxLimit: number): string | null {
    let limits = 0;
    for (const f of filters) {
      if (f.ids || f.search !== undefined) return null;
      limits += Math.min(f.limit ?? defaultLimit, maxLimit);
    }
    // point reads (events by address: profiles, relay lists, one author's follow list) are cheap to make again
    if (limits < 16 || pointLookups(filters) !== null) return null;
    return hash('sha256', `${defaultLimit},${maxLimit},${JSON.stringify(filters)}`, 'base64');
  }

  /** Where the store is now, or null while its indexes may not show every event (an import's spool, a repair). */
  stamp(dbs: Dbs, lastSerial: number): Stamp | null {
    if (!dbs.removed || dbs.meta.get(SPOOL_FROM_KEY) !== undefined || dbs.meta.get(REPAIR_META_KEY) !== undefined) return null;
    return { upTo: lastSerial, removals: lastRemoval(dbs.removed) };
  }

  /**
   * The kept answer for `key`, framed for this caller, when it still holds at this snapshot
   * (`now` stamp: where the store is; see the top of this file). Synchronous: one snapshot.
   * `lend`: the caller takes lent frames (EventFrames.lent) when its framing fits the slots.
   * `maxBytes`: a caller reading its answer in pieces of this size (QueryOptions.maxBytes) gets
   * no larger answer: it would land in the connection's output whole.
   */
  get(dbs: Dbs, key: string, now: Stamp, nowSeconds: number, framing: Framing, lend = false, maxBytes = Infinity): EventFrames | null {
    const e = this.entries.get(key);
    if (e && e.size > maxBytes) {
      this.stats.misses++;
      return null;
    }
    if (!e) {
      this.stats.misses++;
      if (this.asked.size >= MAX_ASKED) this.asked.clear();
      this.asked.add(key);
      return null;
    }
    if (!this.holds(dbs, e, now, nowSeconds)) {
      this.drop(key, e);
      this.stats.misses++;
      this.stats.dropped++;
      return null;
    }
    e.stamp = now;
    // most recently given last
    this.entries.delete(key);
    this.entries.set(key, e);
    this.stats.hits++;
    const arena = this.arena!;
    if (lend && framing.prefix.length <= SLOT_BYTES && framing.suffix.length === 1 && framing.suffix[0] === CLOSE_BRACKET) {
      const id = nextLend++;
      lentOut.set(id, { cache: this, entry: e });
      e.lent++;
      this.stats.lent++;
      // the index arrays are the caller's (a postMessage transfers them); the bytes are shared
      return withHints({ buf: new Uint8Array(arena.sab, e.at, e.size), ends: e.ends.slice(), kinds: e.kinds.slice(), prefixLen: SLOT_BYTES, suffixLen: 1, lent: id }, e);
    }
    return withHints(frame(arena, e, framing), e);
  }

  /** A REQ gave back the entry it was lent (frames.ts releaseFrames). */
  giveBack(e: Entry): void {
    e.lent--;
    this.stats.lent--;
    if (e.lent === 0 && e.dropped) this.arena!.release(e.at, e.size);
  }

  private holds(dbs: Dbs, e: Entry, now: Stamp, nowSeconds: number): boolean {
    if (e.expires <= nowSeconds) return false;
    if (now.upTo < e.stamp.upTo || now.removals < e.stamp.removals) return false; // cannot happen: serials and records only grow
    if (now.upTo > e.stamp.upTo) {
      let n = 0;
      for (const { value } of dbs.events.getRange({ start: serialKey(e.stamp.upTo + 1), end: serialKey(now.upTo), inclusiveEnd: true })) {
        if (++n > MAX_ADDED) return false;
        for (const p of e.probes) if (p.mayMatch(value)) return false;
      }
    }
    if (now.removals > e.stamp.removals) {
      if (now.removals - e.stamp.removals > MAX_REMOVAL_RECORDS) return false;
      if (removalsSince(dbs.removed!, e.stamp.removals, now.removals, (s) => e.serials.has(s)) !== 'complete') return false;
    }
    return true;
  }

  /**
   * Keeps a whole answer (its scan ran to the end) made from `stamp`, if its filters were asked
   * before and it is large enough; `frames` stays the caller's.
   */
  offer(dbs: Dbs, key: string, stamp: Stamp, filters: Filter[], frames: EventFrames, items: readonly Answered[]): void {
    if (!this.asked.has(key) || this.entries.has(key)) return;
    const json = framesJsonBytes(frames);
    // the arena's bytes, and the entry's index arrays and serials beside it
    const size = json + items.length * (SLOT_BYTES + 1);
    const bytes = size + items.length * 14 + 256;
    if (json < MIN_ENTRY_BYTES || size > this.maxBytes / 4) return;
    let expires = Infinity;
    for (const it of items) {
      // an event made after the stamp would be taken for an addition that matches at every check
      if (it.serial > stamp.upTo) return;
      const value = dbs.events.getBinaryFast(serialKeyRef(it.serial));
      if (value === undefined || value.length === 0) return; // removed since: the next scan will know
      const exp = expirationOfValue(value);
      if (exp !== null && exp < expires) expires = exp;
    }
    const at = this.place(size);
    if (at < 0) return;
    const arena = this.arena!;
    const out = Buffer.from(arena.sab, at, size);
    const e: Entry = {
      stamp,
      at,
      size,
      ends: new Uint32Array(items.length),
      kinds: new Uint16Array(items.length),
      serials: new Set(items.map((it) => it.serial)),
      expires,
      probes: filters.map((f) => new AddedProbe(f)),
      bytes,
      lent: 0,
      dropped: false,
      exhausted: frames.exhausted === true,
      limited: frames.limited?.slice(),
    };
    let o = 0;
    for (let i = 0; i < items.length; i++) {
      const start = frameJsonStart(frames, i);
      const end = frameJsonEnd(frames, i);
      o += SLOT_BYTES;
      copyInto(out, o, frames.buf, start, end);
      o += end - start;
      out[o++] = CLOSE_BRACKET;
      e.ends[i] = o;
      e.kinds[i] = frames.kinds[i]!;
    }
    this.asked.delete(key);
    this.entries.set(key, e);
    this.stats.bytes += bytes;
    this.stats.kept++;
  }

  /**
   * An extent of `size` bytes in the arena, the least recently given answers dropped until one is
   * free (lent ones free theirs only when given back); -1 when none can be had now.
   */
  private place(size: number): number {
    this.arena ??= new AnswerArena(this.maxBytes);
    let at = this.arena.alloc(size);
    for (const [k, old] of this.entries) {
      if (at >= 0) break;
      this.drop(k, old);
      at = this.arena.alloc(size);
    }
    return at;
  }

  private drop(key: string, e: Entry): void {
    this.entries.delete(key);
    this.stats.bytes -= e.bytes;
    if (e.lent === 0) this.arena!.release(e.at, e.size);
    else e.dropped = true;
  }
}

/** A kept answer says what its scan said of the matches it left out (NIP-67): nothing matching changed since, or it would not hold. */
function withHints(f: EventFrames, e: Entry): EventFrames {
  if (e.exhausted) f.exhausted = true;
  if (e.limited) f.limited = e.limited.slice();
  return f;
}

/** The kept events in the caller's framing, in a buffer of the caller's thread (frames.ts). */
function frame(arena: AnswerArena, e: Entry, framing: Framing): EventFrames {
  const n = e.ends.length;
  const src = new Uint8Array(arena.sab, e.at, e.size);
  const out = new FrameArena(framing, e.size - n * (SLOT_BYTES + 1) + n * (framing.prefix.length + framing.suffix.length));
  const items = new Array<{ start: number; end: number; kind: number }>(n);
  let from = 0;
  for (let i = 0; i < n; i++) {
    const start = out.append(src, from + SLOT_BYTES, e.ends[i]! - 1);
    items[i] = { start, end: out.len, kind: e.kinds[i]! };
    from = e.ends[i]!;
  }
  return assemble(out, items);
}
