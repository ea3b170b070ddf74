// search-tune: search-eval's data and queries without a relay, to choose the ranking's constants
// on the dev half (docs/search.md, "Ranking"). The ranks come from the relay's own code on typed
// arrays (the global rank with its seeds, trusted followers), every profile that matches a query
// is a candidate (a relay reads a window of them: bench/search-eval measures that on a relay), and
// they are ordered by store/search/order.ts with the factors given. Prints top-1 per half for
// whole names and typeahead, look-alikes and impersonators first, and look-alikes above a real match.
//
//   node dist/bench/search-tune.js [--leak K] [--hubs H] [--by trusted|score] [--factors 1.5,1.25,1,0.1;2,1.5,1,0.1] [--no-marks]
import { buildSet, queries, type Person } from './search-eval.js';
import { Rows } from '../src/trust/graph.js';
import { pageRank } from '../src/trust/pagerank.js';
import { topIds } from '../src/trust/pass.js';
import { trustedFollowers } from '../src/trust/trusted-followers.js';
import { orderCandidates, TIER_FACTOR, type Candidate } from '../src/store/search/order.js';
import { encodeDoc, parseSearch, searchDoc, tierOf, wholeNames } from '../src/nostr/search.js';
import { foldField } from '../src/nostr/search-text.js';

const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const leak = Number(arg('leak') ?? 0);
const hubs = Number(arg('hubs') ?? 0);
const by = arg('by') ?? 'trusted';
const marks = !process.argv.includes('--no-marks');
const factorSets = (arg('factors') ?? TIER_FACTOR.join(',')).split(';').map((f) => f.split(',').map(Number));
const SEEDS = 100;

const set = await buildSet(leak, hubs);
const qs = queries(set);
// the graph as a pass builds it: ids for every pubkey of a list, in the order the store first sees them
const id = new Map<string, number>();
const idOf = (pk: string) => id.get(pk) ?? (id.set(pk, id.size), id.size - 1);
const lists = set.events.filter((e) => e.kind === 3);
for (const e of lists) {
  idOf(e.pubkey);
  for (const t of e.tags) idOf(t[1]!);
}
const inGraph = id.size;
const n = inGraph;
const rows = new Rows();
const followers = new Uint32Array(n);
const holders = new Uint8Array(n);
for (const e of lists) {
  const targets = Uint32Array.from(e.tags.map((t) => idOf(t[1]!)));
  rows.add(idOf(e.pubkey), targets);
  if (targets.length > 0) holders[idOf(e.pubkey)] = 1;
}
rows.raw();
for (let r = 0; r < rows.rows; r++) rows.forTargets(r, (t) => followers[t]!++);
const { score } = await pageRank(n, rows, new Rows(), topIds(followers, SEEDS, holders), { damping: 0.85, iterations: 40, tolerance: 1e-7, muteWeight: 1 });
const trusted = await trustedFollowers(n, rows, score);

const created = new Map(set.events.filter((e) => e.kind === 0).map((e) => [e.pubkey, e.created_at]));
const docs = set.people.map((p) => {
  const d = searchDoc(0, JSON.stringify({ name: p.name, display_name: p.display, about: p.about }));
  return d ? encodeDoc(d) : null;
});
const info = set.people.map((p, i): Omit<Candidate, 'tier'> => {
  const k = id.get(p.key.pubkey);
  const names = docs[i] ? wholeNames(docs[i]!) : [];
  if (k === undefined) return { trust: -1, score: 0, seen: -1, createdAt: created.get(p.key.pubkey)!, names };
  return { trust: by === 'score' ? score[k]! * n : trusted[k]!, score: score[k]!, seen: k, createdAt: created.get(p.key.pubkey)!, names };
});
// candidates: every profile matching the query (by its first three letters, then tierOf)
const first3 = (s: string) => [...s].slice(0, 3).join('');
const by3 = new Map<string, number[]>();
docs.forEach((d, i) => {
  if (!d) return;
  const sd = searchDoc(0, JSON.stringify({ name: set.people[i]!.name, display_name: set.people[i]!.display, about: set.people[i]!.about }))!;
  for (const w of new Set([...sd.fields, ...sd.name, ...sd.body].map(first3))) (by3.get(w) ?? by3.set(w, []).get(w)!).push(i);
});
const matches = qs.map((q) => {
  const pq = parseSearch(q.q);
  const t0 = pq.terms[0];
  const pool = !t0 || t0.run || [...t0.text].length < 3 ? set.people.keys() : new Set([...(by3.get(first3(q.q)) ?? []), ...(by3.get(first3(t0.text)) ?? [])]);
  const out: Array<{ i: number; tier: number }> = [];
  for (const i of pool) {
    const t = docs[i] ? tierOf(pq, docs[i]!) : -1;
    if (t >= 0) out.push({ i, tier: t });
  }
  return out;
});
const index = new Map(set.people.map((p, i) => [p.key.pubkey, i]));
const names = (p: Person) => new Set([p.display, p.name].filter((x) => x !== '').map(foldField));
const impersonates = (p: Person, want: Person) => p !== want && p.followers < 0.1 * want.followers && [...names(p)].some((x) => names(want).has(x));

for (const factors of factorSets) {
  const rowsOut: Record<string, { n: number; top1: number; lookalike: number; impersonator: number; above: number }> = {};
  qs.forEach((q, k) => {
    const cs = matches[k]!;
    const ordered = orderCandidates(cs.map((c) => ({ tier: c.tier, ...info[c.i]!, ...(marks ? {} : { names: [] }) })), factors).order.map((j) => cs[j]!.i);
    const top = ordered.slice(0, 5).map((i) => set.people[i]!);
    const want = set.people[index.get(q.want)!]!;
    const r = (rowsOut[`${q.set} ${q.half}`] ??= { n: 0, top1: 0, lookalike: 0, impersonator: 0, above: 0 });
    r.n++;
    if (top[0] === want) r.top1++;
    if (top[0] && !top[0].real) r.lookalike++;
    if (top[0] && impersonates(top[0], want)) r.impersonator++;
    if (top.some((p, j) => !p.real && top.slice(j + 1).some((x) => x.real))) r.above++;
  });
  const pct = (a: number, b: number) => `${((100 * a) / b).toFixed(1)}%`;
  for (const [k, r] of Object.entries(rowsOut).sort()) {
    console.log(JSON.stringify({ bench: 'search-tune', by, factors, marks, leak, hubs, queries: k, n: r.n, top1: pct(r.top1, r.n), lookalikeFirst: r.lookalike, impersonatorFirst: r.impersonator, lookalikeAboveReal: pct(r.above, r.n) }));
  }
}
