// Trust rank: the typed-array PageRank against a brute-force one on small graphs, and a ranking
// pass over a real store: a person with trusted followers outranks a same-name impersonator lifted
// by a sybil ring, mutes by trusted pubkeys lower a rank, followers equal the NIP-45 COUNT.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Rows } from '../../src/trust/graph.js';
import { pageRank } from '../../src/trust/pagerank.js';
import { PubkeyIds } from '../../src/trust/pubkeys.js';
import { rankPass } from '../../src/trust/pass.js';
import { trustedFollowers } from '../../src/trust/trusted-followers.js';
import { decodeRank, encodeRank, rankSeenOf, rankTrustedOf } from '../../src/store/ranks.js';
import { ev, hex, put, withStore } from '../store/helpers.js';

const P = { damping: 0.85, iterations: 200, tolerance: 1e-12, muteWeight: 1 };

/** Plain PageRank by the definition, on adjacency lists (no mutes). */
function brute(n: number, adj: number[][], roots: number[]): number[] {
  const tele = (i: number) => (roots.length ? (roots.includes(i) ? 1 / roots.length : 0) : 1 / n);
  let r = Array.from({ length: n }, (_, i) => tele(i));
  for (let k = 0; k < 200; k++) {
    const nx = new Array<number>(n).fill(0);
    let dangling = 0;
    for (let i = 0; i < n; i++) {
      const out = [...new Set(adj[i]!.filter((j) => j !== i))];
      if (out.length === 0) dangling += r[i]!;
      else for (const j of out) nx[j]! += (0.85 * r[i]!) / out.length;
    }
    r = nx.map((v, i) => v + (0.15 + 0.85 * dangling) * tele(i));
  }
  return r;
}

function rowsOf(adj: number[][]): Rows {
  const rows = new Rows();
  adj.forEach((out, i) => { if (out.length) rows.add(i, Uint32Array.from(out)); });
  return rows;
}

function randomGraph(n: number, seed: number): number[][] {
  let s = seed;
  const rnd = () => ((s = (s * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
  return Array.from({ length: n }, () => (rnd() < 0.2 ? [] : Array.from({ length: 1 + Math.floor(rnd() * 6) }, () => Math.floor(rnd() * n))));
}

test('pageRank: equals a brute-force PageRank on random graphs, global and rooted (duplicates and self-follows ignored)', async () => {
  for (const seed of [1, 2, 3, 4]) {
    const n = 40;
    const adj = randomGraph(n, seed);
    adj[0]!.push(0, adj[0]![0] ?? 1, adj[0]![0] ?? 1); // a self-follow and a duplicate
    for (const roots of [[], [0, 5]]) {
      const want = brute(n, adj, roots);
      const got = await pageRank(n, rowsOf(adj), new Rows(), roots, P);
      for (let i = 0; i < n; i++) assert.ok(Math.abs(got.score[i]! - want[i]!) < 1e-9, `seed ${seed} roots ${roots.join(',')} node ${i}: ${got.score[i]} vs ${want[i]}`);
      const order = (xs: ArrayLike<number>) => Array.from({ length: n }, (_, i) => i).sort((a, b) => xs[b]! - xs[a]! || a - b);
      assert.deepEqual(order(got.score).slice(0, 10), order(want).slice(0, 10));
    }
  }
});

test('pageRank: a sybil ring reachable through one ordinary user does not lift its target above a person with a few trusted followers (rooted)', async () => {
  // 0..2 roots; 3..12 ordinary users followed by the roots; 13 = the person, followed by 3 roots-followed users;
  // 14 = the impersonator, followed by a ring 15..2014 whose members all follow each other's neighbour and 14;
  // user 12 (ordinary, followed by a root) also follows one ring member.
  const n = 2015;
  const adj: number[][] = Array.from({ length: n }, () => []);
  for (const r of [0, 1, 2]) for (let u = 3; u <= 12; u++) adj[r]!.push(u);
  for (const u of [3, 4, 5]) adj[u]!.push(13);
  adj[12]!.push(15, 6, 7, 8);
  for (let s = 15; s < n; s++) adj[s]!.push(14, s + 1 < n ? s + 1 : 15, s + 2 < n ? s + 2 : 16);
  const got = await pageRank(n, rowsOf(adj), new Rows(), [0, 1, 2], P);
  assert.ok(got.score[13]! > got.score[14]!, `person ${got.score[13]} vs impersonator ${got.score[14]}`);
  assert.equal(got.followers[14], 2000);
  assert.equal(got.followers[13], 3);
  // in global mode the ring wins: the reason search hides nothing on a global rank (docs/trust.md)
  const global = await pageRank(n, rowsOf(adj), new Rows(), [], P);
  assert.ok(global.score[14]! > global.score[13]!);
});

test('pageRank: a mute by a root takes away about what its follow gives, one by an unknown key barely anything', async () => {
  const n = 6;
  const adj = [[2, 3], [2, 3], [], [], [], []];
  const mutesByRoot = new Rows();
  mutesByRoot.add(0, Uint32Array.from([3]));
  const byRoot = await pageRank(n, rowsOf(adj), mutesByRoot, [0, 1], P);
  // root 0 lists two follows and one mute: the mute takes d·r0/3 (its rank over the three entries),
  // its follow of 3 gave d·r0/2
  const none = await pageRank(n, rowsOf(adj), new Rows(), [0, 1], P);
  const want = none.score[3]! - (0.85 * none.score[0]!) / 3;
  assert.ok(Math.abs(byRoot.score[3]! - want) < 1e-9, `${byRoot.score[3]} vs ${want}`);
  assert.ok(byRoot.score[3]! < byRoot.score[2]! * 0.7, `${byRoot.score[3]} vs ${byRoot.score[2]}`);
  assert.equal(byRoot.mutes[3], 1);
  const mutesByStranger = new Rows();
  mutesByStranger.add(5, Uint32Array.from([3]));
  const byStranger = await pageRank(n, rowsOf(adj), mutesByStranger, [0, 1], P);
  assert.equal(byStranger.score[3], byStranger.score[2]);
});

test('PubkeyIds: dense ids, found again after growth', () => {
  const ids = new PubkeyIds();
  const keys = Array.from({ length: 5000 }, () => hex());
  keys.forEach((k, i) => assert.equal(ids.idOfHex(k, true), i));
  keys.forEach((k, i) => { assert.equal(ids.idOfHex(k, false), i); assert.equal(ids.hex(i), k); });
  assert.equal(ids.idOfHex(hex(), false), -1);
  assert.equal(ids.idOfHex('zz', true), -1);
});

test('rankPass: over stored lists, the person outranks the impersonator, mutes and followers are counted, and old ranks are pruned', async () => {
  await withStore(async (store) => {
    const roots = [hex(), hex()];
    const friends = Array.from({ length: 5 }, () => hex());
    const person = hex();
    const impersonator = hex();
    const ring = Array.from({ length: 300 }, () => hex());
    const muted = hex();
    for (const r of roots) await put(store, ev({ kind: 3, pubkey: r, tags: [...friends, muted].map((f) => ['p', f]) }));
    for (const f of friends.slice(0, 3)) await put(store, ev({ kind: 3, pubkey: f, tags: [['p', person], ['p', 'not hex']] }));
    await put(store, ev({ kind: 3, pubkey: friends[4]!, tags: [['p', ring[0]!]] }));
    for (let i = 0; i < ring.length; i++) await put(store, ev({ kind: 3, pubkey: ring[i]!, tags: [['p', impersonator], ['p', ring[(i + 1) % ring.length]!]] }));
    await put(store, ev({ kind: 10000, pubkey: roots[0]!, tags: [['p', muted]] }));
    const o = { ...P, iterations: 100, roots, hideBelow: 1 };
    const r = await rankPass(store.ranks, o);
    assert.equal(r.meta.mode, 'rooted');
    assert.equal(r.meta.roots, 2);
    const p = store.ranks.get(person)!;
    const imp = store.ranks.get(impersonator)!;
    assert.ok(p.score > imp.score, `${p.score} vs ${imp.score}`);
    assert.ok(p.rank >= imp.rank);
    assert.equal(p.followers, 3);
    assert.equal(imp.followers, 300);
    assert.equal(p.followers, await store.count([{ kinds: [3], tags: [['p', [person]]] }]));
    const m = store.ranks.get(muted)!;
    assert.equal(m.mutes, 1);
    assert.ok(m.score < store.ranks.get(friends[0]!)!.score * 0.7, 'a root\'s mute takes away what its follow gives');
    assert.equal(store.ranks.get(hex()), undefined);
    // a list replaced: the ring is gone from friends[4]'s follows; a pubkey in no list any more is pruned
    const lone = hex();
    await put(store, ev({ kind: 3, pubkey: friends[3]!, tags: [['p', lone]], created_at: 1_800_000_000 }));
    await rankPass(store.ranks, o);
    assert.ok(store.ranks.get(lone));
    await put(store, ev({ kind: 3, pubkey: friends[3]!, tags: [], created_at: 1_800_000_001 }));
    const r3 = await rankPass(store.ranks, o);
    assert.equal(r3.meta.generation, 3);
    assert.equal(store.ranks.get(lone), undefined);
    assert.equal(store.ranks.count(), r3.meta.nodes);
  });
});

test('RankStore.lists: every list once, in batches bounded by count and by tags', async () => {
  await withStore(async (store) => {
    const authors = Array.from({ length: 25 }, () => hex());
    for (const [i, a] of authors.entries()) await put(store, ev({ kind: 3, pubkey: a, tags: Array.from({ length: i % 7 }, () => ['p', hex()]) }));
    await put(store, ev({ kind: 1, tags: [['p', hex()]] }));
    for (const [batch, maxTargets] of [[500, 20_000], [4, 20_000], [500, 5], [1, 1], [3, 2]] as const) {
      const seen: string[] = [];
      let tags = 0;
      for await (const b of store.ranks.lists(3, batch, maxTargets)) {
        assert.ok(b.length <= batch);
        for (const l of b) { seen.push(l.author.toString('hex')); tags += l.targets.length; }
      }
      assert.deepEqual(seen.sort(), [...authors].sort(), `batch ${batch}, maxTargets ${maxTargets}`);
      assert.equal(tags, authors.reduce((n, _, i) => n + (i % 7), 0));
    }
  });
});

test('RankStore.prune: removes every entry of other generations across batches, keeps the current ones', async () => {
  await withStore(async (store) => {
    const rec = { score: 0.5, rank: 50, followers: 1, mutes: 0, trusted: 2.5, seen: 9 };
    const old = Array.from({ length: 57 }, () => Buffer.from(hex(), 'hex'));
    const cur = Array.from({ length: 43 }, () => Buffer.from(hex(), 'hex'));
    await store.ranks.putRanks(old.map((pubkey) => ({ pubkey, record: rec })), 6);
    await store.ranks.putRanks(cur.map((pubkey) => ({ pubkey, record: rec })), 7);
    let pauses = 0;
    assert.equal(await store.ranks.prune(7, async () => { pauses++; }, 10), 57);
    assert.ok(pauses >= 9);
    assert.equal(store.ranks.count(), 43);
    for (const k of cur) assert.deepEqual(store.ranks.get(k.toString('hex')), rec);
    for (const k of old) assert.equal(store.ranks.get(k.toString('hex')), undefined);
  });
});

test('rank values: trusted followers and first-seen order round-trip; a value written before them (21 bytes) reads without them', () => {
  const v = encodeRank({ score: 0.25, rank: 7, followers: 3, mutes: 1, trusted: 2.75, seen: 41 }, 5);
  assert.deepEqual(decodeRank(v), { score: 0.25, rank: 7, followers: 3, mutes: 1, trusted: 2.75, seen: 41 });
  assert.equal(rankTrustedOf(v), 2.75);
  assert.equal(rankSeenOf(v), 41);
  const old = v.subarray(0, 21);
  assert.deepEqual(decodeRank(old), { score: 0.25, rank: 7, followers: 3, mutes: 1 });
  assert.equal(rankTrustedOf(old), -1);
  assert.equal(rankSeenOf(old), -1);
});

test('trusted followers: each follower counts min(1, score x pubkeys); a follower the rank does not reach counts nothing', async () => {
  // 0 follows 2 and 3; 1 follows 3; 4 (unreached) follows 3
  const rows = rowsOf([[2, 3], [3], [], [], [3]]);
  const score = Float64Array.from([0.4, 0.1, 0.3, 0.2, 0]);
  const t = await trustedFollowers(5, rows, score);
  assert.deepEqual([...t], [0, 0, 1, 1 + 0.5, 0]);
});
