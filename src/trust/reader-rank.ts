// Trust as seen from one reader (docs/search.md, "Ranked for one reader"): personalized PageRank
// from the reader, estimated by random walks, then each pubkey's followers counted by the reader's
// trust in each, as global search counts trusted followers (trusted-followers.ts):
//
//   s_r(v)    = share of the walks' visits at v (walks start at the reader, go on with probability
//               `damping` to a random follow, stop at someone who follows nobody)
//   trust_r(c) = Σ over followers f of c  s_r(f) · n
//
// Unlike the global count, a follower's weight is not capped at 1: the reader, the people it
// follows and theirs are trusted many times more than the average pubkey, and that is what makes
// the rank the reader's (capped, every follower the walks reach counts alike and the order is the
// global one again: on search-eval's graph, where a reader's follows favour a namesake the global
// order puts second, capped at 1 it came first for 18% of them, uncapped for 95%).
//
// Random walks (Monte Carlo PageRank, Avrachenkov et al. 2007) cost what the budget allows and
// nothing per pubkey of the graph: W walks are about W / (1 - damping) steps, each a random pick in
// one follow list. The people near the reader get most visits, so their estimates are the good
// ones, and they are the ones whose trust a reader's search needs. Typed arrays only: visits per
// store id, the lists of the kept graph (kept-graph.ts); `pause` is awaited between slices.
import type { StoreLists } from './kept-graph.js';
import { U32Chunks, U32List } from './graph.js';
import { prng } from '../lib/prng.js';

export interface ReaderParams {
  damping: number;
  /** random walks to take (the budget in work) */
  walks: number;
  /** stop walking at this time (performance.now(); the budget in time): fewer walks, the same meaning */
  deadline: number;
  /** entries kept, most trusted first */
  keep: number;
  /** of those, how many are also listed best first (search reads their profiles) */
  top: number;
  /** pubkeys of the graph (the n of s_r · n) */
  nodes: number;
  /** seeds the walks, so that one reader's rank is the same in every run */
  seed: number;
}

export interface ReaderRank {
  /** store ids, ascending, and each one's trust as seen from the reader */
  ids: Uint32Array;
  trust: Float32Array;
  /** the most trusted store ids, best first */
  top: Uint32Array;
  /** walks taken, and visits counted */
  walks: number;
  visits: number;
}

/** Slice of walks between two pauses. */
const SLICE = 2048;

/**
 * Per-store-id arrays a computation uses and leaves zeroed (only what it touched is reset), so
 * computations one after another reuse them: 8 bytes per store id, whatever the number of readers.
 */
export class ReaderScratch {
  visits: Uint32Array;
  acc: Float32Array;
  constructor(size: number) {
    this.visits = new Uint32Array(size);
    this.acc = new Float32Array(size);
  }
  /** Room for store ids below `size`. */
  fit(size: number): void {
    if (this.visits.length >= size) return;
    this.visits = new Uint32Array(size);
    this.acc = new Float32Array(size);
  }
}

/** The list index of each store id in `lists` (authors ascending), -1 for none. */
export function listIndex(lists: StoreLists): Int32Array {
  const n = lists.size;
  const max = n > 0 ? lists.authors.data[n - 1]! : 0;
  const at = new Int32Array(max + 1).fill(-1);
  for (let i = 0; i < n; i++) at[lists.authors.data[i]!] = i;
  return at;
}

/**
 * The reader's rank, or null when the reader follows no one in the graph (nothing to personalise
 * from: the caller falls back to the global rank).
 */
export async function readerRank(lists: StoreLists, at: Int32Array, reader: number, p: ReaderParams, scratch: ReaderScratch, pause: () => Promise<void>): Promise<ReaderRank | null> {
  const start = lists.start.data;
  const { chunks } = lists.targets;
  const bits = U32Chunks.BITS;
  const mask = U32Chunks.MASK;
  const row = reader < at.length ? at[reader]! : -1;
  if (row < 0 || start[row + 1]! === start[row]!) return null;
  const { visits, acc } = scratch;
  const touched = new U32List();
  const random = prng(p.seed);
  let total = 0;
  let walks = 0;
  while (walks < p.walks) {
    const end = Math.min(p.walks, walks + SLICE);
    for (; walks < end; walks++) {
      let v = reader;
      for (;;) {
        if (visits[v]++ === 0) touched.push(v);
        total++;
        // the reader always takes its first step (its follows are what the rank is personalised to)
        if (v !== reader && random() >= p.damping) break;
        const r = v < at.length ? at[v]! : -1;
        if (r < 0) break;
        const from = start[r]!;
        const len = start[r + 1]! - from;
        if (len === 0) break;
        const e = from + Math.floor(random() * len);
        v = chunks[e >>> bits]![e & mask]!;
        if (v >= visits.length) break; // an id given after the scratch was sized: not in this graph
      }
    }
    await pause();
    if (performance.now() > p.deadline) break;
  }
  // each visited pubkey's follows get its weight: the reader's trust in it, relative to the average
  const reached = new U32List();
  let done = 0;
  const t = touched.data;
  for (let k = 0; k < touched.length; k++) {
    const f = t[k]!;
    const w = (visits[f]! / total) * p.nodes;
    visits[f] = 0;
    const r = f < at.length ? at[f]! : -1;
    if (r < 0) continue;
    for (let e = start[r]!, to = start[r + 1]!; e < to; e++) {
      const c = chunks[e >>> bits]![e & mask]!;
      if (c >= acc.length) continue;
      if (acc[c] === 0) reached.push(c);
      acc[c] += w;
    }
    done += start[r + 1]! - start[r]!;
    if (done >= 1_000_000) {
      done = 0;
      await pause();
    }
  }
  // the `keep` most trusted (a typed-array sort of the values finds the cut), by store id
  const ids = reached.data.subarray(0, reached.length);
  const values = new Float32Array(ids.length);
  for (let k = 0; k < ids.length; k++) values[k] = acc[ids[k]!]!;
  const cut = ids.length > p.keep ? Float32Array.from(values).sort()[ids.length - p.keep]! : 0;
  const keptIds = new U32List();
  for (let k = 0; k < ids.length; k++) if (values[k]! >= cut && keptIds.length < p.keep) keptIds.push(ids[k]!);
  const outIds = keptIds.data.slice(0, keptIds.length).sort();
  const outTrust = new Float32Array(outIds.length);
  for (let k = 0; k < outIds.length; k++) outTrust[k] = acc[outIds[k]!]!;
  const best = Array.from(outIds.keys()).sort((a, b) => outTrust[b]! - outTrust[a]! || outIds[a]! - outIds[b]!).slice(0, p.top);
  const top = Uint32Array.from(best, (k) => outIds[k]!);
  for (let k = 0; k < ids.length; k++) acc[ids[k]!] = 0;
  return { ids: outIds, trust: outTrust, top, walks, visits: total };
}
