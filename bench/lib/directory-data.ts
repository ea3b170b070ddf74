// A directory data set for crawl benchmarks: what the spider fetches on the real network, per author
// a profile (kind 0), a relay list (kind 10002, 3-6 r tags) and a follow list (kind 3) whose follows
// are drawn from a Zipf distribution over the authors (popular authors are followed by many; list
// lengths are log-normal with mean `followMean`, at most 800). Seeded and deterministic; signed before any clock
// starts (bcrypto when built) and cached as JSON lines under $TMPDIR/orbweaver-bench/, one file per
// parameter set. The events are streamed from the cache, never all held in memory (540k events
// are ~1.5 GB of JSON).
import { createHash } from 'node:crypto';
import { closeSync, createReadStream, createWriteStream, existsSync, openSync, readSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { cacheDir, deriveKey, getSigner, prng, type NostrEvent } from './events.js';
import { log } from './report.js';

export interface DirectoryParams {
  /** authors; the set holds 3 events per author */
  authors: number;
  seed: string;
  /** mean follows per kind 3 list */
  followMean: number;
  /** distinct relay URLs the kind 10002 lists draw from */
  relayPool: number;
  /** seconds the created_at values spread over, ending just before generation */
  spanSec: number;
}

export const DIRECTORY_DEFAULTS: DirectoryParams = { authors: 18_000, seed: '1', followMean: 100, relayPool: 400, spanSec: 2 * 365 * 86400 };

export interface DirectoryData {
  params: DirectoryParams;
  /** the cache file: a header line, then one event per line */
  file: string;
  events: number;
  bytes: number;
  generatedAt: number;
}

const VERSION = 2;
/** Longest follow list: 800 p tags keep a kind 3 under the relay's default maxEventBytes (64 KiB). */
const MAX_FOLLOWS = 800;

const keyOf = (p: DirectoryParams) =>
  `dir-v${VERSION}-a${p.authors}-f${p.followMean}-r${p.relayPool}-span${p.spanSec}-seed-${createHash('sha256').update(p.seed).digest('hex').slice(0, 12)}`;

/** Index drawn from a Zipf(s) distribution over 0..n-1 (rank 0 most likely), by inverse CDF. */
export function zipf(n: number, s: number, rnd: () => number): () => number {
  const cdf = new Float64Array(n);
  let sum = 0;
  for (let i = 0; i < n; i++) { sum += 1 / Math.pow(i + 1, s); cdf[i] = sum; }
  return () => {
    const x = rnd() * sum;
    let lo = 0, hi = n - 1;
    while (lo < hi) { const mid = (lo + hi) >> 1; if (cdf[mid]! < x) lo = mid + 1; else hi = mid; }
    return lo;
  };
}

/** Log-normal with the given mean (sigma 1): many short lists, a few very long ones. */
export function logNormal(mean: number, rnd: () => number): () => number {
  const sigma = 1;
  const mu = Math.log(mean) - (sigma * sigma) / 2;
  return () => {
    const u = Math.max(rnd(), 1e-12), v = rnd();
    return Math.exp(mu + sigma * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v));
  };
}

const NAMES = 'alice bob carol dave erin frank grace heidi ivan judy mallory niaj olivia peggy rupert sybil trent victor walter'.split(' ');
const WORDS = 'nostr bitcoin relay zaps freedom coffee music art photography code running books travel privacy open source'.split(' ');

/** Loads the cached data set's description, or generates, signs and caches it. */
export async function directoryData(p: DirectoryParams = DIRECTORY_DEFAULTS, regen = false): Promise<DirectoryData> {
  const file = join(cacheDir(), `${keyOf(p)}.jsonl`);
  if (!regen && existsSync(file)) {
    // the header line only: the file may be larger than a string can hold (540,000 events: 1.5 GB)
    const fd = openSync(file, 'r');
    const buf = Buffer.alloc(4096);
    const n = readSync(fd, buf, 0, buf.length, 0);
    closeSync(fd);
    const head = JSON.parse(buf.subarray(0, n).toString('utf8').split('\n')[0]!) as { version: number; generatedAt: number; events: number; bytes: number };
    if (head.version === VERSION) return { params: p, file, events: head.events, bytes: head.bytes, generatedAt: head.generatedAt };
  }
  const started = performance.now();
  const signer = await getSigner();
  log(`  generating the directory data set: ${p.authors} authors x 3 kinds (seed ${p.seed}), signing with ${signer.name}`);
  const rnd = prng(Number.parseInt(createHash('sha256').update(`dir|${p.seed}`).digest('hex').slice(0, 8), 16));
  const sks: Uint8Array[] = [];
  const pubkeys: string[] = [];
  for (let i = 0; i < p.authors; i++) {
    const sk = deriveKey(p.seed, 'directory', i);
    sks.push(sk);
    pubkeys.push(signer.pubkey(sk));
  }
  // Popularity is unrelated to the author's index: rank r is the author at position perm[r].
  const perm = Array.from({ length: p.authors }, (_, i) => i);
  for (let i = perm.length - 1; i > 0; i--) { const j = Math.floor(rnd() * (i + 1)); [perm[i], perm[j]] = [perm[j]!, perm[i]!]; }
  const followed = zipf(p.authors, 1, rnd);
  const relayRank = zipf(p.relayPool, 1.1, rnd);
  const follows = logNormal(p.followMean, rnd);
  const generatedAt = Math.floor(Date.now() / 1000);
  const at = () => generatedAt - 60 - Math.floor(rnd() * p.spanSec);

  const tmp = `${file}.${process.pid}.tmp`;
  const out = createWriteStream(tmp);
  const lines: string[] = [];
  let events = 0, bytes = 0;
  const push = (ev: NostrEvent) => { const s = JSON.stringify(ev); lines.push(s); events++; bytes += s.length; };
  const flush = async () => {
    if (!out.write(lines.join('\n') + '\n')) await new Promise<void>((r) => out.once('drain', () => r()));
    lines.length = 0;
  };
  // the header is rewritten at the end (fixed width, so it can be patched in place)
  const header = (n: number, b: number) => JSON.stringify({ version: VERSION, generatedAt, events: n, bytes: b, params: p }).padEnd(600);
  out.write(header(0, 0) + '\n');
  let lastLog = performance.now();
  for (let i = 0; i < p.authors; i++) {
    const sk = sks[i]!, pk = pubkeys[i]!;
    const name = `${NAMES[i % NAMES.length]}${i}`;
    const about = Array.from({ length: 5 + Math.floor(rnd() * 20) }, () => WORDS[Math.floor(rnd() * WORDS.length)]).join(' ');
    push(signer.sign({ kind: 0, created_at: at(), tags: [], content: JSON.stringify({ name, about, picture: `https://img.example.com/${pk.slice(0, 16)}.jpg`, nip05: `${name}@example.com` }) }, sk, pk));
    const urls = new Set<string>();
    const nr = 3 + Math.floor(rnd() * 4);
    while (urls.size < nr) urls.add(`wss://relay-${relayRank()}.example.net`);
    push(signer.sign({ kind: 10002, created_at: at(), tags: [...urls].map((u, k) => (k === 0 ? ['r', u] : k === 1 ? ['r', u, 'read'] : ['r', u, 'write'])), content: '' }, sk, pk));
    const n = Math.min(p.authors - 1, MAX_FOLLOWS, Math.max(1, Math.round(follows())));
    const set = new Set<number>();
    for (let guard = 0; set.size < n && guard < n * 20; guard++) { const a = perm[followed()]!; if (a !== i) set.add(a); }
    push(signer.sign({ kind: 3, created_at: at(), tags: [...set].map((a) => ['p', pubkeys[a]!]), content: '' }, sk, pk));
    if (lines.length >= 3000) await flush();
    if (performance.now() - lastLog > 3000) { lastLog = performance.now(); log(`  ... ${i}/${p.authors} authors`); }
  }
  await flush();
  await new Promise<void>((r, j) => out.end((e?: Error | null) => (e ? j(e) : r())));
  const fd = openSync(tmp, 'r+');
  writeSync(fd, header(events, bytes), 0, 'utf8');
  closeSync(fd);
  renameSync(tmp, file);
  log(`  ${events} events (${(bytes / 1e6).toFixed(0)} MB) in ${((performance.now() - started) / 1000).toFixed(1)} s, cached in ${file}`);
  return { params: p, file, events, bytes, generatedAt };
}

/** Streams the events of a cached data set (one JSON text per line, with the parsed event). */
export async function* eachEvent(d: DirectoryData): AsyncGenerator<{ json: string; ev: NostrEvent }> {
  const rl = createInterface({ input: createReadStream(d.file, { encoding: 'utf8', highWaterMark: 1 << 20 }), crlfDelay: Infinity });
  let first = true;
  for await (const line of rl) {
    if (first) { first = false; continue; }
    if (line) yield { json: line, ev: JSON.parse(line) as NostrEvent };
  }
}

/**
 * Whether relay `relay` of a spread holds the event: a deterministic draw per (event, relay) with
 * probability `share`, so every run and every implementation gets the same shares.
 */
export function holds(id: string, relay: number, share: number): boolean {
  const h = createHash('sha256').update(`${id}|${relay}`).digest();
  return h.readUInt32BE(0) / 0x1_0000_0000 < share;
}
