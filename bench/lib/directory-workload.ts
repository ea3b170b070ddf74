// The directory workload's data set: what a directory relay holds for the outbox model. A authors
// (6,000 by default), each with one kind 0 (profile, ~300 bytes of content), one kind 10002 (3-6
// `r` tags) and one kind 3 whose follows (1..200, mean ~100) are drawn by a Zipf law over a seeded
// popularity order, so the most followed pubkeys have a few thousand followers. 18,000 events,
// ~51 MB of JSON with the defaults. Seeded, signed before any clock starts and cached like the
// query data set (events.ts), with the follower counts the benchmark needs for its expectations.
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { cacheDir, makeKeys, prng, readCachedSet, signAll, writeCachedSet, type NostrEvent, type Template } from './events.js';
import { log } from './report.js';

export interface DirectoryParams {
  authors: number;
  seed: string;
  /** Zipf exponent of the follow targets' popularity */
  zipf: number;
  /** most follows in one list (lists have 1..maxFollows, uniformly) */
  maxFollows: number;
}

export interface DirectorySet {
  params: DirectoryParams;
  generatedAt: number;
  pubkeys: string[];
  events: NostrEvent[];
  /** followers of each pubkey (index as in pubkeys) */
  followers: number[];
  /** pubkeys by follower count, most followed first */
  byFollowers: string[];
  bytes: number;
  cacheFile: string;
}

export const DIRECTORY_DEFAULTS: DirectoryParams = { authors: 6000, seed: '1', zipf: 1.0, maxFollows: 200 };

const CACHE_VERSION = 1;
const RELAYS = 240;
const SPAN = 30 * 86_400;
const NAMES = 'alice bob carol dave erin frank grace heidi ivan judy mallory niaj olivia peggy rupert sybil trent victor walter'.split(' ');

/** A sampler of ranks 0..n-1 with P(r) proportional to 1/(r+1)^s (binary search over the CDF). */
function zipfSampler(n: number, s: number, rnd: () => number): () => number {
  const cdf = new Float64Array(n);
  let acc = 0;
  for (let r = 0; r < n; r++) cdf[r] = acc += 1 / (r + 1) ** s;
  return () => {
    const x = rnd() * acc;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cdf[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

function profileContent(i: number, rnd: () => number): string {
  const name = `${NAMES[i % NAMES.length]}${i}`;
  const about = `directory bench profile ${i}: ${'nostr relays outbox follows zaps notes '.repeat(4).slice(0, 60 + Math.floor(rnd() * 40))}`;
  return JSON.stringify({
    name,
    display_name: name.toUpperCase(),
    about,
    picture: `https://images.example.com/avatars/${i.toString(16).padStart(8, '0')}.png`,
    nip05: `${name}@example.com`,
    lud16: `${name}@wallet.example.com`,
  });
}

function relayTags(rnd: () => number): string[][] {
  const n = 3 + Math.floor(rnd() * 4);
  const used = new Set<number>();
  const tags: string[][] = [];
  while (tags.length < n) {
    const r = Math.floor(rnd() ** 2 * RELAYS); // a few relays are in most lists
    if (used.has(r)) continue;
    used.add(r);
    const url = `wss://relay${r}.example.com`;
    const m = rnd();
    tags.push(m < 0.6 ? ['r', url] : m < 0.8 ? ['r', url, 'read'] : ['r', url, 'write']);
  }
  return tags;
}

/** Loads the directory set from the cache, or generates, signs and caches it. */
export async function loadDirectory(p: DirectoryParams, regen = false): Promise<DirectorySet> {
  const key = `dir-v${CACHE_VERSION}-a${p.authors}-z${p.zipf}-f${p.maxFollows}-seed-${createHash('sha256').update(p.seed).digest('hex').slice(0, 12)}`;
  const file = join(cacheDir(), `${key}.jsonl`);
  const cached = regen ? null : readCachedSet(file, CACHE_VERSION, 3 * p.authors, 'directory set');
  if (cached) return finish(p, cached.generatedAt, cached.pubkeys, cached.events, file);
  const generatedAt = Math.floor(Date.now() / 1000);
  const keys = await makeKeys(p.seed, 'directory', p.authors);
  const pubkeys = keys.map((k) => k.pubkey);
  const rnd = prng(Number.parseInt(createHash('sha256').update(`dir|${p.seed}`).digest('hex').slice(0, 8), 16));
  // popularity order: a seeded permutation of the authors, rank 0 the most followed
  const order = pubkeys.map((_, i) => i);
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  const zipf = zipfSampler(p.authors, p.zipf, rnd);
  const items: { t: Template; key: (typeof keys)[number] }[] = [];
  for (let i = 0; i < p.authors; i++) {
    const key = keys[i]!;
    const at = (k: number): number => generatedAt - 1 - Math.floor(rnd() * SPAN) - k;
    items.push({ key, t: { kind: 0, created_at: at(0), tags: [], content: profileContent(i, rnd) } });
    items.push({ key, t: { kind: 10002, created_at: at(1), tags: relayTags(rnd), content: '' } });
    const want = Math.min(p.authors - 1, 1 + Math.floor(rnd() * p.maxFollows));
    const follows = new Set<number>();
    while (follows.size < want) {
      const a = order[zipf()]!;
      if (a !== i) follows.add(a);
    }
    items.push({ key, t: { kind: 3, created_at: at(2), tags: [...follows].map((a) => ['p', pubkeys[a]!]), content: '' } });
  }
  log(`  generating the directory set: ${items.length} events by ${p.authors} authors (seed ${p.seed}, zipf ${p.zipf})`);
  const events = await signAll(items, 'directory events');
  writeCachedSet(file, { version: CACHE_VERSION, generatedAt, pubkeys, params: p }, events);
  return finish(p, generatedAt, pubkeys, events, file);
}

function finish(params: DirectoryParams, generatedAt: number, pubkeys: string[], events: NostrEvent[], cacheFile: string): DirectorySet {
  const index = new Map(pubkeys.map((pk, i) => [pk, i]));
  const followers = new Array<number>(pubkeys.length).fill(0);
  let bytes = 0;
  for (const e of events) {
    bytes += JSON.stringify(e).length;
    if (e.kind !== 3) continue;
    for (const t of e.tags) if (t[0] === 'p') followers[index.get(t[1]!)!]!++;
  }
  return { params, generatedAt, pubkeys, events, followers, byFollowers: byFollowers(pubkeys, followers), bytes, cacheFile };
}

/**
 * The set's shape read from a JSON-lines file of directory events (`netgen --out`, an export): the
 * authors, in order of first appearance, and their followers counted over each author's newest
 * follow list. Streamed; only pubkeys and counts are kept, so a file of millions of events fits.
 * `events` stays empty: the relays are loaded beforehand (import, netgen --url) and run with --no-load.
 */
export async function directoryFromFile(file: string): Promise<DirectorySet> {
  const { createReadStream, statSync } = await import('node:fs');
  const { createInterface } = await import('node:readline');
  const authors = new Map<string, number>();
  const pubkeys: string[] = [];
  /** author -> created_at and follows of the newest follow list seen */
  const lists = new Map<string, { at: number; follows: string[] }>();
  const rl = createInterface({ input: createReadStream(file, { encoding: 'utf8', highWaterMark: 1 << 20 }), crlfDelay: Infinity });
  for await (const line of rl) {
    if (!line) continue;
    const e = JSON.parse(line) as NostrEvent;
    if (!authors.has(e.pubkey)) {
      authors.set(e.pubkey, pubkeys.length);
      pubkeys.push(e.pubkey);
    }
    if (e.kind !== 3) continue;
    const cur = lists.get(e.pubkey);
    if (!cur || e.created_at > cur.at) lists.set(e.pubkey, { at: e.created_at, follows: e.tags.filter((t) => t[0] === 'p').map((t) => t[1]!) });
  }
  const followers = new Array<number>(pubkeys.length).fill(0);
  for (const { follows } of lists.values()) for (const pk of new Set(follows)) { const i = authors.get(pk); if (i !== undefined) followers[i]!++; }
  return { params: { ...DIRECTORY_DEFAULTS, authors: pubkeys.length, seed: file }, generatedAt: 0, pubkeys, events: [], followers, byFollowers: byFollowers(pubkeys, followers), bytes: statSync(file).size, cacheFile: file };
}

/** The pubkeys, most followed first. */
const byFollowers = (pubkeys: string[], followers: number[]): string[] =>
  pubkeys.map((pk, i) => ({ pk, n: followers[i]! })).sort((a, b) => b.n - a.n).map((x) => x.pk);

/** Followers of one pubkey in the set. */
export function followersOf(ds: DirectorySet, pubkey: string): number {
  return ds.followers[ds.pubkeys.indexOf(pubkey)] ?? 0;
}
