// answers: are two relays' answers the same? The directory's query shapes (and the filters around
// them that NIP-01 makes exact: since/until windows, #p with no kinds or with kinds in and out of
// the follow graph, several filters in one REQ, COUNT) are sent to --url and --vs on the same data,
// one at a time, and every answer is compared.
//
// NIP-01 orders an answer newest first and leaves the order of events with the same created_at to
// the relay (it asks for the lowest id first, which not every relay does), so each difference is
// classed:
//   identical   the same events in the same order;
//   tie order   the same events, ordered differently only among equal created_at (the table says
//               how many of those answers each relay gave in NIP-01's order, lowest id first);
//   limit tie   a limit cut a run of equal created_at at different events (the rest identical);
//   differ      anything else: a missing or extra event, a wrong order, a different count.
// Only "differ" is a wrong answer; the run exits 1 when there is one.
import { COMMON_OPTS, flag, list, num, str, UsageError, type Opts } from './lib/args.js';
import type { Bench } from './lib/bench.js';
import { BenchError, connect, WebSocket } from './lib/client.js';
import { DIRECTORY_DEFAULTS, directoryFromFile, loadDirectory, type DirectorySet } from './lib/directory-workload.js';
import { prng } from './lib/events.js';
import { emit, log, table } from './lib/report.js';

interface Ev { id: string; created_at: number }
interface Answer { events: Ev[]; count?: number; closed?: string }
type Verdict = 'identical' | 'tie order' | 'limit tie' | 'differ';

/** A query: one REQ or COUNT of one or more filters. */
interface Query { shape: string; count: boolean; filters: Record<string, unknown>[] }

/** One connection that asks one query at a time. */
class Asker {
  private seq = 0;
  constructor(private readonly ws: WebSocket, readonly url: string, private readonly timeoutMs: number) {}

  close(): void {
    this.ws.close();
  }

  ask(q: Query): Promise<Answer> {
    const sid = `a${++this.seq}`;
    const events: Ev[] = [];
    return new Promise((resolve, reject) => {
      const done = (a: Answer): void => {
        clearTimeout(timer);
        this.ws.off('message', onMessage);
        this.ws.off('close', onClose);
        if (!q.count && !a.closed) this.ws.send(JSON.stringify(['CLOSE', sid]));
        resolve(a);
      };
      const timer = setTimeout(() => {
        this.ws.off('message', onMessage);
        reject(new BenchError(`${this.url}: no EOSE within ${this.timeoutMs} ms for ${JSON.stringify(q.filters)}`));
      }, this.timeoutMs);
      const onMessage = (data: Buffer): void => {
        const text = data.toString();
        if (text.startsWith('["EVENT",')) {
          // the id and created_at only: a full parse of 500 follow lists per answer made this
          // client slow enough for a relay to close it as a slow reader
          if (!text.startsWith(`["EVENT","${sid}",`)) return;
          events.push(idAndTime(text));
          return;
        }
        const m = JSON.parse(text) as unknown[];
        if (m[1] !== sid) return;
        if (m[0] === 'EOSE') done({ events });
        else if (m[0] === 'COUNT') done({ events, count: (m[2] as { count: number }).count });
        else if (m[0] === 'CLOSED') done({ events, closed: String(m[2]) });
      };
      const onClose = (): void => {
        clearTimeout(timer);
        this.ws.off('message', onMessage);
        reject(new BenchError(`${this.url} closed the connection while answering ${JSON.stringify(q.filters).slice(0, 200)}`));
      };
      this.ws.once('close', onClose);
      this.ws.on('message', onMessage);
      this.ws.send(JSON.stringify([q.count ? 'COUNT' : 'REQ', sid, ...q.filters]));
    });
  }
}

/** The id and created_at of an EVENT message's event, found in its text. */
function idAndTime(text: string): Ev {
  const i = text.indexOf('"id":"');
  const c = text.indexOf('"created_at":');
  if (i < 0 || c < 0) throw new BenchError(`an EVENT without id or created_at: ${text.slice(0, 200)}`);
  return { id: text.slice(i + 6, i + 70), created_at: Number.parseInt(text.slice(c + 13, c + 25), 10) };
}

/** Whether two id lists hold the same ids. */
function sameSet(a: Ev[], b: Ev[]): boolean {
  if (a.length !== b.length) return false;
  const s = new Set(a.map((e) => e.id));
  return b.every((e) => s.has(e.id));
}

/** Created_at runs of an answer in order: the ids of each run as a sorted string. */
function runs(a: Ev[]): string[] {
  const out: string[] = [];
  let cur: string[] = [];
  let at = -1;
  for (const e of a) {
    if (e.created_at !== at && cur.length) { out.push(cur.sort().join()); cur = []; }
    at = e.created_at;
    cur.push(e.id);
  }
  if (cur.length) out.push(cur.sort().join());
  return out;
}

/** Whether each run of equal created_at in an answer is in ascending id order (NIP-01's tie rule). */
export const tiesById = (a: Ev[]): boolean => a.every((e, i) => i === 0 || a[i - 1]!.created_at !== e.created_at || a[i - 1]!.id < e.id);

/** Whether an answer is newest first. */
const ordered = (a: Ev[]): boolean => a.every((e, i) => i === 0 || a[i - 1]!.created_at >= e.created_at);

export function verdict(q: Query, a: Answer, b: Answer): Verdict {
  if (q.count) return a.count === b.count ? 'identical' : 'differ';
  if (a.closed !== undefined || b.closed !== undefined) return a.closed === b.closed ? 'identical' : 'differ';
  const x = a.events;
  const y = b.events;
  if (x.length === y.length && x.every((e, i) => e.id === y[i]!.id)) return 'identical';
  // several filters: NIP-01 orders each filter's matches, not their union
  if (q.filters.length > 1) return sameSet(x, y) ? 'tie order' : 'differ';
  if (!ordered(x) || !ordered(y)) return 'differ';
  if (sameSet(x, y)) {
    const rx = runs(x);
    const ry = runs(y);
    return rx.length === ry.length && rx.every((r, i) => r === ry[i]) ? 'tie order' : 'differ';
  }
  // a limit that cut a run of equal created_at: everything newer than the oldest run agrees, and
  // both answers are full
  const limit = q.filters[0]!.limit as number | undefined;
  if (limit === undefined || x.length !== y.length || x.length === 0) return 'differ';
  const last = x[x.length - 1]!.created_at;
  if (y[y.length - 1]!.created_at !== last) return 'differ';
  const newer = (e: Ev): boolean => e.created_at > last;
  const nx = x.filter(newer);
  const ny = y.filter(newer);
  if (!sameSet(nx, ny)) return 'differ';
  const rx = runs(nx);
  const ry = runs(ny);
  return rx.length === ry.length && rx.every((r, i) => r === ry[i]) ? 'limit tie' : 'differ';
}

/** The queries of each shape, drawn with a seeded generator from the set. */
function makeQueries(ds: DirectorySet, seed: number): Map<string, () => Query> {
  const r = prng(seed);
  const any = (): string => ds.pubkeys[Math.floor(r() * ds.pubkeys.length)]!;
  const top = ds.byFollowers.slice(0, 20);
  const mid = ds.byFollowers.slice(20, Math.min(ds.byFollowers.length, 5000));
  const pick = (xs: string[]): string => xs[Math.floor(r() * xs.length)]!;
  const authors = (n: number): string[] => Array.from({ length: n }, any);
  return new Map<string, () => Query>([
    ['outbox', () => ({ shape: 'outbox', count: false, filters: [{ kinds: [10002], authors: authors(150) }] })],
    ['profiles', () => ({ shape: 'profiles', count: false, filters: [{ kinds: [0], authors: authors(100) }] })],
    ['follows', () => ({ shape: 'follows', count: false, filters: [{ kinds: [3], authors: [any()] }] })],
    ['followers', () => ({ shape: 'followers', count: false, filters: [{ kinds: [3], '#p': [pick(top)], limit: 500 }] })],
    ['followers-mid', () => ({ shape: 'followers-mid', count: false, filters: [{ kinds: [3], '#p': [pick(mid)], limit: 100 }] })],
    ['followers-any', () => ({ shape: 'followers-any', count: false, filters: [{ kinds: [3], '#p': [any()], limit: 500 }] })],
    ['followers-two', () => ({ shape: 'followers-two', count: false, filters: [{ kinds: [3], '#p': [pick(top), pick(mid)], limit: 300 }] })],
    ['p-any-kind', () => ({ shape: 'p-any-kind', count: false, filters: [{ '#p': [pick(mid)], limit: 50 }] })],
    ['p-graph-kinds', () => ({ shape: 'p-graph-kinds', count: false, filters: [{ kinds: [3, 10000], '#p': [any()], limit: 100 }] })],
    ['p-mixed-kinds', () => ({ shape: 'p-mixed-kinds', count: false, filters: [{ kinds: [0, 3, 10002], '#p': [pick(mid)], limit: 100 }] })],
    ['two-filters', () => ({ shape: 'two-filters', count: false, filters: [{ kinds: [0], authors: [any()] }, { kinds: [3], '#p': [pick(mid)], limit: 20 }] })],
    ['follower-count', () => ({ shape: 'follower-count', count: true, filters: [{ kinds: [3], '#p': [pick(top)] }] })],
    ['follower-count-any', () => ({ shape: 'follower-count-any', count: true, filters: [{ kinds: [3], '#p': [any()] }] })],
  ]);
}

/** A since/until window inside an answer: between its newest tenth and its oldest tenth. */
function windowOf(a: Answer): { since: number; until: number } | null {
  const e = a.events;
  if (e.length < 20) return null;
  return { until: e[Math.floor(e.length / 10)]!.created_at, since: e[Math.floor((e.length * 9) / 10)]!.created_at };
}

const SHAPES = ['outbox', 'profiles', 'follows', 'followers', 'followers-window', 'followers-mid', 'followers-any', 'followers-two', 'p-any-kind', 'p-graph-kinds', 'p-mixed-kinds', 'two-filters', 'follower-count', 'follower-count-any', 'follower-count-window'];

export const answers: Bench = {
  name: 'answers',
  summary: 'sends the same directory queries to --url and --vs (relays holding the same data) and compares every answer',
  options: [
    ...COMMON_OPTS,
    { name: 'vs', type: 'string', default: '', help: 'the relay to compare with (required)' },
    { name: 'file', type: 'string', default: '', help: 'take the set from this JSON-lines file (netgen --out) that both relays hold; without it the directory benchmark\'s generated set (load it with `bench directory` first)' },
    { name: 'authors', type: 'int', default: DIRECTORY_DEFAULTS.authors, help: 'authors of the generated set (without --file)' },
    { name: 'queries', type: 'int', default: 50, help: 'queries per shape' },
    { name: 'shapes', type: 'list', default: SHAPES, help: `shapes to compare: ${SHAPES.join(', ')}` },
    { name: 'timeout', type: 'int', default: 60_000, help: 'ms to wait for one answer' },
    { name: 'show', type: 'int', default: 3, help: 'differing queries printed per shape' },
  ],
  async run(o: Opts) {
    const vs = str(o, 'vs');
    if (!vs) throw new UsageError('--vs URL is required: the relay to compare --url with');
    const file = str(o, 'file');
    const ds = file ? await directoryFromFile(file) : await loadDirectory({ ...DIRECTORY_DEFAULTS, authors: num(o, 'authors'), seed: str(o, 'seed') }, flag(o, 'regen'));
    const shapes = list(o, 'shapes');
    for (const s of shapes) if (!SHAPES.includes(s)) throw new UsageError(`unknown shape ${s}; known: ${SHAPES.join(', ')}`);
    const timeout = num(o, 'timeout');
    const a = new Asker(await connect(str(o, 'url')), str(o, 'url'), timeout);
    const b = new Asker(await connect(vs), vs, timeout);
    const gen = makeQueries(ds, Number.parseInt(str(o, 'seed'), 10) || 1);
    const rows: Record<string, string | number>[] = [];
    let wrong = 0;
    for (const shape of shapes) {
      const tally: Record<Verdict, number> = { identical: 0, 'tie order': 0, 'limit tie': 0, differ: 0 };
      let events = 0;
      let shown = 0;
      /** tie-order answers whose ties are in NIP-01's order (lowest id first), per side */
      const nip01 = { url: 0, vs: 0 };
      for (let i = 0; i < num(o, 'queries'); i++) {
        let q: Query;
        if (shape === 'followers-window' || shape === 'follower-count-window') {
          // a window inside a popular person's newest followers, as relay --url answers them
          const base = gen.get('followers')!();
          const w = windowOf(await a.ask(base));
          if (!w) continue;
          const f: Record<string, unknown> = { ...base.filters[0]!, ...w };
          q = shape === 'followers-window' ? { shape, count: false, filters: [{ ...f, limit: 200 }] } : { shape, count: true, filters: [{ kinds: f.kinds, '#p': f['#p'], ...w }] };
        } else q = gen.get(shape)!();
        const [x, y] = await Promise.all([a.ask(q), b.ask(q)]);
        const v = verdict(q, x, y);
        tally[v]++;
        events += x.events.length;
        if (v === 'tie order' && q.filters.length === 1) {
          if (tiesById(x.events)) nip01.url++;
          if (tiesById(y.events)) nip01.vs++;
        }
        if (v === 'differ' && shown++ < num(o, 'show')) {
          const only = (p: Ev[], r: Ev[]): number => { const s = new Set(r.map((e) => e.id)); return p.filter((e) => !s.has(e.id)).length; };
          log(`  ${shape} differs: ${JSON.stringify(q.filters).slice(0, 300)}\n    --url ${q.count ? `count ${x.count ?? `none (CLOSED ${x.closed})`}` : `${x.events.length} events${x.closed ? ` CLOSED ${x.closed}` : ''}, ${only(x.events, y.events)} not in --vs`}; --vs ${q.count ? `count ${y.count ?? `none (CLOSED ${y.closed})`}` : `${y.events.length} events${y.closed ? ` CLOSED ${y.closed}` : ''}, ${only(y.events, x.events)} not in --url`}`);
        }
      }
      wrong += tally.differ;
      const n = tally.identical + tally['tie order'] + tally['limit tie'] + tally.differ;
      const ties = tally['tie order'] && shape !== 'two-filters' ? `${tally['tie order']} (NIP-01 order: --url ${nip01.url}, --vs ${nip01.vs})` : tally['tie order'];
      rows.push({ shape, queries: n, identical: tally.identical, 'tie order': ties, 'limit tie': tally['limit tie'], differ: tally.differ, 'events (--url)': events });
      emit({ bench: 'answers', shape, url: str(o, 'url'), vs, queries: n, ...tally, ties_nip01_url: nip01.url, ties_nip01_vs: nip01.vs, events, label: str(o, 'label') || undefined, file: file || undefined });
    }
    table(`answers: ${str(o, 'url')} against ${vs}`, rows);
    if (wrong) log(`${wrong} answers differ`);
    process.exitCode = wrong ? 1 : 0;
    a.close();
    b.close();
  },
};
