// directory: the queries a directory relay answers for the outbox model — relay lists, profiles
// and follow lists of many people at once, and who follows whom — on the directory data set
// (lib/directory-workload.ts), in the same closed loop as the query benchmark.
import { COMMON_OPTS, flag, list, num, str, UsageError, type Opts } from './lib/args.js';
import { LOAD_OPTS, type Bench } from './lib/bench.js';
import { closeAll, connectMany } from './lib/client.js';
import { DIRECTORY_DEFAULTS, directoryFromFile, followersOf, loadDirectory, type DirectorySet } from './lib/directory-workload.js';
import { round } from './lib/histogram.js';
import { log, table } from './lib/report.js';
import { LOOP_OPTS, measureShapes, openTargets, type Shape } from './query.js';
import { VS_OPTS } from './lib/compare.js';
import { EventSource } from './lib/paced-writer.js';

/** `n` distinct random pubkeys of the set, as a JSON array. */
function randomAuthors(ds: DirectorySet, n: number, rnd: () => number, scratch: number[]): string {
  const k = Math.min(n, scratch.length);
  for (let i = 0; i < k; i++) {
    const j = i + Math.floor(rnd() * (scratch.length - i));
    [scratch[i], scratch[j]] = [scratch[j]!, scratch[i]!];
  }
  let s = '[';
  for (let i = 0; i < k; i++) s += (i ? ',"' : '"') + ds.pubkeys[scratch[i]!] + '"';
  return s + ']';
}

export function directoryShapes(ds: DirectorySet, o: { outbox: number; profiles: number; popular: number; followersLimit: number }): Shape[] {
  const scratch = ds.pubkeys.map((_, i) => i);
  const popular = ds.byFollowers.slice(0, Math.max(1, o.popular));
  const pick = (r: () => number): string => popular[Math.floor(r() * popular.length)]!;
  const counts = popular.map((pk) => followersOf(ds, pk));
  const meanCount = counts.reduce((a, b) => a + b, 0) / counts.length;
  const minFollowers = Math.min(...counts);
  return [
    {
      name: 'outbox',
      describe: `{"kinds":[10002],"authors":[${o.outbox} random]}`,
      expect: String(o.outbox),
      frame: (sid, r) => `["REQ","${sid}",{"kinds":[10002],"authors":${randomAuthors(ds, o.outbox, r, scratch)}}]`,
    },
    {
      name: 'profiles',
      describe: `{"kinds":[0],"authors":[${o.profiles} random]}`,
      expect: String(o.profiles),
      frame: (sid, r) => `["REQ","${sid}",{"kinds":[0],"authors":${randomAuthors(ds, o.profiles, r, scratch)}}]`,
    },
    {
      name: 'follows',
      describe: '{"kinds":[3],"authors":[one random]}',
      expect: '1',
      frame: (sid, r) => `["REQ","${sid}",{"kinds":[3],"authors":["${ds.pubkeys[Math.floor(r() * ds.pubkeys.length)]}"]}]`,
    },
    {
      name: 'followers',
      describe: `{"kinds":[3],"#p":[one of the ${popular.length} most followed],"limit":${o.followersLimit}}`,
      expect: minFollowers >= o.followersLimit ? String(o.followersLimit) : `${o.followersLimit} or fewer`,
      frame: (sid, r) => `["REQ","${sid}",{"kinds":[3],"#p":["${pick(r)}"],"limit":${o.followersLimit}}]`,
    },
    {
      name: 'follower-count',
      describe: `COUNT {"kinds":[3],"#p":[one of the ${popular.length} most followed]} (NIP-45)`,
      expect: `count ${round(meanCount, 1)} on average (${Math.min(...counts)}..${Math.max(...counts)})`,
      count: true,
      frame: (sid, r) => `["COUNT","${sid}",{"kinds":[3],"#p":["${pick(r)}"]}]`,
    },
  ];
}

const SHAPES = ['outbox', 'profiles', 'follows', 'followers', 'follower-count'];

export const directory: Bench = {
  name: 'directory',
  summary: 'directory workload (outbox relay lists, profiles, follow lists, followers, follower counts) on A authors x kinds 0/3/10002',
  options: [
    ...COMMON_OPTS,
    ...LOAD_OPTS,
    ...LOOP_OPTS,
    ...VS_OPTS,
    { name: 'authors', type: 'int', default: DIRECTORY_DEFAULTS.authors, help: 'authors in the directory set (3 events each)' },
    { name: 'zipf', type: 'number', default: DIRECTORY_DEFAULTS.zipf, help: 'Zipf exponent of follow targets' },
    { name: 'max-follows', type: 'int', default: DIRECTORY_DEFAULTS.maxFollows, help: 'most follows per kind 3 (each list has 1..this many)' },
    { name: 'shapes', type: 'list', default: SHAPES, help: `shapes to run: ${SHAPES.join(', ')}` },
    { name: 'outbox-authors', type: 'int', default: 150, help: 'authors per outbox (kind 10002) query' },
    { name: 'profile-authors', type: 'int', default: 100, help: 'authors per profiles (kind 0) query' },
    { name: 'popular', type: 'int', default: 20, help: 'followers/follower-count ask about one of this many most followed pubkeys' },
    { name: 'followers-limit', type: 'int', default: 500, help: 'limit of the followers query' },
    { name: 'file', type: 'string', default: '', help: 'take the set from this JSON-lines file (netgen --out) instead of generating one; the relays must hold it already (with --no-load)' },
    { name: 'write-rate', type: 'int', default: 0, help: 'reads while writing: each shape is measured idle, then while another client writes this many events a second (the same rate for every relay) from --write-file' },
    { name: 'write-file', type: 'string', default: '', help: 'events the relays do not hold, for --write-rate (netgen --republish-out, or another seed\'s set); each measurement takes the next part, so no relay gets one twice' },
  ],
  async run(o: Opts) {
    const file = str(o, 'file');
    if (file && flag(o, 'load')) throw new UsageError('--file takes the set from a file the relays already hold: load it first (orbweaver import, strfry import, netgen --url) and add --no-load');
    const ds = file ? await directoryFromFile(file) : await loadDirectory({ authors: num(o, 'authors'), seed: str(o, 'seed'), zipf: num(o, 'zipf'), maxFollows: num(o, 'max-follows') }, flag(o, 'regen'));
    const top = ds.byFollowers.slice(0, num(o, 'popular')).map((pk) => followersOf(ds, pk));
    log(`directory set${file ? ` from ${file}` : ''}: ${file ? `${ds.pubkeys.length} authors` : `${ds.events.length} events`}, ${(ds.bytes / 1e6).toFixed(1)} MB of JSON; the ${top.length} most followed have ${top[top.length - 1]}..${top[0]} followers`);
    const all = directoryShapes(ds, { outbox: num(o, 'outbox-authors'), profiles: num(o, 'profile-authors'), popular: num(o, 'popular'), followersLimit: num(o, 'followers-limit') });
    const run = list(o, 'shapes').map((w) => {
      const s = all.find((x) => x.name === w);
      if (!s) throw new UsageError(`unknown shape ${w}; known: ${SHAPES.join(', ')}`);
      return s;
    });
    const writeRate = num(o, 'write-rate');
    const writeFile = str(o, 'write-file');
    if (writeRate > 0 && !writeFile) throw new UsageError('--write-rate needs --write-file: events the relays do not hold yet (e.g. netgen --republish N --republish-out FILE)');
    const writes = writeRate > 0 ? { source: await EventSource.open(writeFile), rate: writeRate } : undefined;
    if (writes) log(`write load: ${writes.source.left} events from ${writeFile} at ${writeRate}/s`);
    const targets = await openTargets('directory', o, ds.events);
    await measureShapes('directory', targets, run, o, { store_events: file ? null : ds.events.length, file: file || undefined }, writes);
    for (const t of targets) closeAll(t.conns);
  },
};
