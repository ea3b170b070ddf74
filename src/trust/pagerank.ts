// Personalised PageRank over the follow rows, with mutes counting against (docs/trust.md).
//
//   r' = d · (Σ over followers f of r[f] / follows(f)) + (1 - d + d · dangling) · teleport
//
// teleport is uniform over the roots (rooted) or over every pubkey (global); the rank of pubkeys
// that follow nobody (dangling) goes back to the teleport vector, so scores sum to 1. After the
// iteration each pubkey loses muteWeight · d · r[m] / (follows(m) + mutes(m)) for every muter m
// (floored at 0): a muter's rank is shared over everything it lists, so a mute by a trusted pubkey
// costs about what its follow would give (d · r[m] / follows(m)) and one by an unknown key almost
// nothing. (Divided by mutes(m) alone, as before, a mute list of 11 entries made each mute worth
// ~37 follows from the same pubkey, whose follow list holds 413 on average: on the real graph
// search-eval uses, with its 1,017 mutes, 3 mutes took a third of ODELL's global score, rank 89 to
// 82; now 0.6%.)
// Pure computation on typed arrays; `pause` is awaited between slices of work so the event loop
// (the relay) keeps running during a pass over a large graph.
import type { Rows } from './graph.js';

export interface RankParams {
  damping: number;
  iterations: number;
  tolerance: number;
  muteWeight: number;
}

export interface RankResult {
  /** score per id, after mutes */
  score: Float64Array;
  followers: Uint32Array;
  mutes: Uint32Array;
  iterations: number;
}

/** Edges processed between two pauses. */
const SLICE = 500_000; // a few ms of work: the main thread is never held long (bench/nip85-start)

export async function pageRank(n: number, follows: Rows, mutes: Rows, roots: readonly number[], p: RankParams, pause: () => Promise<void> = async () => {}): Promise<RankResult> {
  const rootShare = roots.length > 0 ? 1 / roots.length : 0;
  const isRoot = new Uint8Array(n);
  for (const r of roots) isRoot[r] = 1;
  const tele = roots.length > 0 ? (i: number) => (isRoot[i] ? rootShare : 0) : () => 1 / n;

  const outdeg = new Uint32Array(n);
  const followers = new Uint32Array(n);
  const { chunks, bits, mask } = follows.raw();
  const fs = follows.src.data;
  const fstart = follows.start.data;
  let counted = 0;
  for (let r = 0; r < follows.rows; r++) {
    const deg = fstart[r + 1]! - fstart[r]!;
    outdeg[fs[r]!] = deg;
    for (let e = fstart[r]!, end = fstart[r + 1]!; e < end; e++) followers[chunks[e >>> bits]![e & mask]!]!++;
    counted += deg;
    if (counted >= SLICE) {
      counted = 0;
      await pause();
    }
  }

  let cur = new Float64Array(n);
  let next = new Float64Array(n);
  for (let i = 0; i < n; i++) cur[i] = tele(i);
  const d = p.damping;
  let it = 0;
  for (; it < p.iterations; it++) {
    next.fill(0);
    let dangling = 0;
    for (let i = 0; i < n; i++) if (outdeg[i] === 0) dangling += cur[i]!;
    let done = 0;
    for (let r = 0; r < follows.rows; r++) {
      const s = fs[r]!;
      const deg = outdeg[s]!;
      if (deg === 0) continue;
      const share = (d * cur[s]!) / deg;
      for (let e = fstart[r]!, end = fstart[r + 1]!; e < end; e++) next[chunks[e >>> bits]![e & mask]!] += share;
      done += deg;
      if (done >= SLICE) {
        done = 0;
        await pause();
      }
    }
    const back = 1 - d + d * dangling;
    let delta = 0;
    for (let i = 0; i < n; i++) {
      const v = next[i]! + back * tele(i);
      next[i] = v;
      delta += Math.abs(v - cur[i]!);
    }
    [cur, next] = [next, cur];
    await pause();
    if (delta < p.tolerance) {
      it++;
      break;
    }
  }

  // mutes count against
  const muted = new Uint32Array(n);
  const penalty = next; // reuse the spare array
  penalty.fill(0);
  const m = mutes.raw();
  const ms = mutes.src.data;
  const mstart = mutes.start.data;
  for (let r = 0; r < mutes.rows; r++) {
    const deg = mstart[r + 1]! - mstart[r]!;
    if (deg === 0) continue;
    const share = (p.muteWeight * d * cur[ms[r]!]!) / (deg + outdeg[ms[r]!]!);
    for (let e = mstart[r]!, end = mstart[r + 1]!; e < end; e++) {
      const t = m.chunks[e >>> m.bits]![e & m.mask]!;
      penalty[t] += share;
      muted[t]!++;
    }
    counted += deg;
    if (counted >= SLICE) {
      counted = 0;
      await pause();
    }
  }
  for (let i = 0; i < n; i++) cur[i] = Math.max(0, cur[i]! - penalty[i]!);
  return { score: cur, followers, mutes: muted, iterations: it };
}
