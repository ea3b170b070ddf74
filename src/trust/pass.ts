// One full ranking pass: read the stored follow and mute lists into typed-array rows, iterate,
// write every scored pubkey's rank with a new generation, prune older ones, record the meta.
// Memory is the rows (4 bytes per edge) plus ~100 bytes per pubkey; nothing per edge is an object.
import { setImmediate as tick } from 'node:timers/promises';
import type { RankMeta, RankRecord, RankStore } from '../store/ranks.js';
import { Rows } from './graph.js';
import { pageRank, type RankParams } from './pagerank.js';
import { PubkeyIds } from './pubkeys.js';
import { rankScale } from './scale.js';

export const FOLLOWS = 3;
export const MUTES = 10000;
/** Rank rows written per transaction. */
const WRITE_CHUNK = 2000;

export interface PassOptions extends RankParams {
  roots: readonly string[];
  hideBelow: number;
}

export interface PassResult {
  meta: RankMeta;
  ids: PubkeyIds;
  score: Float64Array;
  rank: Uint8Array;
  followers: Uint32Array;
  mutes: Uint32Array;
}

async function readRows(ranks: RankStore, kind: number, ids: PubkeyIds, rows: Rows): Promise<void> {
  let scratch = new Uint32Array(1024);
  for await (const batch of ranks.lists(kind)) {
    for (const l of batch) {
      const src = ids.idOf(l.author, true);
      if (scratch.length < l.targets.length) scratch = new Uint32Array(l.targets.length * 2);
      let k = 0;
      for (const t of l.targets) {
        const id = ids.idOfHex(t, true);
        if (id >= 0) scratch[k++] = id;
      }
      rows.add(src, scratch.subarray(0, k));
    }
    await tick();
  }
}

/** Ids ordered by the first two bytes of their pubkey (counting sort: O(n), no comparisons). */
function keyOrder(ids: PubkeyIds, n: number): Uint32Array {
  const counts = new Uint32Array(65537);
  for (let i = 0; i < n; i++) {
    const k = ids.key(i);
    counts[((k[0]! << 8) | k[1]!) + 1]!++;
  }
  for (let b = 1; b < counts.length; b++) counts[b]! += counts[b - 1]!;
  const order = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    const k = ids.key(i);
    order[counts[(k[0]! << 8) | k[1]!]!++] = i;
  }
  return order;
}

export async function rankPass(ranks: RankStore, o: PassOptions): Promise<PassResult> {
  const started = Date.now();
  const ids = new PubkeyIds();
  const rootIds = o.roots.map((r) => ids.idOfHex(r, true)).filter((id) => id >= 0);
  const follows = new Rows();
  const mutes = new Rows();
  await readRows(ranks, FOLLOWS, ids, follows);
  await readRows(ranks, MUTES, ids, mutes);
  const n = ids.size;
  const r = await pageRank(n, follows, mutes, rootIds, o, () => tick());
  const scale = rankScale(r.score, n);
  const rank = new Uint8Array(n);
  for (let i = 0; i < n; i++) rank[i] = scale(r.score[i]!);

  const generation = ((ranks.meta()?.generation ?? 0) + 1) >>> 0;
  // written in key order (by the first two bytes: a counting sort), so that each transaction
  // touches a few neighbouring pages of the rank table instead of one page per entry: random
  // order made every chunk rewrite most of the table's pages, and large transactions of
  // scattered updates failed in lmdb-js (MDB_BAD_TXN, reserved freelist) on a 100,000-pubkey store
  const order = keyOrder(ids, n);
  for (let from = 0; from < n; from += WRITE_CHUNK) {
    const chunk: Array<{ pubkey: Uint8Array; record: RankRecord }> = [];
    for (let k = from; k < Math.min(n, from + WRITE_CHUNK); k++) {
      const i = order[k]!;
      chunk.push({ pubkey: ids.key(i), record: { score: r.score[i]!, rank: rank[i]!, followers: r.followers[i]!, mutes: r.mutes[i]! } });
    }
    await ranks.putRanks(chunk, generation);
    await tick();
  }
  await ranks.prune(generation, () => tick());
  const meta: RankMeta = {
    mode: rootIds.length > 0 ? 'rooted' : 'global',
    roots: rootIds.length,
    generation,
    computedAt: Date.now(),
    durationMs: Date.now() - started,
    nodes: n,
    edges: follows.edges,
    muteEdges: mutes.edges,
    iterations: r.iterations,
    hideBelow: o.hideBelow,
  };
  await ranks.setMeta(meta);
  return { meta, ids, score: r.score, rank, followers: r.followers, mutes: r.mutes };
}
