// One full ranking pass: read the store's follow and mute graph into typed-array rows, iterate,
// write every scored pubkey's rank with a new generation, prune older ones, record the meta.
// Memory is the rows (4 bytes per edge) plus ~100 bytes per pubkey; nothing per edge is an object.
// While the rows are built, a kind's edges as read (4 bytes each) sit beside them: 8 bytes an edge
// at the peak.
import { setImmediate as tick } from 'node:timers/promises';
import type { RankMeta, RankRecord, RankStore } from '../store/ranks.js';
import { Rows, U32Chunks, U32List } from './graph.js';
import { pageRank, type RankParams } from './pagerank.js';
import { PubkeyIds } from './pubkeys.js';
import { givePassIds, IdMap, SEEN } from './pass-ids.js';
import { keepRows, refreshLists, rowsOfKept, scanLists, type KeptGraph } from './kept-graph.js';
import { rankScale } from './scale.js';
import { trustedFollowers } from './trusted-followers.js';

export const FOLLOWS = 3;
export const MUTES = 10000;
/** Rank rows written per transaction. */
const WRITE_CHUNK = 2000;
/**
 * The most trusted pubkeys listed for search, best first: it finds a trusted person by rank, not
 * only among the first matches of the index's key order (store/search/trusted.ts).
 */
export const TOP_LISTED = 20_000;
/**
 * A pass reads the whole graph rather than the changed lists when more than this share of the
 * lists changed: parsing a list costs about three times its share of a whole read (measured at
 * 600,000 directory events: docs/trust.md).
 */
const MAX_CHANGED_SHARE = 0.25;

export interface PassOptions extends RankParams {
  roots: readonly string[];
  /** global mode: how many of plain PageRank's highest become the seeds of the rank (0: plain PageRank) */
  globalSeeds?: number;
  hideBelow: number;
  /** keep the graph for the next pass, so that it reads only the lists that changed (trust.keepGraph) */
  keepGraph?: boolean;
}

export interface PassResult {
  meta: RankMeta;
  ids: PubkeyIds;
  score: Float64Array;
  rank: Uint8Array;
  followers: Uint32Array;
  mutes: Uint32Array;
  /** followers weighted by the rank's trust in each (trusted-followers.ts): search's order */
  trusted: Float64Array;
  /** the graph for the next pass (with keepGraph) */
  kept?: KeptGraph;
}

/** A graph kind's edges as read: runs of one followee (store ids), 4 bytes an edge. */
interface ReadKind {
  /** the followee of each run, and one past its last edge */
  runFollowee: U32List;
  runEnd: U32List;
  /** the follower of each edge */
  follower: U32Chunks;
}

/** Edges handled between two yields when the rows are built. */
const SLICE = 500_000; // a few ms of work: the main thread is never held long (bench/nip85-start)

async function readKind(ranks: RankStore, kind: number, m: IdMap): Promise<ReadKind> {
  const read: ReadKind = { runFollowee: new U32List(), runEnd: new U32List(), follower: new U32Chunks() };
  let cur = -1;
  for await (const b of ranks.edges(kind)) {
    for (let i = 0; i < b.followee.length; i++) {
      const fe = b.followee[i]!;
      const fr = b.follower[i]!;
      if (fe === fr) continue; // following oneself
      if (fe !== cur) {
        if (cur >= 0) read.runEnd.push(read.follower.length);
        read.runFollowee.push(fe);
        cur = fe;
        if (m.map[fe] !== SEEN) m.see(fe); // past the end: undefined
      }
      read.follower.push(fr);
      if (m.map[fr] !== SEEN) m.see(fr);
    }
    await tick();
  }
  if (cur >= 0) read.runEnd.push(read.follower.length);
  return read;
}

/**
 * The rows of one kind, in pass ids: each follower's targets (a counting sort by follower).
 * `read` is used up: its followers become pass ids.
 */
async function rowsOf(read: ReadKind, pass: Uint32Array, n: number): Promise<Rows> {
  const rows = new Rows();
  const lengths = new Uint32Array(n);
  const runFollowee = read.runFollowee.data;
  const runEnd = read.runEnd.data;
  const chunks = read.follower.chunks;
  const bits = U32Chunks.BITS;
  const mask = U32Chunks.MASK;
  let done = 0;
  // count each follower's edges (its id becomes its pass id), then place them in the slots
  // rows.layout() gives each row
  for (let fill = 0; fill < 2; fill++) {
    const next = fill === 1 ? rows.layout(lengths) : null;
    let e = 0;
    for (let r = 0; r < read.runFollowee.length; r++) {
      const end = runEnd[r]!;
      const t = pass[runFollowee[r]!]!;
      done += end - e;
      if (t >= SEEN) e = end; // a store id without a pubkey: not in an intact store
      if (next) {
        for (; e < end; e++) {
          const a = chunks[e >>> bits]![e & mask]!;
          if (a < SEEN) rows.set(next[a]!++, t);
        }
      } else {
        for (; e < end; e++) {
          const c = chunks[e >>> bits]!;
          const a = pass[c[e & mask]!]!;
          c[e & mask] = a;
          if (a < SEEN) lengths[a]!++;
        }
      }
      if (done >= SLICE) {
        done = 0;
        await tick();
      }
    }
  }
  await rows.tidy(() => tick());
  return rows;
}

/**
 * The follow and mute rows from the store's graph (store/graph.ts), with pass ids given in store
 * id order to every pubkey of the graph: list authors and members. No list is parsed: the graph
 * holds the members of each author's current list (a `p` tag with a 64-lowercase-hex value,
 * duplicates once), read as followee-major edges, regrouped by follower here. Targets come in
 * followee order, so with ids given in store id order each row is sorted as it is placed.
 * With `keep`, the graph is also returned in store ids for the next pass (kept-graph.ts).
 */
export async function readGraph(ranks: RankStore, ids: PubkeyIds, keep = false): Promise<{ follows: Rows; mutes: Rows; kept?: KeptGraph }> {
  const m = new IdMap(ranks.pubkeyIdLimit());
  // the current lists first (their authors are pubkeys of the graph, with no member too): a list
  // replaced while the edges are read keeps its older serial and is read again by the next pass
  const scanned = [await scanLists(ranks, FOLLOWS, m, keep), await scanLists(ranks, MUTES, m, keep)];
  const read = [await readKind(ranks, FOLLOWS, m), await readKind(ranks, MUTES, m)];
  await givePassIds(ranks, m, ids);
  const pass = m.map;
  // shift(): a kind's edges as read are let go once its rows are built
  const follows = await rowsOf(read.shift()!, pass, ids.size);
  const mutes = await rowsOf(read.shift()!, pass, ids.size);
  if (!keep) return { follows, mutes };
  const passToStore = new Uint32Array(ids.size);
  for (let sid = 0; sid < pass.length; sid++) if (pass[sid]! < SEEN) passToStore[pass[sid]!] = sid;
  return { follows, mutes, kept: { follows: await keepRows(scanned[0]!, follows, passToStore), mutes: await keepRows(scanned[1]!, mutes, passToStore) } };
}

/**
 * The rows of this pass: from the graph kept by the pass before, brought up to date with the lists
 * that changed since (kept-graph.ts), else (the first pass, or too much changed) from the whole
 * graph. The kept graph is updated in place, a kind at a time, so that an old kind's lists are let
 * go once its new ones are built (8 bytes a follow at the peak, as a whole read); each kind stays a
 * complete, consistent set of lists with their serials whatever happens after.
 */
async function passGraph(ranks: RankStore, ids: PubkeyIds, kept: KeptGraph | undefined, keep: boolean): Promise<{ follows: Rows; mutes: Rows; kept?: KeptGraph; listsRead?: number }> {
  if (kept && keep) {
    const most = (lists: number) => Math.max(1000, Math.floor(lists * MAX_CHANGED_SHARE));
    let listsRead = 0;
    let complete = true;
    for (const [kind, field] of [[FOLLOWS, 'follows'], [MUTES, 'mutes']] as const) {
      const r = await refreshLists(ranks, kind, kept[field], most);
      if (!r) {
        complete = false;
        break;
      }
      kept[field] = r.lists;
      listsRead += r.read;
    }
    if (complete) return { ...(await rowsOfKept(ranks, kept, ids)), kept, listsRead };
  }
  return readGraph(ranks, ids, keep);
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

/**
 * A global rank's seeds: the `k` most followed pubkeys among those that follow someone (`score`
 * is their follower count). Plain PageRank gives every pubkey a share, so a ring of N fresh
 * accounts that follow each other and their target lifts it by about N shares (and, measured on
 * the search evaluation's graph, puts the ring's members among plain PageRank's highest: they
 * cannot choose the seeds). Personalised to the most followed, the ring gets nothing until the
 * seeds' side of the graph follows it, or until it has as many followers as the k-th seed. Only
 * pubkeys with a follow list can be seeds: one without would hand its share straight back.
 */
export function topIds(score: ArrayLike<number>, k: number, eligible: Uint8Array): number[] {
  const n = score.length;
  if (k <= 0 || n === 0) return [];
  // the k-th highest eligible score by a typed-array sort (fast at millions), then the ids at or above it
  const scores = new Float64Array(n);
  let m = 0;
  for (let i = 0; i < n; i++) if (eligible[i]) scores[m++] = score[i]!;
  if (m === 0) return [];
  const cut = scores.subarray(0, m).sort()[Math.max(0, m - k)]!;
  const ids: number[] = [];
  for (let i = 0; i < n && ids.length < k; i++) if (eligible[i] && score[i]! >= cut && score[i]! > 0) ids.push(i);
  return ids;
}

/**
 * The `k` most trusted pubkeys as search orders them (trusted followers, then score), best first,
 * concatenated (ties: lower id first).
 */
function topPubkeys(ids: PubkeyIds, trusted: Float64Array, score: Float64Array, k: number): Buffer {
  const all = new Uint8Array(score.length).fill(1);
  // trusted followers first; a pubkey scored but followed by no one trusted (a root) by its score
  const key = new Float64Array(score.length);
  for (let i = 0; i < key.length; i++) key[i] = trusted[i]! > 0 ? trusted[i]! : score[i]! > 0 ? Number.MIN_VALUE : 0;
  const top = topIds(key, k, all).sort((a, b) => trusted[b]! - trusted[a]! || score[b]! - score[a]! || a - b);
  const out = Buffer.allocUnsafe(top.length * 32);
  top.forEach((i, j) => out.set(ids.key(i), j * 32));
  return out;
}

/** 1 for each id that follows someone. */
function listHolders(follows: Rows, n: number): Uint8Array {
  const out = new Uint8Array(n);
  const src = follows.src.data;
  const start = follows.start.data;
  for (let r = 0; r < follows.rows; r++) if (start[r + 1]! > start[r]!) out[src[r]!] = 1;
  return out;
}

/** Follow lists naming each id (yielding every SLICE edges). */
async function followerCounts(follows: Rows, n: number): Promise<Uint32Array> {
  const out = new Uint32Array(n);
  const { chunks, bits, mask } = follows.raw();
  for (let e = 0; e < follows.edges; e++) {
    out[chunks[e >>> bits]![e & mask]!]!++;
    if (e % SLICE === SLICE - 1) await tick();
  }
  return out;
}

export async function rankPass(ranks: RankStore, o: PassOptions, kept?: KeptGraph): Promise<PassResult> {
  const started = Date.now();
  const ids = new PubkeyIds();
  const { follows, mutes, kept: next, listsRead } = await passGraph(ranks, ids, kept, o.keepGraph ?? false);
  // after the graph's pubkeys: a root in no list gets an id of its own
  const rootIds = o.roots.map((r) => ids.idOfHex(r, true)).filter((id) => id >= 0);
  const n = ids.size;
  const r = rootIds.length > 0 || !o.globalSeeds
    ? await pageRank(n, follows, mutes, rootIds, o, () => tick())
    : await pageRank(n, follows, mutes, topIds(await followerCounts(follows, n), o.globalSeeds, listHolders(follows, n)), o, () => tick());
  const trusted = await trustedFollowers(n, follows, r.score, () => tick());
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
      // pass ids are given in store id order, the order in which the store first saw each pubkey in a list (pass-ids.ts)
      chunk.push({ pubkey: ids.key(i), record: { score: r.score[i]!, rank: rank[i]!, followers: r.followers[i]!, mutes: r.mutes[i]!, trusted: trusted[i]!, seen: i } });
    }
    await ranks.putRanks(chunk, generation);
    await tick();
  }
  await ranks.prune(generation, () => tick());
  await ranks.setTop(topPubkeys(ids, trusted, r.score, TOP_LISTED));
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
    read: listsRead === undefined ? 'graph' : 'changed',
    ...(listsRead === undefined ? {} : { listsRead }),
  };
  await ranks.setMeta(meta);
  return { meta, ids, score: r.score, rank, followers: r.followers, mutes: r.mutes, trusted, ...(next ? { kept: next } : {}) };
}
