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
import { parseArgs as nodeParseArgs } from 'node:util';
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

const USAGE = `usage: netgen --out FILE [--authors N] [--replacements N] [--follow-mean N] [--seed S]
       netgen --file FILE --url ws://HOST:PORT [--connections 16] [--inflight 200]
  --out writes a network-shaped directory set (3 events per author, then --replacements newer
  follow lists) as JSON lines; --file with --url publishes a set to a relay and reports events/s
  (--out with --url does both)`;

/** A whole number of at least `min` from option `name`, or a message naming the option. */
function whole(v: Record<string, string | boolean | undefined>, name: string, min: number): number | string {
  const n = Number(v[name]);
  return Number.isInteger(n) && n >= min ? n : `--${name} must be a whole number of at least ${min} (got ${String(v[name])})`;
}

async function main(): Promise<number> {
  let v: Record<string, string | boolean | undefined>;
  try {
    ({ values: v } = nodeParseArgs({
      options: {
        authors: { type: 'string', default: '6000' },
        replacements: { type: 'string', default: '0' },
        'follow-mean': { type: 'string', default: '100' },
        seed: { type: 'string', default: '1' },
        out: { type: 'string' },
        file: { type: 'string' },
        url: { type: 'string' },
        connections: { type: 'string', default: '16' },
        inflight: { type: 'string', default: '200' },
        help: { type: 'boolean' },
      },
    }));
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n${USAGE}\n`);
    return 2;
  }
  if (v.help) { process.stdout.write(`${USAGE}\n`); return 0; }
  const out = v.out as string | undefined;
  const file = (v.file as string | undefined) ?? out;
  const url = v.url as string | undefined;
  const nums = { authors: whole(v, 'authors', 2), replacements: whole(v, 'replacements', 0), followMean: whole(v, 'follow-mean', 1), connections: whole(v, 'connections', 1), inflight: whole(v, 'inflight', 1) };
  const problem = !out && !(url && file) ? 'nothing to do: give --out FILE to generate, or --file FILE with --url to publish'
    : Object.values(nums).find((n): n is string => typeof n === 'string')
    ?? (url && !/^wss?:\/\//.test(url) ? `--url ${url}: expected ws://HOST:PORT or wss://...` : null)
    ?? (!out && file && !existsSync(file) ? `--file ${file}: no such file (generate one with --out)` : null);
  if (problem) { process.stderr.write(`${problem}\n${USAGE}\n`); return 2; }
  const n = nums as { [K in keyof typeof nums]: number };
  if (out) {
    const t0 = performance.now();
    const count = await generate({ authors: n.authors, replacements: n.replacements, followMean: n.followMean, seed: v.seed as string }, out);
    log(`${count} events, ${(statSync(out).size / 1e6).toFixed(1)} MB in ${out} (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
  }
  if (url && file) await publishFile(file, url, n.connections, n.inflight);
  return 0;
}

process.exitCode = await main();
