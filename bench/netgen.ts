// netgen: a network-shaped directory data set as JSON lines, streamed to a file (never held in
// memory), and optionally published to any relay over WebSocket.
//
// What the directory write path sees on the real network: per author a profile (kind 0), a relay
// list (kind 10002, 3-6 r tags) and a follow list (kind 3) of Zipf-drawn follows (log-normal
// lengths, mean --follow-mean, at most 800); then --replacements newer follow lists, each the
// author's previous list with one or two follows added or removed (how follow lists really
// change), and every tenth replacement a new profile. The first pass is ordered by author, the
// replacements come after it with created_at newer than the version they replace.
//
// Then --republish re-published follow lists, the network's habit: an author re-publishes its
// follow list several times, most of them unchanged. Authors i % 4 == 0, in a shuffled order, each
// publish a sequence of 5 lists: unchanged, unchanged, unchanged, one follow swapped (one removed,
// one Zipf-drawn new one appended), unchanged. --republish-out writes them to their own file (load
// the base, then time these). Their randomness comes from a prng of their own, so the base set is
// the same with or without them. Each author's re-publications are dated at random gaps after its
// last list, spread over the rest of the year up to a minute ago: seconds apart like a person's
// clients re-sending, not one second shared by a whole round (which piled 30,000 lists onto one
// created_at, a shape no network has, and one that NIP-01's tie rule makes every relay read whole).
//
//   node dist/bench/netgen.js --authors 6000 --replacements 0 --out /tmp/dir.jsonl
//   node dist/bench/netgen.js --authors 200000 --out /tmp/dir600k.jsonl --republish 150000 --republish-out /tmp/repub150k.jsonl
//   node dist/bench/netgen.js --file /tmp/dir.jsonl --url ws://127.0.0.1:7600   # publish, events/s
//   orbweaver import /tmp/dir.jsonl                                              # the bulk path
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { formatHelp, num, parseArgs, str, UsageError, type OptSpec, type Opts } from './lib/args.js';
import { publishAll } from './lib/client.js';
import { deriveKey, getSigner, prng } from './lib/events.js';
import { logNormal, zipf } from './lib/directory-data.js';
import { log, emit, machine } from './lib/report.js';

const MAX_FOLLOWS = 800;
const WORDS = 'nostr bitcoin relay zaps freedom coffee music art photography code running books travel privacy open source'.split(' ');

export interface NetgenParams {
  authors: number;
  replacements: number;
  followMean: number;
  seed: string;
  /** re-published follow lists after the base set (sequences of REPUBLISH_SEQUENCE per author) */
  republish?: number;
  /** file for the re-published lists (default: after the base set in `out`) */
  republishOut?: string;
  /** write only the re-published lists: the base is drawn as usual (the same base), but neither signed nor written */
  republishOnly?: boolean;
  /** this many authors (evenly spread) follow LARGE_FOLLOWS people: the network's largest lists (~360 KB) */
  largeLists?: number;
}

/** Follows of a --large-lists author: a list of ~360 KB, as the people who follow the most have. */
const LARGE_FOLLOWS = 5000;

/** One author's re-publications: unchanged except the one at index REPUBLISH_SWAP (one follow swapped). */
const REPUBLISH_SEQUENCE = 5;
const REPUBLISH_SWAP = 3;
/** Most re-publications per author (each at least a second after the previous one, all before now). */
const REPUBLISH_SECONDS = 60;

/** Authors that re-publish (i % 4 == 0). */
const republishers = (authors: number): number => Math.ceil(authors / 4);

/** The most re-published lists a set of `authors` takes (more would be dated in the future). */
export const maxRepublish = (authors: number): number => republishers(authors) * REPUBLISH_SECONDS;

/** JSON lines to a file, in batches, waiting for drain (never the whole set in memory). */
function lineWriter(path: string) {
  const ws = createWriteStream(path);
  let buf: string[] = [];
  let n = 0;
  return {
    get count() { return n; },
    async push(s: string): Promise<void> {
      buf.push(s);
      n++;
      if (buf.length >= 2000) {
        if (!ws.write(buf.join('\n') + '\n')) await new Promise<void>((r) => ws.once('drain', () => r()));
        buf = [];
      }
    },
    async close(): Promise<void> {
      ws.write(buf.length ? buf.join('\n') + '\n' : '');
      buf = [];
      await new Promise<void>((res, rej) => ws.end((e?: Error | null) => (e ? rej(e) : res())));
    },
  };
}

/** A lineWriter that keeps nothing (--republish-only's base). */
function nullWriter(): ReturnType<typeof lineWriter> {
  let n = 0;
  return { get count() { return n; }, async push() { n++; }, async close() {} };
}

/** Writes the data set to `out` (and the re-publications to `p.republishOut` if given); returns the number of events. */
export async function generate(p: NetgenParams, out: string): Promise<number> {
  const signer = await getSigner();
  const rnd = prng(Number.parseInt(createHash('sha256').update(`netgen|${p.seed}`).digest('hex').slice(0, 8), 16));
  const sks: Uint8Array[] = [];
  const pks: string[] = [];
  for (let i = 0; i < p.authors; i++) { sks.push(deriveKey(p.seed, 'netgen', i)); pks.push(signer.pubkey(sks[i]!)); }
  const perm = Array.from({ length: p.authors }, (_, i) => i);
  for (let i = perm.length - 1; i > 0; i--) { const j = Math.floor(rnd() * (i + 1)); [perm[i], perm[j]] = [perm[j]!, perm[i]!]; }
  const followed = zipf(p.authors, 1, rnd);
  const relayRank = zipf(400, 1.1, rnd);
  const lengths = logNormal(p.followMean, rnd);
  const now = Math.floor(Date.now() / 1000);
  // the first pass lies in the year before the last p.replacements seconds; replacements follow it
  const base = now - 60 - p.replacements - 365 * 86400;
  const follows: Uint32Array[] = new Array(p.authors);
  const lastAt = new Uint32Array(p.authors);
  // --republish-only: the base's randomness is drawn as always, so the re-publications are the
  // same as in a full run; only its signing (most of the time) and writing are skipped
  let signing = !p.republishOnly;
  const signed = (ev: Parameters<typeof signer.sign>[0], i: number): string => (signing ? JSON.stringify(signer.sign(ev, sks[i]!, pks[i]!)) : '');
  const w = p.republishOnly ? nullWriter() : lineWriter(out);
  const push = (s: string) => w.push(s);
  const profile = (i: number, at: number) => {
    const name = `user${i}`;
    const about = Array.from({ length: 5 + Math.floor(rnd() * 20) }, () => WORDS[Math.floor(rnd() * WORDS.length)]).join(' ');
    return signed({ kind: 0, created_at: at, tags: [], content: JSON.stringify({ name, about, picture: `https://img.example.com/${pks[i]!.slice(0, 16)}.jpg`, nip05: `${name}@example.com` }) }, i);
  };
  const followList = (i: number, at: number) =>
    signed({ kind: 3, created_at: at, tags: Array.from(follows[i]!, (a) => ['p', pks[a]!]), content: '' }, i);
  for (let i = 0; i < p.authors; i++) {
    const at = base + Math.floor(rnd() * 365 * 86400);
    await push(profile(i, at));
    const urls = new Set<string>();
    const nr = 3 + Math.floor(rnd() * 4);
    while (urls.size < nr) urls.add(`wss://relay-${relayRank()}.example.net`);
    await push(signed({ kind: 10002, created_at: at, tags: [...urls].map((u, k) => (k === 0 ? ['r', u] : ['r', u, k === 1 ? 'read' : 'write'])), content: '' }, i));
    const drawn = Math.min(p.authors - 1, MAX_FOLLOWS, Math.max(1, Math.round(lengths())));
    const large = (p.largeLists ?? 0) > 0 && i % Math.max(1, Math.floor(p.authors / p.largeLists!)) === 0;
    const want = large ? Math.min(p.authors - 1, LARGE_FOLLOWS) : drawn;
    const set = new Set<number>();
    for (let g = 0; set.size < want && g < want * 20; g++) { const a = perm[followed()]!; if (a !== i) set.add(a); }
    follows[i] = Uint32Array.from(set);
    lastAt[i] = at;
    await push(followList(i, at));
    if (i % 20000 === 19999) log(`  ${i + 1}/${p.authors} authors`);
  }
  for (let r = 0; r < p.replacements; r++) {
    const i = Math.floor(rnd() * p.authors);
    const at = Math.max(lastAt[i]! + 1, base + 365 * 86400 + r);
    lastAt[i] = at;
    const cur = Array.from(follows[i]!);
    const changes = 1 + Math.floor(rnd() * 2);
    for (let c = 0; c < changes; c++) {
      if (cur.length > 1 && (rnd() < 0.4 || (cur.length >= MAX_FOLLOWS && cur.length < LARGE_FOLLOWS))) cur.splice(Math.floor(rnd() * cur.length), 1);
      else { const a = perm[followed()]!; if (a !== i && !cur.includes(a)) cur.push(a); }
    }
    follows[i] = Uint32Array.from(cur);
    await push(followList(i, at));
    if (r % 10 === 9) await push(profile(i, at));
    if (r % 50000 === 49999) log(`  ${r + 1}/${p.replacements} replacements`);
  }
  // The re-publications: their own prng (the base above is the same with or without them).
  const republish = p.republish ?? 0;
  if (republish <= 0) { await w.close(); return w.count; }
  if (republish > maxRepublish(p.authors)) throw new Error(`republish ${republish} > ${maxRepublish(p.authors)}: would be dated in the future`);
  const rw = p.republishOut ? lineWriter(p.republishOut) : w;
  if (p.republishOut) await w.close();
  signing = true;
  const rr = prng(Number.parseInt(createHash('sha256').update(`netgen-republish|${p.seed}`).digest('hex').slice(0, 8), 16));
  const followed2 = zipf(p.authors, 1, rr);
  const order = Array.from({ length: republishers(p.authors) }, (_, k) => 4 * k);
  for (let i = order.length - 1; i > 0; i--) { const j = Math.floor(rr() * (i + 1)); [order[i], order[j]] = [order[j]!, order[i]!]; }
  // Sequence s is author order[s % A], cycle floor(s / A). A cycle is written round by round
  // (every sequence's first list, then every second list, ...), so an author's lists lie a cycle's
  // sequences apart in the file and arrive in order over WebSocket. Each list is dated a random gap
  // after the author's previous one, the gap at most a sixtieth of what is left before now - 61 (the
  // end of the base), so that its at most 60 lists stay before now and strictly growing.
  const sequences = Math.ceil(republish / REPUBLISH_SEQUENCE);
  const A = order.length;
  const end = now - REPUBLISH_SECONDS - 1;
  const gap = new Uint32Array(p.authors);
  let swaps = 0;
  for (let c0 = 0; c0 < sequences; c0 += A) {
    const c1 = Math.min(sequences, c0 + A);
    for (let k = 0; k < REPUBLISH_SEQUENCE; k++) {
      for (let s = c0; s < c1; s++) {
        if (s * REPUBLISH_SEQUENCE + k >= republish) continue; // the last sequence may be short
        const i = order[s - c0]!;
        if (gap[i] === 0) gap[i] = Math.max(1, Math.floor((end - lastAt[i]!) / REPUBLISH_SECONDS));
        const at = lastAt[i]! + 1 + Math.floor(rr() * gap[i]!);
        if (k === REPUBLISH_SWAP && swapOne(i, follows, perm, followed2, rr, p.authors)) swaps++;
        lastAt[i] = at;
        await rw.push(followList(i, at));
      }
    }
  }
  await rw.close();
  if (swaps !== Math.floor(republish / REPUBLISH_SEQUENCE) + (republish % REPUBLISH_SEQUENCE > REPUBLISH_SWAP ? 1 : 0)) log(`  note: ${swaps} follows swapped (some lists could not take a new follow)`);
  return w.count + (p.republishOut ? rw.count : 0);
}

/**
 * Swaps one follow of author i: a Zipf-drawn author it does not follow (not itself) is appended and
 * one of its current follows, at a random place, removed. False (list unchanged) when there is no
 * follow to remove or no one left to follow.
 */
function swapOne(i: number, follows: Uint32Array[], perm: number[], followed: () => number, rnd: () => number, authors: number): boolean {
  const cur = Array.from(follows[i]!);
  if (cur.length === 0 || cur.length >= authors - 1) return false;
  const have = new Set(cur);
  let add = -1;
  for (let g = 0; g < 1000 && add < 0; g++) { const a = perm[followed()]!; if (a !== i && !have.has(a)) add = a; }
  for (let a = Math.floor(rnd() * authors), g = 0; add < 0 && g < authors; g++, a = (a + 1) % authors) if (a !== i && !have.has(a)) add = a;
  if (add < 0) return false;
  cur.splice(Math.floor(rnd() * cur.length), 1);
  cur.push(add);
  follows[i] = Uint32Array.from(cur);
  return true;
}

async function publishFile(file: string, url: string, connections: number, inflight: number): Promise<void> {
  const frames: Buffer[] = [];
  const ids: string[] = [];
  const rl = createInterface({ input: createReadStream(file, { encoding: 'utf8', highWaterMark: 1 << 20 }), crlfDelay: Infinity });
  for await (const line of rl) {
    if (!line) continue;
    frames.push(Buffer.from(`["EVENT",${line}]`));
    ids.push(line.slice(7, 71)); // {"id":"<64 hex>"
  }
  log(`publishing ${frames.length} events from ${file} to ${url}, ${connections} connections x ${inflight} in flight`);
  const r = await publishAll(url, frames, ids, { connections, inflight, timeoutMs: 3_600_000, progress: true });
  const secs = r.elapsedMs / 1000;
  emit({ bench: 'netgen-publish', url, file, events: frames.length, stored: r.stored, duplicates: r.duplicates, rejected: r.rejected, missing: r.missing, elapsed_s: Math.round(secs * 10) / 10, events_per_s: Math.round((r.stored + r.rejectedTotal) / secs), stored_per_s: Math.round(r.stored / secs), machine: machine() });
}

const OPTIONS: OptSpec[] = [
  { name: 'out', type: 'string', help: 'write a generated set to this JSON-lines file' },
  { name: 'authors', type: 'int', default: 6000, help: 'authors (3 events each: kinds 0, 10002, 3)' },
  { name: 'replacements', type: 'int', default: 0, help: 'newer follow lists after the first pass (every tenth with a new profile)' },
  { name: 'follow-mean', type: 'int', default: 100, help: 'mean follows per kind 3 (log-normal, Zipf-drawn, at most 800)' },
  { name: 'republish', type: 'int', default: 0, help: 're-published follow lists after the base set: authors i%4==0 (shuffled) each publish 5 (unchanged x3, one follow swapped, unchanged); at most 15 x authors' },
  { name: 'republish-out', type: 'string', help: 'write the --republish lists to this file (the base set stays alone in --out)' },
  { name: 'republish-only', type: 'bool', default: false, help: 'with --republish-out: write only the re-publications (the base is drawn the same, not signed or written; --out is not needed)' },
  { name: 'large-lists', type: 'int', default: 0, help: 'this many authors, evenly spread, follow 5,000 people (~360 KB lists: the network\'s largest); the others as drawn' },
  { name: 'seed', type: 'string', default: '1', help: 'data set seed' },
  { name: 'file', type: 'string', help: 'publish this JSON-lines file (default: the --out file)' },
  { name: 'url', type: 'string', help: 'relay WebSocket URL to publish to, e.g. ws://127.0.0.1:7447' },
  { name: 'connections', type: 'int', default: 16, help: 'connections used to publish' },
  { name: 'inflight', type: 'int', default: 200, help: 'events in flight per connection' },
];

const USAGE = `usage: netgen --out FILE [--authors N ...] | --file FILE --url ws://HOST:PORT [--connections N ...]
  --out writes a network-shaped directory set as JSON lines; --file with --url publishes a set to
  a relay and reports events/s (--out with --url does both: the base set, then any --republish-out file)
${formatHelp(OPTIONS, '  ')}`;

/** The least value of each whole-number option (the parser checks they are integers). */
const MINIMUM: Record<string, number> = { authors: 2, replacements: 0, 'follow-mean': 1, republish: 0, connections: 1, inflight: 1 };

/** What is wrong with the options, naming the option and the fix, or null. */
function problemWith(o: Opts): string | null {
  const out = str(o, 'out');
  const file = str(o, 'file') || out;
  const url = str(o, 'url');
  if (!out && !o['republish-only'] && !(url && file)) return 'nothing to do: give --out FILE to generate, or --file FILE with --url to publish';
  for (const [name, min] of Object.entries(MINIMUM)) if (num(o, name) < min) return `--${name} must be at least ${min} (got ${num(o, name)})`;
  const republish = num(o, 'republish');
  const authors = num(o, 'authors');
  if (republish > maxRepublish(authors)) return `--republish ${republish}: at most ${maxRepublish(authors)} for ${authors} authors (every fourth author re-publishes at most 60 lists, each at least a second after its last one and all before now)`;
  const repubOut = str(o, 'republish-out');
  if (o['republish-only'] && !repubOut) return '--republish-only needs --republish-out FILE (and --republish N)';
  if (repubOut && !out && !o['republish-only']) return '--republish-out needs --out (the base set), or --republish-only';
  if (repubOut && republish === 0) return '--republish-out needs --republish N';
  if (repubOut && out && resolve(repubOut) === resolve(out)) return '--republish-out must differ from --out (without it the re-publications follow the base in --out)';
  if (url && !/^wss?:\/\//.test(url)) return `--url ${url}: expected ws://HOST:PORT or wss://...`;
  if (!out && file && !existsSync(file)) return `--file ${file}: no such file (generate one with --out)`;
  return null;
}

async function main(argv: string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) { process.stdout.write(`${USAGE}\n`); return 0; }
  let o: Opts;
  try {
    o = parseArgs(argv, OPTIONS);
    const problem = problemWith(o);
    if (problem) throw new UsageError(problem);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(`${e.message}\n${USAGE}\n`);
    return 2;
  }
  const out = str(o, 'out');
  const file = str(o, 'file') || out;
  const republishOnly = o['republish-only'] === true;
  if (out || republishOnly) {
    const t0 = performance.now();
    const repubOut = str(o, 'republish-out');
    const count = await generate({ authors: num(o, 'authors'), replacements: num(o, 'replacements'), followMean: num(o, 'follow-mean'), seed: str(o, 'seed'), republish: num(o, 'republish'), republishOut: repubOut || undefined, republishOnly, largeLists: num(o, 'large-lists') }, out);
    const also = repubOut ? `${(statSync(repubOut).size / 1e6).toFixed(1)} MB of ${num(o, 'republish')} re-published lists in ${repubOut}` : '';
    log(republishOnly ? `${also} (${((performance.now() - t0) / 1000).toFixed(1)} s)` : `${count} events, ${(statSync(out).size / 1e6).toFixed(1)} MB in ${out}${also ? ` and ${also}` : ''} (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
  }
  if (str(o, 'url') && file) {
    await publishFile(file, str(o, 'url'), num(o, 'connections'), num(o, 'inflight'));
    // the base first, then the re-publications that replace its lists
    if (out && file === out && str(o, 'republish-out')) await publishFile(str(o, 'republish-out'), str(o, 'url'), num(o, 'connections'), num(o, 'inflight'));
  }
  return 0;
}

process.exitCode = await main(process.argv.slice(2));
