// Trust ranks in the store (computed by src/trust, read by search, the trust policy and the pages):
//
//   ev.trust_rank  pubkey (32) -> score f64 | rank u8 | followers u32 | mutes u32 | generation u32
//   ev.meta "trustRank"        -> RankMeta of the pass whose ranks are current
//
// A pass writes every scored pubkey with its generation in chunks (readers see old and new values
// mixed for a moment: both are ranks), then removes entries of older generations (pubkeys no
// longer in any list), then records its meta. Follow and mute lists are read here too, so the
// trust service never sees the store's layout.
import type { RootDatabase } from 'lmdb';
import { headerLength, OFF_PUBKEY } from './codec.js';
import { kindPrefix, keySerial, serialKey, timeRange } from './keys.js';
import type { BinDb, Dbs } from './schema.js';

export const RANK_META_KEY = 'trustRank';
const VALUE_BYTES = 21;

export interface RankRecord {
  /** PageRank score after mutes (the scores of one pass sum to at most 1) */
  score: number;
  /** 0-100, NIP-85 scale (trust/scale.ts) */
  rank: number;
  /** follow lists (kind 3) naming this pubkey: what NIP-45 COUNT {"kinds":[3],"#p":[pk]} answers */
  followers: number;
  /** mute lists (kind 10000) naming it */
  mutes: number;
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
}

/** The rank below which searches leave a profile out (include:spam aside): a rooted pass's hideBelow, else -1 (none). */
export const searchHideBelow = (m: RankMeta | undefined): number => (m?.mode === 'rooted' && m.hideBelow > 0 ? m.hideBelow : -1);

export function encodeRank(r: RankRecord, generation: number): Buffer {
  const b = Buffer.allocUnsafe(VALUE_BYTES);
  b.writeDoubleBE(r.score, 0);
  b[8] = Math.max(0, Math.min(100, Math.round(r.rank)));
  b.writeUInt32BE(Math.min(r.followers, 0xffffffff), 9);
  b.writeUInt32BE(Math.min(r.mutes, 0xffffffff), 13);
  b.writeUInt32BE(generation >>> 0, 17);
  return b;
}

export function decodeRank(v: Uint8Array): RankRecord {
  const b = Buffer.from(v.buffer, v.byteOffset, v.byteLength);
  return { score: b.readDoubleBE(0), rank: b[8]!, followers: b.readUInt32BE(9), mutes: b.readUInt32BE(13) };
}

/** Score only, from a value (search reads this per candidate). */
export const rankScoreOf = (v: Uint8Array): number => Buffer.from(v.buffer, v.byteOffset, v.byteLength).readDoubleBE(0);
export const rankOfValue = (v: Uint8Array): number => v[8]!;
const generationOf = (v: Uint8Array): number => Buffer.from(v.buffer, v.byteOffset, v.byteLength).readUInt32BE(17);

export const openRankDb = (env: RootDatabase): BinDb => env.openDB<Buffer, Buffer>({ name: 'ev.trust_rank', keyEncoding: 'binary', encoding: 'binary' });

/** One author's list: the author (32 bytes) and the 64-hex values of its p tags (unchecked). */
export interface AuthorList {
  author: Buffer;
  targets: string[];
}

/** The handle src/trust uses: read lists, write ranks, read ranks. */
export class RankStore {
  constructor(
    private readonly env: RootDatabase,
    private readonly dbs: Pick<Dbs, 'kind' | 'events' | 'meta' | 'rank'>,
  ) {}

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
          tags = (JSON.parse(value.toString('utf8', headerLength(value), value.length)) as { tags?: unknown }).tags;
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

  /** Writes one chunk of a pass's ranks (pubkeys as 32-byte buffers). */
  async putRanks(entries: Array<{ pubkey: Uint8Array; record: RankRecord }>, generation: number): Promise<void> {
    const db = this.dbs.rank;
    // lmdb-js's batched write, like the event writer's (the store's write map has no child transactions)
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
