// search: NIP-50 over a directory of profiles. Load N generated kind 0 profiles (one per key, names in
// several scripts, nip05/lud16 domains, abouts: lib/profiles.ts), then C connections in a closed
// loop per query shape (typeahead prefixes, words, two words, exact names, a domain, CJK pieces);
// queries/s and p50/p99 time from REQ to EOSE. Works against any relay URL; a relay without NIP-50
// answers CLOSED (counted as errors) or ignores `search` (events_per_query then shows it).
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { COMMON_OPTS, flag, list, num, str, UsageError, type Opts } from './lib/args.js';
import { LOAD_OPTS, type Bench } from './lib/bench.js';
import { closeAll, connectMany, publishAll } from './lib/client.js';
import { cacheDir, eventFrames, makeKeys, prng, signAll, type NostrEvent } from './lib/events.js';
import { round } from './lib/histogram.js';
import { profile, type Profile } from './lib/profiles.js';
import { CpuSampler, emit, log, machine, table, waitForQuiet } from './lib/report.js';
import { runShape, type Shape } from './query.js';

const CACHE_VERSION = 1;
/** query strings prepared per shape (picked at random per query) */
const QUERIES_PER_SHAPE = 2000;

interface Directory {
  events: NostrEvent[];
  profiles: Profile[];
}

/** N profiles, each signed by its own key; cached like the query data set. */
async function loadDirectory(count: number, seed: string, regen: boolean): Promise<Directory> {
  const n = Number.parseInt(createHash('sha256').update(seed).digest('hex').slice(0, 8), 16);
  const file = join(cacheDir(), `profiles-v${CACHE_VERSION}-n${count}-seed-${createHash('sha256').update(seed).digest('hex').slice(0, 12)}.jsonl`);
  const profiles = Array.from({ length: count }, (_, i) => profile(n, i, true));
  if (!regen && existsSync(file)) {
    const events = readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as NostrEvent);
    if (events.length === count) {
      log(`  directory: ${count} pre-signed profiles from cache ${file}`);
      return { events, profiles };
    }
  }
  log(`  generating ${count} profiles (one key each, seed ${seed})`);
  const keys = await makeKeys(seed, 'profiles', count);
  const base = Math.floor(Date.now() / 1000) - count;
  const events = await signAll(profiles.map((p, i) => ({ t: { kind: 0, created_at: base + i, tags: [], content: JSON.stringify(p) }, key: keys[i]! })), 'profiles');
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, events.map((e) => JSON.stringify(e)).join('\n') + '\n');
  renameSync(tmp, file);
  return { events, profiles };
}

/** One follow list per profile key: `per` targets drawn so that low indexes are followed by many (Zipf-like). */
async function followLists(count: number, per: number, seed: string): Promise<NostrEvent[]> {
  const keys = await makeKeys(seed, 'profiles', count);
  const r = prng(11);
  const base = Math.floor(Date.now() / 1000) - 10;
  return signAll(keys.map((key, i) => {
    const tags: string[][] = [];
    for (let k = 0; k < per; k++) {
      const j = Math.floor(count * r() ** 3); // skewed towards the first keys
      if (j !== i) tags.push(['p', keys[j]!.pubkey]);
    }
    return { t: { kind: 3, created_at: base, tags, content: '' }, key };
  }), 'follow lists');
}

const UNSPACED = /^[\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}\p{sc=Thai}]+$/u;
const words = (s: string | undefined): string[] => (s ?? '').split(/[^\p{L}\p{N}]+/u).filter(Boolean);

/** The query strings of each shape, drawn from the profiles (deterministic). */
function queryMixes(profiles: Profile[], seed: number): Record<string, { describe: string; queries: string[] }> {
  const r = prng(seed);
  const any = (): Profile => profiles[Math.floor(r() * profiles.length)]!;
  const draw = (make: () => string | undefined): string[] => {
    const out: string[] = [];
    for (let guard = 0; out.length < QUERIES_PER_SHAPE && guard < QUERIES_PER_SHAPE * 50; guard++) {
      const q = make();
      if (q) out.push(q);
    }
    return out;
  };
  const nameWord = (min: number): string | undefined => {
    const p = any();
    const ws = words(p.display_name ?? p.name).filter((w) => !UNSPACED.test(w) && Array.from(w).length >= min);
    return ws[Math.floor(r() * ws.length)];
  };
  return {
    prefix3: { describe: 'typeahead: the first 3 letters of a name word ("ali", "mar", "Зо")', queries: draw(() => nameWord(3)?.slice(0, 3)) },
    prefix1: { describe: 'typeahead: one letter', queries: draw(() => nameWord(1)?.slice(0, 1)) },
    word: { describe: 'a whole word of a name or about ("bitcoin", "satoshi")', queries: draw(() => (r() < 0.5 ? nameWord(2) : words(any().about)[0])) },
    'two-words': { describe: 'typeahead of two words ("alice sm")', queries: draw(() => { const ws = words(any().display_name).filter((w) => !UNSPACED.test(w)); return ws.length >= 2 ? `${ws[0]} ${ws[1]!.slice(0, 2)}` : undefined; }) },
    exact: { describe: 'a whole name (one or a few exact matches)', queries: draw(() => any().name) },
    domain: { describe: 'a prefix and domain:<nip05 domain>', queries: draw(() => { const p = any(); const w = nameWord(3); return p.nip05 && w ? `${w.slice(0, 3)} domain:${p.nip05.split('@').pop()}` : undefined; }) },
    cjk: { describe: 'two characters of a Japanese or Chinese name ("さと", "山田")', queries: draw(() => { const ws = words(any().name).filter((w) => UNSPACED.test(w) && Array.from(w).length >= 2); if (!ws.length) return undefined; const cps = Array.from(ws[0]!); const a = Math.floor(r() * (cps.length - 1)); return cps.slice(a, a + 2).join(''); }) },
  };
}

export const search: Bench = {
  name: 'search',
  summary: 'NIP-50: load N profiles, then C connections in a closed loop per search shape (typeahead prefixes, words, names); queries/s, p50/p99 time to EOSE',
  options: [
    ...COMMON_OPTS,
    ...LOAD_OPTS,
    { name: 'count', type: 'int', default: 100_000, help: 'profiles in the directory (one key each)' },
    { name: 'connections', type: 'int', default: 8, help: 'searching connections (closed loop, one query outstanding on each)' },
    { name: 'limit', type: 'int', default: 20, help: 'limit of each search (a typeahead list)' },
    { name: 'duration', type: 'number', default: 10, help: 'measured seconds per shape' },
    { name: 'warmup', type: 'number', default: 2, help: 'unmeasured seconds per shape before measuring' },
    { name: 'shapes', type: 'list', default: ['prefix3', 'prefix1', 'word', 'two-words', 'exact', 'domain', 'cjk'], help: 'shapes to run: prefix3, prefix1, word, two-words, exact, domain, cjk' },
    { name: 'query-timeout', type: 'number', default: 10, help: 'seconds before an unanswered query counts as a timeout' },
    { name: 'follows', type: 'int', default: 0, help: 'with load: each profile\'s key also publishes a follow list (kind 3) of this many others, skewed so a few are followed by many (a graph for trust ranking)' },
  ],
  async run(o: Opts) {
    const url = str(o, 'url');
    const limit = num(o, 'limit');
    const dir = await loadDirectory(num(o, 'count'), str(o, 'seed'), flag(o, 'regen'));
    const mixes = queryMixes(dir.profiles, 7);
    const run: Shape[] = list(o, 'shapes').map((name) => {
      const m = mixes[name];
      if (!m) throw new UsageError(`unknown shape ${name}; known: ${Object.keys(mixes).join(', ')}`);
      return {
        name,
        describe: `${m.describe}: {"kinds":[0],"search":…,"limit":${limit}}`,
        frame: (sid, rnd) => JSON.stringify(['REQ', sid, { kinds: [0], search: m.queries[Math.floor(rnd() * m.queries.length)], limit }]),
      };
    });
    if (flag(o, 'load')) {
      log(`search: loading ${dir.events.length} profiles into ${url}`);
      const r = await publishAll(url, eventFrames(dir.events), dir.events.map((e) => e.id), {
        connections: num(o, 'load-connections'),
        inflight: num(o, 'load-inflight'),
        timeoutMs: 900_000,
        progress: true,
      });
      log(`  loaded: ${r.stored} stored, ${r.duplicates} already there, ${r.rejectedTotal} rejected, ${r.missing} missing, ${Math.round((r.stored + r.duplicates) / (r.elapsedMs / 1000))}/s`);
      const follows = num(o, 'follows');
      if (follows > 0) {
        const lists = await followLists(dir.events.length, follows, str(o, 'seed'));
        log(`search: loading ${lists.length} follow lists of ${follows} into ${url}`);
        const f = await publishAll(url, eventFrames(lists), lists.map((e) => e.id), { connections: num(o, 'load-connections'), inflight: num(o, 'load-inflight'), timeoutMs: 900_000, progress: true });
        log(`  loaded: ${f.stored} stored, ${f.duplicates} already there, ${f.rejectedTotal} rejected`);
      }
    }
    const conns = await connectMany(url, num(o, 'connections'));
    const rows: Record<string, string | number>[] = [];
    for (const [i, shape] of run.entries()) {
      log(`search ${shape.name}: ${shape.describe}, ${conns.length} connections, ${num(o, 'warmup')} s warm-up + ${num(o, 'duration')} s`);
      await waitForQuiet(num(o, 'quiet-wait'));
      const cpu = new CpuSampler(o.pid as number | undefined);
      const r = await runShape(conns, shape, num(o, 'warmup') * 1000, num(o, 'duration') * 1000, num(o, 'query-timeout') * 1000, true, i + 1);
      const res = cpu.read();
      const lat = r.latency.summary();
      const qps = Math.round(r.queries / num(o, 'duration'));
      const perQuery = r.queries ? round(r.events / r.queries, 1) : 0;
      emit({ bench: 'search', label: str(o, 'label') || undefined, url, time: new Date().toISOString(), shape: shape.name, filter: shape.describe, profiles: dir.events.length, connections: conns.length, duration_s: num(o, 'duration'), queries: r.queries, queries_per_s: qps, events_per_query: perQuery, eose_p50_ms: lat.p50_ms, eose_p99_ms: lat.p99_ms, eose_max_ms: lat.max_ms, errors: r.errors, closed_reasons: Object.keys(r.closedReasons).length ? r.closedReasons : undefined, timeouts: r.timeouts, ...res, machine: machine() });
      rows.push({ shape: shape.name, 'q/s': qps, 'p50 ms': lat.p50_ms, 'p99 ms': lat.p99_ms, 'events/q': perQuery, errors: r.errors + r.timeouts, 'relay CPU%': res.relay_cpu_pct ?? '-', 'machine busy%': res.machine_busy_pct ?? '-' });
    }
    closeAll(conns);
    table(`search (${dir.events.length} profiles, ${conns.length} connections, limit ${limit}, closed loop)`, rows);
  },
};
