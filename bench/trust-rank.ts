// trust-rank: the trust ranking's computation at network scale, without a relay: N pubkeys, E
// follow edges (each pubkey follows E/N others, targets skewed so a few are followed by many), a
// share of them muting a few. Measures what a ranking pass holds and does after reading lists:
// mapping 64-hex targets to ids (the same PubkeyIds lookups the pass makes per p tag), building
// the rows, the PageRank iterations (rooted on R roots), and the peak resident memory
// (VmHWM). Reading the follow graph's edges from LMDB comes on top (docs/trust.md); since the graph
// (store schema 3) the pass no longer parses lists, and maps each store pubkey id once.
//
// With --readers K it then times K personalized ranks (search's observer:, trust/reader-rank.ts) of
// random list holders on the same graph, as the relay's defaults compute them (10,000 walks).
//
//   node --max-old-space-size=1024 dist/bench/trust-rank.js [--nodes 1000000] [--edges 50000000] [--roots 100] [--readers 20]
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Rows } from '../src/trust/graph.js';
import { pageRank } from '../src/trust/pagerank.js';
import { PubkeyIds } from '../src/trust/pubkeys.js';
import { StoreLists } from '../src/trust/kept-graph.js';
import { listIndex, ReaderScratch, readerRank } from '../src/trust/reader-rank.js';

const arg = (name: string, def: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const nodes = arg('nodes', 1_000_000);
const edges = arg('edges', 50_000_000);
const rootsN = arg('roots', 100);
const readersN = arg('readers', 0);
const per = Math.max(1, Math.round(edges / nodes));
const hwm = (): number => Number(/VmHWM:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 0) / 1024;
const mb = (n: number) => Math.round(n / 1024 / 1024);

let s = 12345;
const rnd = () => ((s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 0x100000000);

const t0 = performance.now();
// the pubkeys, as hex strings the way lists carry them (kept in one byte array, not as strings)
const keyBytes = randomBytes(nodes * 32);
const hexOf = (i: number) => keyBytes.toString('hex', i * 32, i * 32 + 32);
const ids = new PubkeyIds();
const follows = new Rows();
const mutes = new Rows();
const scratch = new Uint32Array(per * 2);
for (let i = 0; i < nodes; i++) {
  const src = ids.idOfHex(hexOf(i), true);
  let k = 0;
  for (let j = 0; j < per; j++) scratch[k++] = ids.idOfHex(hexOf(Math.floor(nodes * rnd() ** 3)), true);
  follows.add(src, scratch.subarray(0, k));
  if (i % 20 === 0) mutes.add(src, Uint32Array.from([ids.idOfHex(hexOf(Math.floor(nodes * rnd())), true)]));
}
const built = performance.now();
const roots = Array.from({ length: rootsN }, (_, i) => ids.idOfHex(hexOf(Math.floor(nodes * (i / rootsN) ** 3)), false));
let pauses = 0;
const r = await pageRank(ids.size, follows, mutes, roots, { damping: 0.85, iterations: 40, tolerance: 1e-7, muteWeight: 1 }, async () => { pauses++; });
const ranked = performance.now();
const mem = process.memoryUsage();
const out = {
  bench: 'trust-rank', nodes: ids.size, edges: follows.edges, muteEdges: mutes.edges, roots: rootsN,
  build_s: +((built - t0) / 1000).toFixed(1), iterate_s: +((ranked - built) / 1000).toFixed(1), iterations: r.iterations, pauses,
  peak_rss_mb: Math.round(hwm()), heap_used_mb: mb(mem.heapUsed), array_buffers_mb: mb(mem.arrayBuffers), node: process.version,
};
let readers: Record<string, number> = {};
if (readersN > 0) {
  // the rows as the kept graph holds them (authors ascending, members ascending), ids as store ids
  const lists = new StoreLists();
  const byAuthor = Array.from({ length: follows.rows }, (_, row) => row).sort((a, b) => follows.src.data[a]! - follows.src.data[b]!);
  const members: number[] = [];
  for (const row of byAuthor) {
    members.length = 0;
    follows.forTargets(row, (t) => members.push(t));
    lists.add(follows.src.data[row]!, 0, members.sort((a, b) => a - b));
  }
  const at = listIndex(lists);
  const scratch = new ReaderScratch(ids.size);
  const ms: number[] = [];
  let kept = 0;
  for (let k = 0; k < readersN; k++) {
    const reader = lists.authors.data[Math.floor(rnd() * lists.size)]!;
    const t = performance.now();
    const rr = await readerRank(lists, at, reader, { damping: 0.85, walks: 10_000, deadline: Infinity, keep: 20_000, top: 256, nodes: ids.size, seed: k }, scratch, async () => {});
    ms.push(performance.now() - t);
    kept += rr?.ids.length ?? 0;
  }
  ms.sort((a, b) => a - b);
  readers = { readers: readersN, reader_p50_ms: +ms[ms.length >> 1]!.toFixed(1), reader_max_ms: +ms[ms.length - 1]!.toFixed(1), reader_kept_avg: Math.round(kept / readersN) };
}
console.log(JSON.stringify({ ...out, ...readers, peak_rss_mb: Math.round(hwm()) }));
