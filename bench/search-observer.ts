// search-observer: does a search ranked as seen from one reader (NIP-50 observer:) put the person
// that reader's follows trust first where names collide? On search-eval's data (the real graph and
// names; write and import it as for search-eval): every name shared by two or more real people who
// each have a follower, with a reader (a real list holder) whose follows favour a namesake who is
// not the most followed (cases() says how). One REQ {"kinds":[0],"search":NAME observer:READER,"limit":20} per pair,
// and the same without observer: for comparison. Reported: how often the reader's person came
// first among the namesakes (other matches, "Alex Gladstein" for "alex", may come before them:
// they are not what collides) with and without observer:, and the time to EOSE of a reader's first search (its rank is
// computed) and of its next (cached).
import { num, str, UsageError, type Opts } from './lib/args.js';
import type { Bench } from './lib/bench.js';
import { connect } from './lib/client.js';
import { emit, log, machine, table } from './lib/report.js';
import type { NostrEvent } from './lib/events.js';
import { askSearch, buildSet, quantile } from './search-eval.js';
import { foldField } from '../src/nostr/search-text.js';

interface Case {
  name: string;
  reader: string;
  want: string;
  /** the namesakes (want among them) */
  group: string[];
}

/**
 * Name collisions among real people where a reader's follows favour one namesake the global order
 * does not put first: for each shared name, the first list holder whose own follow and whose
 * follows' follows point at one of the namesakes at least twice as often as at any other (and at
 * least twice), when that namesake is not the most followed of them.
 */
function cases(people: Array<{ pubkey: string; names: string[]; followers: number }>, lists: NostrEvent[], max: number): Case[] {
  const byName = new Map<string, Array<{ pubkey: string; followers: number }>>();
  for (const p of people) {
    if (p.followers < 1) continue;
    for (const n of new Set(p.names)) if ([...n].length >= 3) (byName.get(n) ?? byName.set(n, []).get(n)!).push(p);
  }
  const follows = new Map(lists.map((e) => [e.pubkey, new Set(e.tags.map((t) => t[1]!))]));
  const out: Case[] = [];
  for (const [name, group] of [...byName.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
    if (group.length < 2) continue;
    const most = group.reduce((a, b) => (b.followers > a.followers ? b : a));
    for (const [reader, f] of follows) {
      const votes = group.map((c) => (f.has(c.pubkey) ? 1 : 0) + [...f].filter((x) => follows.get(x)?.has(c.pubkey)).length);
      const top = Math.max(...votes);
      const next = Math.max(0, ...votes.filter((_, i) => i !== votes.indexOf(top)));
      const want = group[votes.indexOf(top)]!;
      if (top >= 2 && top >= 2 * Math.max(1, next) && want !== most && want.pubkey !== reader) {
        out.push({ name, reader, want: want.pubkey, group: group.map((g) => g.pubkey) });
        break;
      }
    }
    if (out.length >= max) break;
  }
  return out;
}

/** Results asked per search: the namesakes compared are among them. */
const LIMIT = 20;
/** The first of the namesakes in an answer. */
const firstOf = (authors: string[], group: string[]): string | undefined => authors.find((a) => group.includes(a));

export const searchObserver: Bench = {
  name: 'search-observer',
  summary: 'search ranked as seen from one reader (observer:) on search-eval\'s real graph and names: the person a reader\'s follows trust first where names collide',
  options: [
    { name: 'url', type: 'string', help: 'relay to ask (it must hold search-eval\'s data set)' },
    { name: 'max', type: 'int', default: 500, help: 'name collisions (person, reader) asked at most' },
  ],
  async run(o: Opts) {
    const url = str(o, 'url');
    if (!url) throw new UsageError('search-observer needs --url (a relay holding search-eval\'s data set)');
    const s = await buildSet();
    const people = s.people.filter((p) => p.real).map((p) => ({ pubkey: p.key.pubkey, names: [p.display, p.name].filter((x) => x !== '').map(foldField), followers: p.followers }));
    const cs = cases(people, s.events.filter((e) => e.kind === 3), num(o, 'max'));
    log(`  ${cs.length} (name, person, reader) cases from ${new Set(cs.map((c) => c.name)).size} shared names`);
    const ws = await connect(url);
    let global = 0;
    let observed = 0;
    const first: number[] = [];
    const again: number[] = [];
    const plain: number[] = [];
    const readers = new Set<string>();
    let n = 0;
    for (const c of cs) {
      const g = await askSearch(ws, c.name, `o${n++}`, LIMIT);
      plain.push(g.ms);
      if (firstOf(g.authors, c.group) === c.want) global++;
      const r = await askSearch(ws, `${c.name} observer:${c.reader}`, `o${n++}`, LIMIT);
      (readers.has(c.reader) ? again : first).push(r.ms);
      readers.add(c.reader);
      if (firstOf(r.authors, c.group) === c.want) observed++;
      // the same reader once more: its rank is cached now
      again.push((await askSearch(ws, `${c.name} observer:${c.reader}`, `o${n++}`, LIMIT)).ms);
    }
    ws.close();
    const pct = (a: number) => (cs.length === 0 ? '-' : `${((100 * a) / cs.length).toFixed(1)}%`);
    table('name collisions: the namesake the reader\'s follows trust, first of the namesakes?', [
      { order: 'global (no observer:)', cases: cs.length, 'first': pct(global), 'p50 ms': quantile(plain, 0.5).toFixed(2), 'p99 ms': quantile(plain, 0.99).toFixed(2) },
      { order: 'observer:, first search of a reader', cases: first.length, 'first': pct(observed), 'p50 ms': quantile(first, 0.5).toFixed(2), 'p99 ms': quantile(first, 0.99).toFixed(2) },
      { order: 'observer:, cached', cases: again.length, 'first': '', 'p50 ms': quantile(again, 0.5).toFixed(2), 'p99 ms': quantile(again, 0.99).toFixed(2) },
    ]);
    emit({ bench: 'search-observer', url, machine: machine(), results: { cases: cs.length, readers: readers.size, globalFirst: global / cs.length, observerFirst: observed / cs.length, plainP50ms: quantile(plain, 0.5), plainP99ms: quantile(plain, 0.99), firstP50ms: quantile(first, 0.5), firstP99ms: quantile(first, 0.99), cachedP50ms: quantile(again, 0.5), cachedP99ms: quantile(again, 0.99) } });
  },
};
