// The ranking pass reads the store's follow graph (store/graph.ts) instead of parsing every list:
// over a store whose follow and mute lists were published, re-published unchanged, swapped,
// re-ordered, replaced by older versions that lose, and deleted (kind 5 by id and by address),
// the pass gives the same followers, mutes, scores and ranks as a PageRank over the current lists
// as written (a model kept here), and the graph readers of RankStore page through everything once.
// Passes after the first read only the lists that changed (trust.keepGraph) and must equal a pass
// that reads the whole graph exactly.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Rows } from '../../src/trust/graph.js';
import { pageRank } from '../../src/trust/pagerank.js';
import { PubkeyIds } from '../../src/trust/pubkeys.js';
import { readGraph, rankPass } from '../../src/trust/pass.js';
import { refreshLists, type KeptGraph, type StoreLists } from '../../src/trust/kept-graph.js';
import { rankScale } from '../../src/trust/scale.js';
import type { EventStore } from '../../src/store/types.js';
import type { NostrEvent } from '../../src/nostr/event.js';
import { ev, hex, put, withStore } from '../store/helpers.js';

const P = { damping: 0.85, iterations: 60, tolerance: 1e-12, muteWeight: 1 };
const KINDS = [3, 10000] as const;
const HEX64 = /^[0-9a-f]{64}$/;

/** The current list of each (kind, author) as written: what the store must hold. */
class Model {
  readonly current = new Map<string, NostrEvent>();
  private ts = 1_700_000_000;
  constructor(private readonly store: EventStore) {}
  private key = (kind: number, author: string) => `${kind}:${author}`;

  async publish(kind: number, author: string, tags: string[][]): Promise<NostrEvent> {
    const e = ev({ kind, pubkey: author, tags, created_at: this.ts++ });
    const r = await put(this.store, e);
    assert.equal(r.status, 'stored', JSON.stringify(r));
    this.current.set(this.key(kind, author), e);
    return e;
  }

  /** An older version than the current one: the store keeps the current one. */
  async publishOlder(kind: number, author: string, tags: string[][]): Promise<void> {
    const cur = this.current.get(this.key(kind, author))!;
    await put(this.store, ev({ kind, pubkey: author, tags, created_at: cur.created_at - 1 }));
  }

  async deleteById(kind: number, author: string): Promise<void> {
    const cur = this.current.get(this.key(kind, author))!;
    await put(this.store, ev({ kind: 5, pubkey: author, tags: [['e', cur.id]], created_at: this.ts++ }));
    this.current.delete(this.key(kind, author));
  }

  async deleteByAddress(kind: number, author: string): Promise<void> {
    await put(this.store, ev({ kind: 5, pubkey: author, tags: [['a', `${kind}:${author}:`]], created_at: this.ts++ }));
    this.current.delete(this.key(kind, author));
  }

  tags(kind: number, author: string): string[][] | undefined {
    return this.current.get(this.key(kind, author))?.tags;
  }

  /** kind -> author -> the set of pubkeys its list names (p tags of 64 lowercase hex). */
  lists(kind: number): Map<string, Set<string>> {
    const out = new Map<string, Set<string>>();
    for (const e of this.current.values()) {
      if (e.kind !== kind) continue;
      out.set(e.pubkey, new Set(e.tags.filter((t) => t[0] === 'p' && typeof t[1] === 'string' && HEX64.test(t[1])).map((t) => t[1]!)));
    }
    return out;
  }

  /** The pass over the current lists as written: PageRank over rows built with Rows.add. */
  async expected(roots: string[]) {
    const ids = new PubkeyIds();
    const follows = new Rows();
    const mutes = new Rows();
    for (const [kind, rows] of [[3, follows], [10000, mutes]] as const) {
      for (const e of this.current.values()) {
        if (e.kind !== kind) continue;
        const src = ids.idOfHex(e.pubkey, true);
        const targets = e.tags.filter((t) => t[0] === 'p' && typeof t[1] === 'string' && HEX64.test(t[1])).map((t) => ids.idOfHex(t[1]!, true));
        rows.add(src, Uint32Array.from(targets));
      }
    }
    const rootIds = roots.map((r) => ids.idOfHex(r, true));
    const r = await pageRank(ids.size, follows, mutes, rootIds, P);
    const scale = rankScale(r.score, ids.size);
    const by = new Map<string, { score: number; rank: number; followers: number; mutes: number }>();
    for (let i = 0; i < ids.size; i++) by.set(ids.hex(i), { score: r.score[i]!, rank: scale(r.score[i]!), followers: r.followers[i]!, mutes: r.mutes[i]! });
    return { by, nodes: ids.size, edges: follows.edges, muteEdges: mutes.edges, iterations: r.iterations };
  }
}

/** A small deterministic generator (the pubkeys themselves are random). */
function prng(seed: number): () => number {
  let s = seed;
  return () => ((s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 0x100000000);
}

/**
 * A pass checked against the model. With `kept` (the graph the pass before kept) the pass reads only
 * the lists that changed, and must equal a pass that reads the whole graph bit for bit: the same
 * pubkeys with the same ids, the same scores. Returns the graph this pass kept.
 */
async function checkPass(store: EventStore, m: Model, roots: string[], label: string, kept?: KeptGraph): Promise<KeptGraph | undefined> {
  const want = await m.expected(roots);
  const got = await rankPass(store.ranks, { ...P, roots, hideBelow: 1, keepGraph: true }, kept);
  assert.equal(got.meta.read, kept ? 'changed' : 'graph', `${label}: what the pass read`);
  if (kept) {
    const full = await rankPass(store.ranks, { ...P, roots, hideBelow: 1 });
    assert.equal(full.meta.read, 'graph');
    assert.equal(got.ids.size, full.ids.size, `${label}: the same pubkeys as a full read`);
    for (let i = 0; i < got.ids.size; i++) {
      assert.equal(got.ids.hex(i), full.ids.hex(i), `${label}: pass id ${i}`);
      assert.equal(got.score[i], full.score[i], `${label}: score of ${got.ids.hex(i)} equals a full read's exactly`);
    }
  }
  assert.equal(got.meta.nodes, want.nodes, `${label}: nodes`);
  assert.equal(got.meta.edges, want.edges, `${label}: follow edges`);
  assert.equal(got.meta.muteEdges, want.muteEdges, `${label}: mute edges`);
  assert.equal(store.ranks.count(), want.nodes, `${label}: stored ranks`);
  const seen = new Set<string>();
  for (let i = 0; i < got.ids.size; i++) {
    const pk = got.ids.hex(i);
    seen.add(pk);
    const w = want.by.get(pk);
    assert.ok(w, `${label}: ${pk} ranked but in no current list`);
    const stored = store.ranks.get(pk)!;
    assert.equal(stored.followers, w.followers, `${label}: followers of ${pk}`);
    assert.equal(stored.mutes, w.mutes, `${label}: mutes of ${pk}`);
    // the same sums in another order: equal up to rounding
    assert.ok(Math.abs(stored.score - w.score) <= 1e-12 * Math.max(1e-9, w.score) + 1e-18, `${label}: score of ${pk}: ${stored.score} vs ${w.score}`);
    assert.equal(stored.rank, w.rank, `${label}: rank of ${pk}`);
  }
  assert.equal(seen.size, want.by.size, `${label}: the same pubkeys`);
  return got.kept;
}

test('rankPass over the graph: followers, mutes, scores and ranks equal a pass over the current lists, through re-publications, swaps and deletions', async () => {
  await withStore(async (store) => {
    const rnd = prng(7);
    const people = Array.from({ length: 80 }, () => hex());
    const authors = people.slice(0, 50);
    const pick = () => people[Math.floor(people.length * rnd() ** 2)]!;
    const m = new Model(store);
    const roots = [authors[0]!, authors[1]!, hex()]; // a root in no list gets an id of its own
    const listOf = (author: string, n: number): string[][] => {
      const tags: string[][] = [];
      for (let i = 0; i < n; i++) tags.push(rnd() < 0.2 ? ['p', pick(), 'wss://relay.example.com', 'petname'] : ['p', pick()]);
      if (rnd() < 0.3 && tags.length > 0) tags.push(tags[0]!); // named twice
      if (rnd() < 0.2) tags.push(['p', author]); // following oneself
      if (rnd() < 0.2) tags.push(['p', 'not hex'], ['e', hex()], ['p']); // not in the graph, and not counted
      return tags;
    };
    for (const a of authors) await m.publish(3, a, listOf(a, Math.floor(rnd() * 25)));
    for (const a of authors.slice(0, 15)) await m.publish(10000, a, listOf(a, 1 + Math.floor(rnd() * 5)));
    // lists with no member (named by no list either): their authors are pubkeys of the graph
    await m.publish(3, hex(), []);
    await m.publish(10000, hex(), [['t', 'nostr']]);
    // an upper-case p tag: not a pubkey for the graph (docs/trust.md), not counted
    await m.publish(3, hex(), [['p', hex().toUpperCase()], ['p', hex()]]);
    let kept = await checkPass(store, m, roots, 'first pass');
    assert.ok(kept, 'the first pass keeps the graph');

    for (let round = 0; round < 3; round++) {
      for (const a of authors) {
        for (const kind of KINDS) {
          const tags = m.tags(kind, a);
          const x = rnd();
          if (!tags) {
            if (x < 0.3) await m.publish(kind, a, listOf(a, 3)); // a list again after a deletion
            continue;
          }
          if (x < 0.3) await m.publish(kind, a, tags); // re-published unchanged
          else if (x < 0.5) {
            // one follow swapped
            const next = tags.map((t) => [...t]);
            const i = next.findIndex((t) => t[0] === 'p');
            if (i >= 0) next[i] = ['p', pick()];
            else next.push(['p', pick()]);
            await m.publish(kind, a, next);
          } else if (x < 0.6) await m.publish(kind, a, [...tags].reverse()); // the same members, another order
          else if (x < 0.65) await m.publishOlder(kind, a, listOf(a, 10)); // an older version: ignored
          else if (x < 0.7) await m.deleteById(kind, a);
          else if (x < 0.73) await m.deleteByAddress(kind, a);
          else if (x < 0.78) await m.publish(kind, a, listOf(a, Math.floor(rnd() * 25))); // a new list
        }
      }
      // the stored lists, parsed (the reader the pass had before the graph), are the model's
      for (const kind of KINDS) {
        const stored = new Map<string, Set<string>>();
        for await (const b of store.ranks.lists(kind)) for (const l of b) stored.set(l.author.toString('hex'), new Set(l.targets.filter((t) => HEX64.test(t))));
        assert.deepEqual(stored, m.lists(kind), `round ${round}: stored lists of kind ${kind}`);
      }
      kept = await checkPass(store, m, round === 1 ? [] : roots, `round ${round}`, kept);
    }
  });
});

test('RankStore graph readers: every edge, list author and pubkey once, in batches of any size', async () => {
  await withStore(async (store) => {
    const rnd = prng(11);
    const people = Array.from({ length: 40 }, () => hex());
    const m = new Model(store);
    for (const a of people.slice(0, 30)) await m.publish(3, a, Array.from({ length: Math.floor(rnd() * 12) }, () => ['p', people[Math.floor(rnd() * people.length)]!]));
    for (const a of people.slice(0, 8)) await m.publish(10000, a, [['p', people[Math.floor(rnd() * people.length)]!]]);
    await m.publish(3, people[3]!, [['p', people[4]!]]); // replaced
    const limit = store.ranks.pubkeyIdLimit();
    for (const batch of [1, 2, 7, 65_536]) {
      const pk = new Map<number, string>();
      let last = 0;
      for await (const b of store.ranks.pubkeysOfIds(1, limit, batch)) {
        assert.ok(b.ids.length <= batch);
        for (let j = 0; j < b.ids.length; j++) {
          assert.ok(b.ids[j]! > last, 'in id order, once');
          last = b.ids[j]!;
          pk.set(last, b.keys.toString('hex', j * 32, j * 32 + 32));
          assert.equal(store.ranks.pubkeyOfId(last)!.toString('hex'), pk.get(last));
        }
      }
      assert.equal(pk.size, limit - 1, 'ids are dense from 1');
      assert.equal(store.ranks.pubkeyOfId(limit), undefined);
      for (const kind of KINDS) {
        const edges = new Map<string, Set<string>>();
        let prev = -1;
        for await (const b of store.ranks.edges(kind, batch)) {
          assert.ok(b.followee.length <= batch && b.followee.length === b.follower.length);
          for (let i = 0; i < b.followee.length; i++) {
            const order = b.followee[i]! * 2 ** 32 + b.follower[i]!;
            assert.ok(order > prev, 'followee-major, each edge once');
            prev = order;
            const author = pk.get(b.follower[i]!)!;
            if (!edges.has(author)) edges.set(author, new Set());
            edges.get(author)!.add(pk.get(b.followee[i]!)!);
          }
        }
        const want = new Map([...m.lists(kind)].filter(([, s]) => s.size > 0));
        assert.deepEqual(edges, want, `batch ${batch}: edges of kind ${kind}`);
        const authors: string[] = [];
        for await (const b of store.ranks.listAuthors(kind, batch)) {
          assert.equal(b.serials.length, b.authors.length);
          for (const [i, a] of b.authors.entries()) {
            authors.push(pk.get(a)!);
            assert.equal(store.ranks.listSerial(kind, a), b.serials[i], 'each list with its serial');
          }
        }
        assert.deepEqual(authors.sort(), [...m.lists(kind).keys()].sort(), `batch ${batch}: authors of kind ${kind}`);
      }
    }
    // readGraph: the rows of every author, in the pass's ids; also when the store gives ids the
    // pass did not expect (its id map grows)
    const stale = Object.create(store.ranks) as typeof store.ranks;
    stale.pubkeyIdLimit = () => 1;
    for (const ranks of [store.ranks, stale]) {
      const ids = new PubkeyIds();
      const { follows, mutes } = await readGraph(ranks, ids);
      for (const [kind, rows] of [[3, follows], [10000, mutes]] as const) {
        const got = new Map<string, Set<string>>();
        for (let r = 0; r < rows.rows; r++) {
          const t: number[] = [];
          rows.forTargets(r, (x) => t.push(x));
          assert.deepEqual(t, [...t].sort((a, b) => a - b), 'a row is sorted');
          got.set(ids.hex(rows.src.data[r]!), new Set(t.map((x) => ids.hex(x))));
        }
        const want = new Map([...m.lists(kind)].map(([a, s]) => [a, new Set([...s].filter((x) => x !== a))] as const).filter(([, s]) => s.size > 0));
        assert.deepEqual(got, want, `rows of kind ${kind}`);
      }
    }
  });
});

test('Rows.layout, set and tidy: the rows add() makes, also across a chunk boundary', async () => {
  const rnd = prng(3);
  const lists: Array<[number, number[]]> = [];
  for (let a = 0; a < 60; a++) {
    if (rnd() < 0.2) continue;
    const t = Array.from({ length: Math.floor(rnd() * 9) }, () => Math.floor(rnd() * 60));
    if (rnd() < 0.3) t.push(a, a); // following oneself
    if (t.length > 0 && rnd() < 0.3) t.push(t[0]!); // twice
    if (t.length > 0) lists.push([a, t]); // layout() makes no row of length 0
  }
  // the long row first: the next rows cross the first chunk's end
  lists.unshift([60, Array.from({ length: (1 << 22) - 5 }, (_, i) => 61 + i)]);
  lists.push([61, [70, 65, 65, 61, 62]]);
  const byAdd = new Rows();
  for (const [a, t] of [...lists].sort((x, y) => x[0] - y[0])) byAdd.add(a, Uint32Array.from(t));
  const byLayout = new Rows();
  const lengths = new Uint32Array(62);
  for (const [a, t] of lists) lengths[a] = t.length;
  const next = byLayout.layout(lengths);
  for (const [a, t] of lists) for (const x of [...t].reverse()) byLayout.set(next[a]!++, x);
  await byLayout.tidy();
  assert.equal(byLayout.rows, byAdd.rows);
  assert.equal(byLayout.edges, byAdd.edges);
  for (let r = 0; r < byAdd.rows; r++) {
    assert.equal(byLayout.src.data[r], byAdd.src.data[r]);
    const a: number[] = [];
    const b: number[] = [];
    byAdd.forTargets(r, (x) => a.push(x));
    byLayout.forTargets(r, (x) => b.push(x));
    if (a.length > 1000) assert.ok(a.length === b.length && a.every((x, i) => x === b[i]), `long row ${r}`);
    else assert.deepEqual(b, a, `row ${r}`);
  }
});

test('the kept graph: too many changed lists mean a whole read; a list replaced while it is read is read again at its new serial', async () => {
  await withStore(async (store) => {
    const people = Array.from({ length: 12 }, () => hex());
    const m = new Model(store);
    for (const a of people.slice(0, 6)) await m.publish(3, a, people.slice(6).map((p) => ['p', p]));
    const first = await rankPass(store.ranks, { ...P, roots: [], hideBelow: 1, keepGraph: true });
    const kept = first.kept!;
    assert.equal(kept.follows.size, 6);
    await m.publish(3, people[0]!, [['p', people[7]!]]);
    await m.publish(3, people[1]!, [['p', people[8]!]]);
    assert.equal(await refreshLists(store.ranks, 3, kept.follows, () => 1), null, 'two changed, one allowed: read the whole graph');
    const ok = await refreshLists(store.ranks, 3, kept.follows, () => 2);
    assert.equal(ok?.read, 2, 'only the two changed lists are read');
    // the store says the scanned serial's event is gone once (replaced in between): the list is read at its serial now
    const racing = Object.create(store.ranks) as typeof store.ranks;
    let gone = 1;
    racing.listMembers = (kind, author, serial) => (gone-- > 0 ? null : store.ranks.listMembers(kind, author, serial));
    const again = await refreshLists(racing, 3, kept.follows, () => 10);
    assert.equal(again?.read, 2);
    const ids = (l: StoreLists, i: number) => Array.from({ length: l.start.data[i + 1]! - l.start.data[i]! }, (_, e) => l.targets.at(l.start.data[i]! + e));
    for (let i = 0; i < 6; i++) assert.deepEqual(ids(again!.lists, i), ids(ok!.lists, i), `list ${i}`);
    // and the pass that reads the changed lists ranks as the whole read does
    const next = await rankPass(store.ranks, { ...P, roots: [], hideBelow: 1, keepGraph: true }, kept);
    assert.equal(next.meta.read, 'changed');
    assert.equal(next.meta.listsRead, 2);
    const full = await rankPass(store.ranks, { ...P, roots: [], hideBelow: 1 });
    assert.deepEqual(Array.from(next.score), Array.from(full.score));
  });
});
