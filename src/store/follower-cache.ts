// Follower sets held in memory by the thread that reads them, so that the follow walk
// (graph.ts GraphWalkCursor) tests each list's author with an array lookup instead of a B-tree
// probe. On the followers shape (the 500 newest follow lists naming a person followed by most of
// the directory) the walk probes ~1,070 lists per answer at ~2.2 µs each: a quarter of a query
// thread's time per answer (bench/RESULTS.md, "A follower set in memory").
//
// A set is read whole once (its graph range, in follower-id order) and kept while the follower
// counter's stored value is unchanged. The writer rewrites that counter in the same transaction as
// any change of the set, and bumps its version each time (counters.ts), so a reader whose
// transaction sees the same counter value sees the same set. Only counted kinds (3: follows) can
// be cached. The one way two different sets could show the same counter value: a set emptied (its
// counter removed) and grown again to the same count, the same version and the same HyperLogLog
// registers; sets below MIN_CACHED are never cached, which makes that a coincidence of 256
// registers as well.
//
// Which form: a sorted array of follower ids (binary search) or a bitset over ids (one load),
// whichever is smaller; for the most followed people of a directory the bitset is (maxId / 8 bytes
// against 4 per follower).
import { TokenBucket } from '../lib/token-bucket.js';
import { setRange } from './graph.js';
import type { Dbs } from './schema.js';

/** Whether the pubkey of this id is in the set. */
export type Membership = (id: number) => boolean;

interface Entry {
  stamp: Buffer;
  has: Membership;
  bytes: number;
}

/** Smallest set kept: smaller sets are read whole by GraphSetCursor anyway. */
export const MIN_CACHED = 1024;
/** Most bytes of sets one thread keeps (least recently used go first). */
const MAX_BYTES = 32 * 1024 * 1024;

// Reading a set is paid by the thread, not by the REQ that happens to ask first: a set of 186,000
// followers is ~190 ms of reading (~1 µs a key) that serves every later REQ until the set changes,
// and charged to one REQ's read budget (200,000 entries by default) it could never be read. The
// thread's allowance bounds what reading sets can cost it: at most ALLOWANCE entries at once,
// refilled at REFILL_PER_S (a tenth of a thread at the measured cost). Past it, or for a set larger
// than what is left, the walk probes the graph as it did before sets were kept.
/** Most entries one thread may read into sets at once (also the largest set it reads). */
const ALLOWANCE = 1_000_000;
/** Entries per second the allowance grows back. */
const REFILL_PER_S = 100_000;
const allowance = new TokenBucket(REFILL_PER_S, ALLOWANCE, Date.now());

const allow = (entries: number): boolean => allowance.take(Date.now(), entries);

interface ThreadCache {
  sets: Map<string, Entry>;
  bytes: number;
}

const caches = new WeakMap<object, ThreadCache>();

function cacheOf(dbs: Dbs): ThreadCache {
  let c = caches.get(dbs.graph);
  if (!c) caches.set(dbs.graph, (c = { sets: new Map(), bytes: 0 }));
  return c;
}

/**
 * The follower set of (kind, followee) as a membership test, from this thread's cache when `stamp`
 * (the counter's stored value in the caller's transaction) is the one it was read under, else read
 * now when `size` is at least MIN_CACHED and the thread's allowance covers it. null: not cached and
 * not worth (or not allowed) reading.
 */
export function followerSet(dbs: Dbs, kind: number, followee: number, stamp: Buffer, size: number): Membership | null {
  const c = cacheOf(dbs);
  const key = `${kind}:${followee}`;
  const hit = c.sets.get(key);
  if (hit && hit.stamp.equals(stamp)) {
    // most recently used last
    c.sets.delete(key);
    c.sets.set(key, hit);
    return hit.has;
  }
  if (hit) {
    c.sets.delete(key);
    c.bytes -= hit.bytes;
  }
  if (size < MIN_CACHED || !allow(size)) return null;
  const entry = read(dbs, kind, followee, size);
  if (entry.bytes > MAX_BYTES / 4) return entry.has; // used once, not kept
  const kept: Entry = { stamp: Buffer.from(stamp), has: entry.has, bytes: entry.bytes };
  c.sets.set(key, kept);
  c.bytes += kept.bytes;
  for (const [k, e] of c.sets) {
    if (c.bytes <= MAX_BYTES) break;
    c.sets.delete(k);
    c.bytes -= e.bytes;
  }
  return kept.has;
}

/** Reads the set of (kind, followee): its keys arrive in follower-id order. */
function read(dbs: Dbs, kind: number, followee: number, size: number): { has: Membership; bytes: number } {
  const r = setRange(kind, followee);
  let ids = new Uint32Array(Math.max(16, size));
  let n = 0;
  for (const k of dbs.graph.graph.getKeys({ start: r.start, end: r.end })) {
    if (n === ids.length) {
      const grown = new Uint32Array(ids.length * 2);
      grown.set(ids);
      ids = grown;
    }
    ids[n++] = k.readUInt32BE(6);
  }
  const maxId = n > 0 ? ids[n - 1]! : 0;
  const bitsetBytes = Math.ceil((maxId + 1) / 32) * 4;
  if (bitsetBytes < 4 * n) {
    const bits = new Uint32Array(bitsetBytes / 4);
    for (let i = 0; i < n; i++) bits[ids[i]! >>> 5]! |= 1 << (ids[i]! & 31);
    return { has: (id) => id <= maxId && (bits[id >>> 5]! & (1 << (id & 31))) !== 0, bytes: bitsetBytes };
  }
  const sorted = ids.slice(0, n);
  return { has: (id) => contains(sorted, id), bytes: 4 * n };
}

function contains(sorted: Uint32Array, id: number): boolean {
  let lo = 0;
  let hi = sorted.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const v = sorted[mid]!;
    if (v === id) return true;
    if (v < id) lo = mid + 1;
    else hi = mid - 1;
  }
  return false;
}

/** Sets and bytes this thread holds (tests). */
export function followerCacheSize(dbs: Dbs): { sets: number; bytes: number } {
  const c = cacheOf(dbs);
  return { sets: c.sets.size, bytes: c.bytes };
}
