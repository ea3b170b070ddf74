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
//   node dist/bench/netgen.js --authors 6000 --replacements 0 --out /tmp/dir.jsonl
//   node dist/bench/netgen.js --file /tmp/dir.jsonl --url ws://127.0.0.1:7600   # publish, events/s
//   orbweaver import /tmp/dir.jsonl                                              # the bulk path
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync, statSync } from 'node:fs';
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
}

/** Writes the data set to `out`; returns the number of events. */
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
  const ws = createWriteStream(out);
  let buf: string[] = [];
  let n = 0;
  const push = async (s: string) => {
    buf.push(s);
    n++;
    if (buf.length >= 2000) {
      if (!ws.write(buf.join('\n') + '\n')) await new Promise<void>((r) => ws.once('drain', () => r()));
      buf = [];
    }
  };
  const profile = (i: number, at: number) => {
    const name = `user${i}`;
    const about = Array.from({ length: 5 + Math.floor(rnd() * 20) }, () => WORDS[Math.floor(rnd() * WORDS.length)]).join(' ');
    return JSON.stringify(signer.sign({ kind: 0, created_at: at, tags: [], content: JSON.stringify({ name, about, picture: `https://img.example.com/${pks[i]!.slice(0, 16)}.jpg`, nip05: `${name}@example.com` }) }, sks[i]!, pks[i]!));
  };
  const followList = (i: number, at: number) =>
    JSON.stringify(signer.sign({ kind: 3, created_at: at, tags: Array.from(follows[i]!, (a) => ['p', pks[a]!]), content: '' }, sks[i]!, pks[i]!));
  for (let i = 0; i < p.authors; i++) {
    const at = base + Math.floor(rnd() * 365 * 86400);
    await push(profile(i, at));
    const urls = new Set<string>();
    const nr = 3 + Math.floor(rnd() * 4);
    while (urls.size < nr) urls.add(`wss://relay-${relayRank()}.example.net`);
    await push(JSON.stringify(signer.sign({ kind: 10002, created_at: at, tags: [...urls].map((u, k) => (k === 0 ? ['r', u] : ['r', u, k === 1 ? 'read' : 'write'])), content: '' }, sks[i]!, pks[i]!)));
    const want = Math.min(p.authors - 1, MAX_FOLLOWS, Math.max(1, Math.round(lengths())));
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
      if (cur.length > 1 && (rnd() < 0.4 || cur.length >= MAX_FOLLOWS)) cur.splice(Math.floor(rnd() * cur.length), 1);
      else { const a = perm[followed()]!; if (a !== i && !cur.includes(a)) cur.push(a); }
    }
    follows[i] = Uint32Array.from(cur);
    await push(followList(i, at));
    if (r % 10 === 9) await push(profile(i, at));
    if (r % 50000 === 49999) log(`  ${r + 1}/${p.replacements} replacements`);
  }
  ws.write(buf.length ? buf.join('\n') + '\n' : '');
  await new Promise<void>((res, rej) => ws.end((e?: Error | null) => (e ? rej(e) : res())));
  return n;
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
  { name: 'seed', type: 'string', default: '1', help: 'data set seed' },
  { name: 'file', type: 'string', help: 'publish this JSON-lines file (default: the --out file)' },
  { name: 'url', type: 'string', help: 'relay WebSocket URL to publish to, e.g. ws://127.0.0.1:7447' },
  { name: 'connections', type: 'int', default: 16, help: 'connections used to publish' },
  { name: 'inflight', type: 'int', default: 200, help: 'events in flight per connection' },
];

const USAGE = `usage: netgen --out FILE [--authors N ...] | --file FILE --url ws://HOST:PORT [--connections N ...]
  --out writes a network-shaped directory set as JSON lines; --file with --url publishes a set to
  a relay and reports events/s (--out with --url does both)
${formatHelp(OPTIONS, '  ')}`;

/** The least value of each whole-number option (the parser checks they are integers). */
const MINIMUM: Record<string, number> = { authors: 2, replacements: 0, 'follow-mean': 1, connections: 1, inflight: 1 };

/** What is wrong with the options, naming the option and the fix, or null. */
function problemWith(o: Opts): string | null {
  const out = str(o, 'out');
  const file = str(o, 'file') || out;
  const url = str(o, 'url');
  if (!out && !(url && file)) return 'nothing to do: give --out FILE to generate, or --file FILE with --url to publish';
  for (const [name, min] of Object.entries(MINIMUM)) if (num(o, name) < min) return `--${name} must be at least ${min} (got ${num(o, name)})`;
  if (url && !/^wss?:\/\//.test(url)) return `--url ${url}: expected ws://HOST:PORT or wss://...`;
  if (!out && !existsSync(file)) return `--file ${file}: no such file (generate one with --out)`;
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
  if (out) {
    const t0 = performance.now();
    const count = await generate({ authors: num(o, 'authors'), replacements: num(o, 'replacements'), followMean: num(o, 'follow-mean'), seed: str(o, 'seed') }, out);
    log(`${count} events, ${(statSync(out).size / 1e6).toFixed(1)} MB in ${out} (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
  }
  if (str(o, 'url') && file) await publishFile(file, str(o, 'url'), num(o, 'connections'), num(o, 'inflight'));
  return 0;
}

process.exitCode = await main(process.argv.slice(2));
