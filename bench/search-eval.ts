// search-eval: does people search put the person people mean first? Built from public data: the
// follow graph and profile names that the nostr-social-graph package ships (24,489 pubkeys, 140,492
// follows, 19,535 names). Every real pubkey gets a key of its own derived from it (the graph and the
// names are real, the signatures ours), and three kinds of look-alikes are added for the 200 most
// followed: an impersonator with the same name lifted by a ring of 20 fresh accounts that follow it
// and each other, a fan whose about says the name, and a newcomer whose name starts with it.
// With --leak K each ring is also followed by K real list holders (the attack that survives the
// global rank's seeds: a ring the real graph follows into): ordinary ones (50 follows or more), or
// with --hubs H one of the H most followed.
//
//   --write FILE   writes the data set as JSONL (for `orbweaver import`, or any relay's import)
//   --url URL      asks the relay: a REQ {"kinds":[0],"search":q,"limit":5} per query
//
// The person a query means: of the real profiles whose names match it (a whole name, or a name or
// name word that starts with it), the one with the most followers in the real graph, when it has at
// least 1.5 times the followers of the next (a clear intent; closer calls are not scored). The
// look-alikes are never the answer. Queries: every real person with at least 3 followers gives its
// whole display name and its name (whole names) and their first 3 and 4 letters (typeahead); each
// query lands in the dev or the held-out half by a hash of its text. Reported: top-1 and top-5 per
// set and half, how often a look-alike came first, how often an impersonator came first (issue 75:
// an account whose name, folded for case and accents, equals the person's, with under a tenth of
// their followers: a look-alike or a real namesake), and search time p50/p99.
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { readFileSync } from 'node:fs';
import { num, str, UsageError, type Opts } from './lib/args.js';
import type { Bench } from './lib/bench.js';
import { BenchError, connect, type WebSocket } from './lib/client.js';
import { getSigner, type KeyPair, type NostrEvent, type Template } from './lib/events.js';
import { emit, log, machine, table } from './lib/report.js';
import { encodeDoc, parseSearch, searchDoc, tierOf, TIER } from '../src/nostr/search.js';
import { foldField } from '../src/nostr/search-text.js';

/** The graph's root in the package (its data was crawled from there). */
const GRAPH_ROOT = '4523be58d395b1b196a9b8c82b038b6895cb02b683d0c253a955068dba1facd0';
const LOOKALIKES = 200;
const RING = 20;
const MIN_FOLLOWERS = 3;
const MARGIN = 1.5;
const LIMIT = 5;
/** --leak: real list holders that follow into the rings hold at least this many follows (ordinary users, not the few hubs) */
const LEAK_MIN_FOLLOWS = 50;
const LEAK_STRIDE = 7;
/** An impersonator of the person meant has under this share of their followers (issue 75). */
const IMPERSONATOR_SHARE = 0.1;

export interface Person {
  /** derived key (the real pubkey's stand-in) */
  key: KeyPair;
  real: boolean;
  display: string;
  name: string;
  about: string;
  /** followers in the real graph (0 for look-alikes) */
  followers: number;
}

export interface EvalSet {
  people: Person[];
  events: NostrEvent[];
  /** pubkey -> person */
  byPubkey: Map<string, Person>;
}

const sha = (s: string): Buffer => createHash('sha256').update(s).digest();

export async function buildSet(leak = 0, hubs = 0): Promise<EvalSet> {
  const require = createRequire(import.meta.url);
  const pkgDir = dirname(require.resolve('nostr-social-graph/package.json'));
  const { SocialGraph } = (await import('nostr-social-graph')) as unknown as { SocialGraph: { fromBinary(root: string, data: Uint8Array): Promise<SocialGraphLike> } };
  const graph = await SocialGraph.fromBinary(GRAPH_ROOT, new Uint8Array(readFileSync(join(pkgDir, 'data/socialGraph.bin'))));
  const profiles = JSON.parse(readFileSync(join(pkgDir, 'data/profileData.json'), 'utf8')) as string[][];
  const signer = await getSigner();
  const keyOf = new Map<string, KeyPair>();
  const stand = (real: string): KeyPair => {
    let k = keyOf.get(real);
    if (!k) {
      const sk = new Uint8Array(sha(`orbweaver-search-eval|${real}`));
      k = { sk, pubkey: signer.pubkey(sk) };
      keyOf.set(real, k);
    }
    return k;
  };
  const base = 1_700_000_000;
  const items: Array<{ t: Template; key: KeyPair }> = [];
  const people: Person[] = [];
  for (const [pk, display = '', name = ''] of profiles) {
    if (!pk || (!display && !name)) continue;
    const followers = graph.followerCount(pk);
    const p: Person = { key: stand(pk), real: true, display, name, about: '', followers };
    people.push(p);
    items.push({ key: p.key, t: { kind: 0, created_at: base, tags: [], content: JSON.stringify({ ...(name ? { name } : {}), ...(display ? { display_name: display } : {}) }) } });
  }
  const lists: Array<{ key: KeyPair; followers: number; tags: string[][] }> = [];
  for (const user of graph.userIterator()) {
    const follows = [...graph.getFollowedByUser(user)];
    if (follows.length === 0) continue;
    lists.push({ key: stand(user), followers: graph.followerCount(user), tags: follows.map((f) => ['p', stand(f).pubkey]) });
  }
  // look-alikes of the most followed: never the answer, and should never come first
  const top = people.filter((p) => p.display !== '').sort((a, b) => b.followers - a.followers).slice(0, LOOKALIKES);
  // --leak: the k-th follow into a ring comes from list holder (k * LEAK_STRIDE) mod holders
  const holders = hubs > 0
    ? [...lists].sort((a, b) => b.followers - a.followers).slice(0, hubs)
    : lists.filter((l) => l.tags.length >= LEAK_MIN_FOLLOWS);
  let leaked = 0;
  if (holders.length > 0) top.forEach((_, i) => { for (let k = 0; k < leak; k++) holders[(leaked++ * LEAK_STRIDE) % holders.length]!.tags.push(['p', stand(`ring|${i}|0`).pubkey]); });
  // the real lists before the look-alikes: the store first sees the real people
  for (const l of lists) items.push({ key: l.key, t: { kind: 3, created_at: base, tags: l.tags, content: '' } });
  top.forEach((p, i) => {
    const fake = stand(`impersonator|${i}`);
    people.push({ key: fake, real: false, display: p.display, name: p.name, about: '', followers: 0 });
    items.push({ key: fake, t: { kind: 0, created_at: base + 1, tags: [], content: JSON.stringify({ name: p.name || p.display, display_name: p.display }) } });
    const ring = Array.from({ length: RING }, (_, j) => stand(`ring|${i}|${j}`));
    ring.forEach((r, j) => items.push({ key: r, t: { kind: 3, created_at: base, tags: [['p', fake.pubkey], ['p', ring[(j + 1) % RING]!.pubkey]], content: '' } }));
    const fan = stand(`fan|${i}`);
    people.push({ key: fan, real: false, display: `fan ${i}`, name: '', about: `big fan of ${p.display}`, followers: 0 });
    items.push({ key: fan, t: { kind: 0, created_at: base + 1, tags: [], content: JSON.stringify({ display_name: `fan ${i}`, about: `big fan of ${p.display}` }) } });
    const newcomer = stand(`newcomer|${i}`);
    people.push({ key: newcomer, real: false, display: `${p.display}${i % 10}`, name: '', about: '', followers: 0 });
    items.push({ key: newcomer, t: { kind: 0, created_at: base + 2, tags: [], content: JSON.stringify({ display_name: `${p.display}${i % 10}` }) } });
  });
  const events = items.map(({ t, key }) => signer.sign(t, key.sk, key.pubkey));
  return { people, events, byPubkey: new Map(people.map((p) => [p.key.pubkey, p])) };
}

interface SocialGraphLike {
  followerCount(pk: string): number;
  userIterator(): Iterable<string>;
  getFollowedByUser(pk: string): Set<string>;
}

export interface Query {
  q: string;
  set: 'whole' | 'typeahead';
  half: 'dev' | 'held-out';
  /** the pubkey meant */
  want: string;
}

/** Code points, so a prefix never splits a character. */
const prefix = (s: string, n: number): string => [...s].slice(0, n).join('');

export function queries(s: EvalSet): Query[] {
  const sdocs = s.people.map((p) => searchDoc(0, JSON.stringify({ name: p.name, display_name: p.display, about: p.about })));
  const docs = sdocs.map((d) => (d ? encodeDoc(d) : null));
  // candidates by the first three letters of a whole name or a name word (a match at tier NAME or
  // better shares them with the query or its first word): a scan of everyone per query is minutes
  const by3 = new Map<string, number[]>();
  sdocs.forEach((d, i) => {
    if (!d || !s.people[i]!.real) return;
    for (const w of new Set([...d.fields, ...d.name].map((x) => prefix(x, 3)))) {
      const l = by3.get(w);
      if (l) l.push(i);
      else by3.set(w, [i]);
    }
  });
  const out: Query[] = [];
  const asked = new Set<string>();
  const consider = (raw: string, set: Query['set']) => {
    const q = foldField(raw);
    if ([...q].length < 3 || asked.has(q)) return;
    asked.add(q);
    const pq = parseSearch(q);
    let best: Person | undefined;
    let second = 0;
    const first = pq.terms[0];
    const cands = !first || first.run || [...first.text].length < 3
      ? s.people.keys()
      : new Set([...(by3.get(prefix(q, 3)) ?? []), ...(by3.get(prefix(first.text, 3)) ?? [])]);
    for (const i of cands) {
      const p = s.people[i]!;
      const d = docs[i];
      if (!d) continue;
      const t = tierOf(pq, d);
      if (t < 0 || t > TIER.NAME) continue;
      if (!best || p.followers > best.followers) {
        second = Math.max(second, best?.followers ?? 0);
        best = p;
      } else second = Math.max(second, p.followers);
    }
    if (!best || best.followers < MIN_FOLLOWERS || best.followers < MARGIN * second) return;
    out.push({ q, set, half: sha(q)[0]! & 1 ? 'held-out' : 'dev', want: best.key.pubkey });
  };
  for (const p of s.people) {
    if (!p.real || p.followers < MIN_FOLLOWERS) continue;
    for (const n of [p.display, p.name]) if (n) consider(n, 'whole');
    for (const n of [p.display, p.name]) {
      const f = foldField(n);
      for (const len of [3, 4]) if ([...f].length > len) consider(prefix(f, len), 'typeahead');
    }
  }
  return out;
}

/** One search REQ (kind 0, `limit`) at a time; returns the authors in answer order and the time to EOSE. */
export async function askSearch(ws: WebSocket, q: string, sid: string, limit: number): Promise<{ authors: string[]; ms: number }> {
  const authors: string[] = [];
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { ws.off('message', on); reject(new BenchError(`no EOSE for "${q}" within 10 s`)); }, 10_000);
    const on = (data: Buffer) => {
      const m = JSON.parse(data.toString()) as unknown[];
      if (m[0] === 'NOTICE' && String(m[1]).startsWith('rate-limited')) {
        clearTimeout(timer);
        ws.off('message', on);
        reject(new BenchError(`the relay rate-limits this client (${String(m[1])}): start it with the bench's limits (bench/relay-limits.env)`));
      }
      if (m[1] !== sid) return;
      if (m[0] === 'EVENT') authors.push((m[2] as NostrEvent).pubkey);
      else if (m[0] === 'EOSE' || m[0] === 'CLOSED') {
        clearTimeout(timer);
        ws.off('message', on);
        if (m[0] === 'EOSE') ws.send(JSON.stringify(['CLOSE', sid]));
        resolve({ authors, ms: performance.now() - t0 });
      }
    };
    ws.on('message', on);
    ws.send(JSON.stringify(['REQ', sid, { kinds: [0], search: q, limit }]));
  });
}

const pct = (a: number, b: number): string => (b === 0 ? '-' : `${((100 * a) / b).toFixed(1)}%`);
export const quantile = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
};

export const searchEval: Bench = {
  name: 'search-eval',
  summary: 'people search relevance on the real graph and names nostr-social-graph ships: top-1/top-5 for whole names and typeahead',
  options: [
    { name: 'url', type: 'string', help: 'relay to ask (it must hold the data set: --write it and import it)' },
    { name: 'write', type: 'string', help: 'write the data set as JSONL to this file and exit' },
    { name: 'show', type: 'int', default: 0, help: 'print this many missed queries per set' },
    { name: 'leak', type: 'int', default: 0, help: 'real list holders that follow into each look-alike ring (write and ask with the same value)' },
    { name: 'hubs', type: 'int', default: 0, help: 'with --leak: the follows into the rings come from the this many most followed list holders (0: ordinary ones)' },
  ],
  async run(o: Opts) {
    const s = await buildSet(num(o, 'leak'), num(o, 'hubs'));
    const qs = queries(s);
    log(`  data set: ${s.people.length} profiles (${s.people.filter((p) => !p.real).length} look-alikes), ${s.events.length} events; ${qs.length} queries`);
    const file = str(o, 'write');
    if (file) {
      const w = createWriteStream(file);
      for (const e of s.events) w.write(JSON.stringify(e) + '\n');
      await new Promise<void>((resolve, reject) => w.end((e?: Error | null) => (e ? reject(e) : resolve())));
      log(`  wrote ${s.events.length} events to ${file}`);
      return;
    }
    const url = str(o, 'url');
    if (!url) throw new UsageError('search-eval needs --url (a relay holding the data set) or --write FILE');
    const ws = await connect(url);
    const rows: Record<string, { n: number; top1: number; top5: number; lookalike: number; impersonator: number; above: number; ms: number[]; misses: string[] }> = {};
    const folded = (p: Person) => new Set([p.display, p.name].filter((x) => x !== '').map(foldField));
    /** issue 75: a name of `p`, folded, is one of `want`'s, and `p` has under a tenth of `want`'s followers */
    const impersonates = (p: Person, want: Person) => p !== want && p.followers < IMPERSONATOR_SHARE * want.followers && [...folded(p)].some((n) => folded(want).has(n));
    let i = 0;
    for (const q of qs) {
      const { authors, ms } = await askSearch(ws, q.q, `e${i++}`, LIMIT).catch((e: Error) => { throw new BenchError(`${e.message} (query ${i} of ${qs.length}, after "${qs[i - 2]?.q}")`); });
      for (const k of [`${q.set} ${q.half}`, q.set]) {
        const r = (rows[k] ??= { n: 0, top1: 0, top5: 0, lookalike: 0, impersonator: 0, above: 0, ms: [], misses: [] });
        r.n++;
        r.ms.push(ms);
        const at = authors.indexOf(q.want);
        if (at === 0) r.top1++;
        else if (r.misses.length < num(o, 'show') && k === q.set) {
          const first = authors[0] ? s.byPubkey.get(authors[0]) : undefined;
          r.misses.push(`"${q.q}" wanted ${s.byPubkey.get(q.want)!.display || s.byPubkey.get(q.want)!.name} (${s.byPubkey.get(q.want)!.followers} followers) at ${at < 0 ? '-' : at + 1}; first: ${first ? `${first.display || first.name}${first.real ? ` (${first.followers})` : ' (look-alike)'}` : 'nothing'}`);
        }
        if (at >= 0 && at < 5) r.top5++;
        if (authors[0] && s.byPubkey.get(authors[0])?.real === false) r.lookalike++;
        const first = authors[0] ? s.byPubkey.get(authors[0]) : undefined;
        if (first && impersonates(first, s.byPubkey.get(q.want)!)) r.impersonator++;
        // a look-alike above a real profile in the answer (the impersonation mark's work)
        const real = authors.map((a) => s.byPubkey.get(a)?.real !== false);
        if (real.some((x, j) => !x && real.slice(j + 1).some(Boolean))) r.above++;
      }
    }
    ws.close();
    const keys = ['whole dev', 'whole held-out', 'whole', 'typeahead dev', 'typeahead held-out', 'typeahead'];
    table('people search: is the person meant first?', keys.filter((k) => rows[k]).map((k) => {
      const r = rows[k]!;
      return { queries: k, n: r.n, 'top-1': pct(r.top1, r.n), 'top-5': pct(r.top5, r.n), 'look-alike first': pct(r.lookalike, r.n), 'impersonator first': `${r.impersonator}`, 'look-alike above real': pct(r.above, r.n), 'p50 ms': quantile(r.ms, 0.5).toFixed(2), 'p99 ms': quantile(r.ms, 0.99).toFixed(2) };
    }));
    for (const k of ['whole', 'typeahead']) for (const m of rows[k]?.misses ?? []) log(`  miss (${k}): ${m}`);
    emit({ bench: 'search-eval', url, leak: num(o, 'leak'), hubs: num(o, 'hubs'), machine: machine(), results: Object.fromEntries(keys.filter((k) => rows[k]).map((k) => [k, { n: rows[k]!.n, top1: rows[k]!.top1 / rows[k]!.n, top5: rows[k]!.top5 / rows[k]!.n, lookalikeFirst: rows[k]!.lookalike / rows[k]!.n, impersonatorFirst: rows[k]!.impersonator, lookalikeAboveReal: rows[k]!.above / rows[k]!.n, p50ms: quantile(rows[k]!.ms, 0.5), p99ms: quantile(rows[k]!.ms, 0.99) }])) });
  },
};
