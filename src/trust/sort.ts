// Orders a pass's pubkeys by a key without holding the event loop: the chosen ids are sorted in
// runs of RUN with a comparison sort (a few ms each), a pause after each, then merged RUN at a time.
// A comparison sort of 200,000 ids in one go held the relay's main thread ~150 ms.

const RUN = 8192;

/**
 * The ids i < key.length with keep(i), by key descending, then by tie descending, then by id; at
 * most `max`.
 */
export async function sortedDesc(key: ArrayLike<number>, tie: ArrayLike<number>, keep: (i: number) => boolean, max: number, pause: () => Promise<void>): Promise<number[]> {
  const cmp = (a: number, b: number) => key[b]! - key[a]! || tie[b]! - tie[a]! || a - b;
  let runs: number[][] = [];
  let run: number[] = [];
  for (let i = 0; i < key.length; i++) {
    if (!keep(i)) continue;
    run.push(i);
    if (run.length === RUN) {
      runs.push(run.sort(cmp));
      run = [];
      await pause();
    }
  }
  if (run.length > 0) runs.push(run.sort(cmp));
  // pairwise merges, each cut to `max` (what is past it in a run is past it in the whole)
  while (runs.length > 1) {
    const next: number[][] = [];
    for (let k = 0; k < runs.length; k += 2) {
      const a = runs[k]!;
      const b = runs[k + 1];
      if (!b) {
        next.push(a.slice(0, max));
        continue;
      }
      const out: number[] = [];
      let i = 0;
      let j = 0;
      while (out.length < max && (i < a.length || j < b.length)) {
        if (j >= b.length || (i < a.length && cmp(a[i]!, b[j]!) <= 0)) out.push(a[i++]!);
        else out.push(b[j++]!);
        if ((out.length & 0xffff) === 0) await pause();
      }
      next.push(out);
      await pause();
    }
    runs = next;
  }
  return (runs[0] ?? []).slice(0, max);
}
