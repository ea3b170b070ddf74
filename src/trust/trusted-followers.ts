// Trusted followers: each pubkey's followers, each counted by how much the rank trusts it, what
// search orders people by (docs/search.md, "Ranking"):
//
//   trusted[v] = Σ over followers f of v  min(1, score[f] · n)
//
// score · n is a score relative to the average pubkey (scores sum to 1 over n pubkeys), so a
// follower counts fully from the average up and in proportion below it. PageRank alone says how
// much the people who matter follow an account: one follow by a hub outweighs a hundred ordinary
// followers, and a name typed into a search means the person most people follow, not the one a
// few hubs follow (on the search evaluation's graph, ordering by score put the person meant first
// for 93.9% of typeahead queries, by this count 99.7%). A raw follower count is what rings of
// fresh accounts inflate; here a follower the rank does not reach counts nothing, and one reached
// only through a ring's few real followers counts a sliver (measured: bench/RESULTS.md).
// Pure computation on the pass's typed arrays; `pause` between slices keeps the event loop running.
import type { Rows } from './graph.js';

/** Edges handled between two pauses. */
const SLICE = 500_000; // a few ms of work: the main thread is never held long (bench/nip85-start)

export async function trustedFollowers(n: number, follows: Rows, score: Float64Array, pause: () => Promise<void> = async () => {}): Promise<Float64Array> {
  const out = new Float64Array(n);
  const { chunks, bits, mask } = follows.raw();
  const src = follows.src.data;
  const start = follows.start.data;
  let done = 0;
  for (let r = 0; r < follows.rows; r++) {
    const w = Math.min(1, score[src[r]!]! * n);
    const from = start[r]!;
    const to = start[r + 1]!;
    if (w > 0) for (let e = from; e < to; e++) out[chunks[e >>> bits]![e & mask]!] += w;
    done += to - from;
    if (done >= SLICE) {
      done = 0;
      await pause();
    }
  }
  return out;
}
