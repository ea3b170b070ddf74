// Trust ranks in the store (computed by src/trust, read by search, the trust policy and the pages):
//
//   ev.trust_rank  pubkey (32) -> score f64 | rank u8 | followers u32 | mutes u32 | generation u32
//                                 | trusted followers f32 | seen u32
//
// (values written before the last two fields existed are 21 bytes: search then orders by score
// and calls no one newer, until the next pass rewrites them)
//   ev.meta "trustRank"        -> RankMeta of the pass whose ranks are current
//
// A pass writes every scored pubkey with its generation in chunks (readers see old and new values
// mixed for a moment: both are ranks), then removes entries of older generations (pubkeys no
// longer in any list), then records its meta. The follow and mute graphs are read here too
// (graph.ts: edges as pairs of the store's pubkey ids, the pubkey of an id), so the trust service
// never sees the store's layout.
import type { Database, RootDatabase } from 'lmdb';
import { jsonOf, kindOf, OFF_PUBKEY } from './codec.js';
import { edgeKey, graphMembers, kindIdKey, NEXT_PKID_KEY, pubkeyId } from './graph.js';
import { kindPrefix, keySerial, readSerial, SERIAL_BYTES, serialKey, timeRange, u32 } from './keys.js';
import type { BinDb, Dbs } from './schema.js';

export const RANK_META_KEY = 'trustRank';
/** The most trusted pubkeys of the current pass, best first, 32 bytes each (search reads them by rank). */
export const RANK_TOP_KEY = 'trustTop';
/** the bytes every value has (through generation), and those of a value with trusted and seen */
const VALUE_BYTES = 21;
const FULL_BYTES = 29;

export interface RankRecord {
  /** PageRank score after mutes (the scores of one pass sum to at most 1) */
  score: number;
  /** 0-100, NIP-85 scale (trust/scale.ts) */
  rank: number;
  /** follow lists (kind 3) naming this pubkey: what NIP-45 COUNT {"kinds":[3],"#p":[pk]} answers */
  followers: number;
  /** mute lists (kind 10000) naming it */
  mutes: number;
  /**
   * followers weighted by how much the rank trusts each: a follower counts min(1, its score x
   * pubkeys), fully from the average score up (trust/trusted-followers.ts); what search orders by
   */
  trusted?: number;
  /** the order in which the store first saw this pubkey in a list (lower: earlier), per pass */
  seen?: number;
}

export interface RankMeta {
  /** rooted: personalised to roots (low ranks may be hidden); global: only orders results */
  mode: 'rooted' | 'global';
  roots: number;
  generation: number;
  /** unix ms when the pass finished, and how long it took */
  computedAt: number;
  durationMs: number;
  nodes: number;
  edges: number;
  muteEdges: number;
  iterations: number;
  /** search hides rooted ranks below this (config trust.hideBelow at the time of the pass) */
  hideBelow: number;
  /** what the pass read: the whole graph, or only the lists changed since the pass before (trust.keepGraph) */
  read?: 'graph' | 'changed';
  /** lists read one by one (the changed ones) */
  listsRead?: number;
}

/** The rank below which searches leave a profile out (include:spam aside): a rooted pass's hideBelow, else -1 (none). */
export const searchHideBelow = (m: RankMeta | undefined): number => (m?.mode === 'rooted' && m.hideBelow > 0 ? m.hideBelow : -1);

export function encodeRank(r: RankRecord, generation: number): Buffer {
  const b = Buffer.allocUnsafe(FULL_BYTES);
  b.writeDoubleBE(r.score, 0);
  b[8] = Math.max(0, Math.min(100, Math.round(r.rank)));
  b.writeUInt32BE(Math.min(r.followers, 0xffffffff), 9);
  b.writeUInt32BE(Math.min(r.mutes, 0xffffffff), 13);
  b.writeUInt32BE(generation >>> 0, 17);
  b.writeFloatBE(r.trusted ?? 0, 21);
  b.writeUInt32BE(r.seen === undefined ? 0xffffffff : r.seen >>> 0, 25);
  return b;
}

export function decodeRank(v: Uint8Array): RankRecord {
  const b = Buffer.from(v.buffer, v.byteOffset, v.byteLength);
  const r: RankRecord = { score: b.readDoubleBE(0), rank: b[8]!, followers: b.readUInt32BE(9), mutes: b.readUInt32BE(13) };
  if (b.length >= FULL_BYTES) {
    r.trusted = b.readFloatBE(21);
    const seen = b.readUInt32BE(25);
    if (seen !== 0xffffffff) r.seen = seen;
  }
  return r;
}

/** Score only, from a value (search reads this per candidate). */
export const rankScoreOf = (v: Uint8Array): number => Buffer.from(v.buffer, v.byteOffset, v.byteLength).readDoubleBE(0);
export const rankOfValue = (v: Uint8Array): number => v[8]!;
/** Trusted followers from a value, or -1 when it was written before they were (search reads this per candidate). */
export const rankTrustedOf = (v: Uint8Array): number => (v.length >= FULL_BYTES ? Buffer.from(v.buffer, v.byteOffset, v.byteLength).readFloatBE(21) : -1);
/** First-seen order from a value, or -1 when unknown. */
export const rankSeenOf = (v: Uint8Array): number => {
  if (v.length < FULL_BYTES) return -1;
  const s = Buffer.from(v.buffer, v.byteOffset, v.byteLength).readUInt32BE(25);
  return s === 0xffffffff ? -1 : s;
};
const generationOf = (v: Uint8Array): number => Buffer.from(v.buffer, v.byteOffset, v.byteLength).readUInt32BE(17);


/** One author's list: the author (32 bytes) and the 64-hex values of its p tags (unchecked). */
export interface AuthorList {
  author: Buffer;
  targets: string[];
}

/** A batch of graph edges: follower[i] follows (or mutes) followee[i], as store pubkey ids. */
export interface EdgeBatch {
  followee: Uint32Array;
  follower: Uint32Array;
}

/** A batch of current lists of one kind: authors[i] (store id, ascending) holds the list stored under serials[i]. */
export interface ListBatch {
  authors: Uint32Array;
  serials: Float64Array;
}

/** A batch of pubkeys by store id: ids[i] is the pubkey keys[32·i, 32·i + 32). */
export interface PubkeyBatch {
  ids: Uint32Array;
  keys: Buffer;
}

/**
 * The key decoder of the graph handle edges() reads: each key read (kind 2 + followee 4 +
 * follower 4) goes straight into the batch's two arrays and stands for its index there, so no
 * Buffer is made per edge (lmdb-js makes one per key of a binary-keyed handle: measured, reading
 * the edges took 2.5 times as long). Keys written (a range's start and end, or a key read, when
 * lmdb-js repositions a cursor) are buffers or such indexes.
 */
class EdgeKeys {
  followee = new Uint32Array(0);
  follower = new Uint32Array(0);
  n = 0;
  private kind = 0;

  /** A batch's arrays are its own (a caller may keep one; generators may interleave). */
  begin(kind: number, batch: number): void {
    this.kind = kind;
    this.n = 0;
    this.followee = new Uint32Array(batch);
    this.follower = new Uint32Array(batch);
  }

  readonly encoder = {
    readKey: (b: Uint8Array, start: number, end: number): number => {
      const i = this.n;
      if (end - start !== 10 || i >= this.followee.length) return -1;
      this.followee[i] = ((b[start + 2]! << 24) | (b[start + 3]! << 16) | (b[start + 4]! << 8) | b[start + 5]!) >>> 0;
      this.follower[i] = ((b[start + 6]! << 24) | (b[start + 7]! << 16) | (b[start + 8]! << 8) | b[start + 9]!) >>> 0;
      this.n = i + 1;
      return i;
    },
    writeKey: (key: Uint8Array | number, target: Uint8Array, start: number): number => {
      const k = typeof key === 'number' ? edgeKey(this.kind, this.followee[key]!, this.follower[key]!) : key;
      target.set(k, start);
      return start + k.length;
    },
  };
}

/**
 * Entries read per batch by the pass's graph reads (edges, current lists, pubkeys), between which
 * the caller yields: 65,536 took 60-130 ms of the main thread on the 600,000-event store
 * (bench/nip85-start); 16,384 about a quarter of that.
 */
const READ_BATCH = 16_384;

/** The graph's database (schema.ts names it ev.graph, graph.ts keys it), opened again with EdgeKeys. */
const GRAPH_DB_NAME = 'ev.graph';

/** The handle src/trust uses: read the graph, write ranks, read ranks. */
export class RankStore {
  private readonly edgeKeys = new EdgeKeys();
  /** ev.graph read through EdgeKeys (opened with the store: it exists by then; create: false) */
  private readonly edgeDb: Database<unknown, number>;

  constructor(
    private readonly env: RootDatabase,
    private readonly dbs: Pick<Dbs, 'kind' | 'events' | 'meta' | 'rank' | 'graph'>,
  ) {
    const options = { name: GRAPH_DB_NAME, create: false, encoding: 'binary' as const, keyEncoder: this.edgeKeys.encoder };
    this.edgeDb = env.openDB<unknown, number>(options);
  }

  meta(): RankMeta | undefined {
    return this.dbs.meta.get(RANK_META_KEY) as RankMeta | undefined;
  }

  /**
   * Whether a search without include:spam leaves this author out: a rooted pass ranked it below
   * its hideBelow (the rule of stored searches, store/search/scan.ts; unscored pubkeys never).
   */
  hiddenFromSearch(pubkeyHex: string): boolean {
    const below = searchHideBelow(this.meta());
    if (below < 0) return false;
    const r = this.get(pubkeyHex);
    return r !== undefined && r.rank < below;
  }

  get(pubkeyHex: string): RankRecord | undefined {
    if (!/^[0-9a-f]{64}$/.test(pubkeyHex)) return undefined;
    const v = this.dbs.rank.getBinaryFast(Buffer.from(pubkeyHex, 'hex'));
    return v && v.length >= VALUE_BYTES ? decodeRank(v) : undefined;
  }

  /**
   * Current stored lists of one kind, at most `batch` lists or about `maxTargets` p tags at a time
   * (follow lists run to thousands of tags: the caller yields between batches, so a batch is
   * bounded by the work it holds, not only by its count). No read transaction is held between batches.
   * The rank pass reads the graph instead (edges()); this reads the events themselves, what the
   * graph is checked against (test/store/graph-oracle.test.ts).
   */
  async *lists(kind: number, batch = 500, maxTargets = 20_000): AsyncGenerator<AuthorList[]> {
    const r = timeRange(kindPrefix(kind), 0, 0xffffffff);
    let start: Buffer = r.end;
    let exclusive = false;
    for (;;) {
      const keys = Array.from(this.dbs.kind.getKeys({ start, end: r.start, exclusiveStart: exclusive, limit: batch }));
      if (keys.length === 0) return;
      const out: AuthorList[] = [];
      let targetsRead = 0;
      let used = 0;
      for (const k of keys) {
        used++;
        const value = this.dbs.events.getBinary(serialKey(keySerial(k)));
        if (!value || value.length === 0) continue;
        let tags: unknown;
        try {
          tags = (JSON.parse(jsonOf(value)) as { tags?: unknown }).tags;
        } catch {
          continue;
        }
        const targets: string[] = [];
        if (Array.isArray(tags)) for (const t of tags) if (Array.isArray(t) && t[0] === 'p' && typeof t[1] === 'string' && t[1].length === 64) targets.push(t[1]);
        out.push({ author: Buffer.from(value.subarray(OFF_PUBKEY, OFF_PUBKEY + 32)), targets });
        targetsRead += targets.length;
        if (targetsRead >= maxTargets) break;
      }
      yield out;
      if (used === keys.length && keys.length < batch) return;
      start = keys[used - 1]!;
      exclusive = true;
    }
  }

  /**
   * The edges of one graph kind (3 follows, 10000 mutes: graph.ts GRAPH_KINDS), followee-major (the
   * graph's key order: by followee id, then follower id), at most `batch` at a time. Each edge is
   * one member of an author's current list; a list naming a pubkey twice is one edge. Read with
   * getKeys + limit, resuming after the last key: no read transaction is held between batches (the
   * caller yields between them), so a pass over a store being written sees each edge at most once
   * but not one snapshot, as lists() did.
   */
  async *edges(kind: number, batch = READ_BATCH): AsyncGenerator<EdgeBatch> {
    const end = kindIdKey(kind + 1, 0);
    let start = kindIdKey(kind, 0);
    let exclusive = false;
    const d = this.edgeKeys;
    for (;;) {
      d.begin(kind, batch);
      // EdgeKeys fills d's arrays as the keys are read: nothing to do with the keys themselves
      for (const _i of this.edgeDb.getKeys({ start, end, exclusiveStart: exclusive, limit: batch })) continue;
      const { followee, follower, n } = d;
      if (n === 0) return;
      yield { followee: followee.subarray(0, n), follower: follower.subarray(0, n) };
      if (n < batch) return;
      start = edgeKey(kind, followee[n - 1]!, follower[n - 1]!);
      exclusive = true;
    }
  }

  /**
   * The current lists of one graph kind: their authors (store ids, ascending) and each list's
   * serial, at most `batch` at a time, no read transaction held between batches. Includes lists
   * with no member: their authors are pubkeys of the graph too. A serial changes whenever the list
   * is replaced (serials only grow), so a pass that kept them knows which lists changed since.
   */
  async *listAuthors(kind: number, batch = READ_BATCH): AsyncGenerator<ListBatch> {
    const end = kindIdKey(kind + 1, 0);
    let start = kindIdKey(kind, 0);
    let exclusive = false;
    for (;;) {
      const authors = new Uint32Array(batch);
      const serials = new Float64Array(batch);
      let n = 0;
      for (const { key, value } of this.dbs.graph.graphcur.getRange({ start, end, exclusiveStart: exclusive, limit: batch })) {
        if (key.length < 6 || value.length < 4 + SERIAL_BYTES) continue;
        authors[n] = key.readUInt32BE(2);
        serials[n++] = readSerial(value, 4);
      }
      if (n === 0) return;
      yield { authors: authors.subarray(0, n), serials: serials.subarray(0, n) };
      if (n < batch) return;
      start = kindIdKey(kind, authors[n - 1]!);
      exclusive = true;
    }
  }

  /** The serial of an author's current list of a graph kind (store id), or undefined when it has none. */
  listSerial(kind: number, author: number): number | undefined {
    const v = this.dbs.graph.graphcur.getBinary(kindIdKey(kind, author));
    return v && v.length >= 4 + SERIAL_BYTES ? readSerial(v, 4) : undefined;
  }

  /**
   * The members (store ids) of the list stored under `serial`, as the graph holds them (graph.ts
   * graphMembers: the distinct 64-hex `p` values), the author itself left out; null when that event
   * is gone (replaced or deleted since its serial was read) or a member has no id (not written by
   * the graph: the store changed in between).
   */
  listMembers(kind: number, author: number, serial: number): Uint32Array | null {
    const value = this.dbs.events.getBinary(serialKey(serial));
    if (!value || value.length === 0 || kindOf(value) !== kind) return null;
    let tags: unknown;
    try {
      tags = (JSON.parse(jsonOf(value)) as { tags?: unknown }).tags;
    } catch {
      return null;
    }
    if (!Array.isArray(tags)) return null;
    const members = graphMembers(kind, tags.filter((t): t is string[] => Array.isArray(t) && t.every((x) => typeof x === 'string')));
    const out = new Uint32Array(members.length);
    let n = 0;
    for (const m of members) {
      const id = pubkeyId(this.dbs, m);
      if (id === undefined) return null;
      if (id !== author) out[n++] = id;
    }
    return out.subarray(0, n);
  }

  /** One past the highest store pubkey id given so far (ids are dense from 1; graph.ts NEXT_PKID_KEY). */
  pubkeyIdLimit(): number {
    const v = this.dbs.meta.get(NEXT_PKID_KEY);
    return typeof v === 'number' ? v : 1;
  }

  /** The store pubkey id of a pubkey (hex), or undefined when the graph has not seen it. */
  idOfPubkey(pubkeyHex: string): number | undefined {
    return pubkeyId(this.dbs, pubkeyHex);
  }

  /** The pubkey (32 bytes) of a store pubkey id, or undefined when it has none. */
  pubkeyOfId(id: number): Buffer | undefined {
    const v = this.dbs.graph.idpk.getBinary(u32(id));
    return v && v.length === 32 ? Buffer.from(v) : undefined;
  }

  /**
   * The pubkeys of store ids from..until-1 that have one, in id order, at most `batch` at a time
   * (one sequential read of ev.idpk; no read transaction held between batches).
   */
  async *pubkeysOfIds(from: number, until: number, batch = READ_BATCH): AsyncGenerator<PubkeyBatch> {
    let next = from;
    while (next < until) {
      const ids = new Uint32Array(batch);
      const keys = Buffer.allocUnsafe(batch * 32);
      let n = 0;
      let read = 0;
      let last = -1;
      for (const { key, value } of this.dbs.graph.idpk.getRange({ start: u32(next), end: u32(until), limit: batch })) {
        read++;
        if (key.length !== 4) continue;
        last = key.readUInt32BE(0);
        if (value.length !== 32) continue;
        ids[n] = last;
        value.copy(keys, n * 32);
        n++;
      }
      if (n > 0) yield { ids: ids.subarray(0, n), keys: keys.subarray(0, n * 32) };
      if (read < batch || last < 0) return;
      next = last + 1;
    }
  }

  /** Writes one chunk of a pass's ranks (pubkeys as 32-byte buffers). */
  async putRanks(entries: Array<{ pubkey: Uint8Array; record: RankRecord }>, generation: number): Promise<void> {
    const db = this.dbs.rank;
    // lmdb-js's batched write, like the event writer's (no child transactions: txn.ts journals instead)
    await this.env.transaction(() => {
      for (const e of entries) db.putSync(Buffer.from(e.pubkey), encodeRank(e.record, generation));
    });
  }

  /**
   * Removes entries not written by `generation` (pubkeys in no list any more), reading `batch`
   * entries at a time and awaiting `pause` between reads, so a large table does not hold the
   * event loop. Returns how many were removed.
   */
  async prune(generation: number, pause: () => Promise<void> = async () => {}, batch = 10_000): Promise<number> {
    let removed = 0;
    let start: Buffer | undefined;
    for (;;) {
      const stale: Buffer[] = [];
      let n = 0;
      let last: Buffer | undefined;
      for (const { key, value } of this.dbs.rank.getRange(start ? { start, exclusiveStart: true, limit: batch } : { limit: batch })) {
        n++;
        last = key;
        if (value.length < VALUE_BYTES || generationOf(value) !== generation) stale.push(Buffer.from(key)); // kept past the iteration: a copy
      }
      if (stale.length > 0) await this.env.transaction(() => { for (const k of stale) this.dbs.rank.removeSync(k); });
      removed += stale.length;
      if (n < batch || !last) return removed;
      start = Buffer.from(last);
      await pause();
    }
  }

  /** The pass's most trusted pubkeys, best first (written before its meta: readers rebuild on a new generation). */
  async setTop(pubkeys: Buffer): Promise<void> {
    await this.dbs.meta.put(RANK_TOP_KEY, pubkeys);
  }

  async setMeta(m: RankMeta): Promise<void> {
    await this.dbs.meta.put(RANK_META_KEY, m);
  }

  /** Top pubkeys by rank score (a full read of the rank table: for pages and NIP-85, not per request). */
  top(n: number, minRank = 0): Array<{ pubkey: string; record: RankRecord }> {
    const best: Array<{ pubkey: string; record: RankRecord }> = [];
    for (const { key, value } of this.dbs.rank.getRange({})) {
      if (value.length < VALUE_BYTES || rankOfValue(value) < minRank) continue;
      const score = rankScoreOf(value);
      if (best.length >= n && score <= best[best.length - 1]!.record.score) continue;
      best.push({ pubkey: key.toString('hex'), record: decodeRank(value) });
      best.sort((a, b) => b.record.score - a.record.score);
      if (best.length > n) best.pop();
    }
    return best;
  }

  count(): number {
    return (this.dbs.rank.getStats() as { entryCount: number }).entryCount;
  }
}
