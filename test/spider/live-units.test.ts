// The pure parts of live mode: which relays are chosen (write relays of the most weighted pubkeys,
// the general relays' share, exclusions, a trust weight, the hop bound), what a live event must be,
// and the bounds (token bucket, per-minute rate) that keep no record per event.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chooseLive, writeRelays } from '../../src/spider/live/select.js';
import { beyondMaxHop, crawlHop, withinMaxHop } from '../../src/spider/live/hop.js';
import { checkLiveEvent, MinuteRate } from '../../src/spider/live/check.js';
import { TokenBucket } from '../../src/lib/token-bucket.js';
import { directoryKinds, DEFINED_LISTS } from '../../src/spider/kinds.js';
import { keypair, sign } from '../fixtures/test-relay.js';
import { spiderConfig } from './harness.js';
import { configSchema, envTable } from '../../src/config.js';

test('write relays: r tags without a marker or marked write, normalised, absurd lists ignored', () => {
  assert.deepEqual(writeRelays([['r', 'wss://a.example/'], ['r', 'wss://b.example', 'read'], ['r', 'wss://c.example', 'write'], ['p', 'x']], 10), ['wss://a.example', 'wss://c.example']);
  assert.equal(writeRelays(Array.from({ length: 11 }, (_, i) => ['r', `wss://r${i}.example`]), 10), null);
});

test('the live choice: general relays take their share first, then the write relays of the most (weighted) pubkeys', () => {
  const writeScores = new Map([['wss://w1', 10], ['wss://w2', 30], ['wss://w3', 20], ['wss://self', 99]]);
  const general = [{ url: 'wss://g1', stored: 500 }, { url: 'wss://g2', stored: 900 }, { url: 'wss://w2', stored: 1 }, { url: 'wss://never', stored: 0 }];
  const excluded = (u: string) => u === 'wss://self';
  const chosen = chooseLive({ writeScores, general, max: 4, generalShare: 25, excluded });
  assert.deepEqual(chosen.map((c) => c.url), ['wss://g2', 'wss://w2', 'wss://w3', 'wss://w1']);
  // a list short of candidates leaves its places to the other
  assert.deepEqual(chooseLive({ writeScores: new Map(), general, max: 4, generalShare: 25, excluded }).map((c) => c.url), ['wss://g2', 'wss://g1', 'wss://w2']);
  assert.equal(chooseLive({ writeScores, general, max: 0, generalShare: 25, excluded }).length, 0);
});

test('a live relay\'s hop: the crawl\'s, or none; live.maxHop keeps relays of a known hop within it, none beyond', () => {
  assert.equal(crawlHop({ hop: 0 }), 0);
  assert.equal(crawlHop({ hop: 3 }), 3);
  assert.equal(crawlHop(undefined), null, 'no record: named only by lists beyond spider.hops, or stored another way');
  assert.equal(crawlHop({ hop: -1 }), null, 'the monitor\'s finder added it: no crawl placed it');
  for (const hop of [0, 5, null]) assert.equal(beyondMaxHop(hop, -1), false, 'no bound by default');
  assert.deepEqual([0, 1, 2, null].map((h) => beyondMaxHop(h, 1)), [false, false, true, true]);
  assert.deepEqual([0, 1, null].map((h) => beyondMaxHop(h, 0)), [false, true, true]);

  // hops = 1: the seed's relay (hop 0), the one its lists named (hop 1), one named only by lists
  // fetched at hop 1 (no record), one the finder added (hop -1); the unplaced relay has the most writers
  const records = new Map([['wss://h0', { hop: 0 }], ['wss://h1', { hop: 1 }], ['wss://found', { hop: -1 }], ['wss://self', { hop: 0 }]]);
  const directory = { get: (u: string) => records.get(u) as never };
  const writeScores = new Map([['wss://beyond', 90], ['wss://found', 50], ['wss://h1', 30], ['wss://h0', 20], ['wss://self', 99]]);
  const general = [{ url: 'wss://h0', stored: 900 }];
  const unsafe = (u: string) => u === 'wss://self';
  const choose = (maxHop: number) => chooseLive({ writeScores, general, max: 10, generalShare: 20, excluded: withinMaxHop(unsafe, directory, maxHop) }).map((c) => c.url);
  assert.deepEqual(choose(-1), ['wss://h0', 'wss://beyond', 'wss://found', 'wss://h1'], 'the default: where the most pubkeys write, whatever the hop');
  assert.deepEqual(choose(1), ['wss://h0', 'wss://h1'], 'bounded: only what the crawl found within the bound');
  assert.deepEqual(choose(0), ['wss://h0']);
  assert.equal(withinMaxHop(unsafe, directory, 1)('wss://self'), true, 'the other exclusions hold within the bound');
  assert.equal(withinMaxHop(unsafe, directory, -1), unsafe, 'no bound: the exclusions as they are');
});

test('live.maxHop: unbounded by default, and `orbweaver config --env` says live mode may reach past spider.hops', () => {
  assert.equal(spiderConfig().live.maxHop, -1);
  const line = envTable(configSchema).find((l) => l.startsWith('ORBWEAVER_SPIDER_LIVE_MAX_HOP='));
  assert.match(line ?? '', /^ORBWEAVER_SPIDER_LIVE_MAX_HOP=-1 {2}# spider\.live\.maxHop: .*-1 = no bound.*past spider\.hops/);
  assert.throws(() => spiderConfig({ live: { maxHop: -2 } }));
});

test('live events: not an event, outside the filter or far ahead are faults; the rest passes', () => {
  const { sk } = keypair();
  const now = Math.floor(Date.now() / 1000);
  const f = { kinds: [0, 10002], since: now - 10 };
  const ok = sign(sk, 0, now);
  assert.equal(checkLiveEvent(ok, 300, f, now, 900, 65536).ev, ok);
  assert.equal(checkLiveEvent({ id: 'x' }, 20, f, now, 900, 65536).fault, 'shape');
  assert.equal(checkLiveEvent(sign(sk, 1, now), 300, f, now, 900, 65536).fault, 'mismatch');
  assert.equal(checkLiveEvent(sign(sk, 0, now - 100), 300, f, now, 900, 65536).fault, 'mismatch');
  assert.equal(checkLiveEvent(sign(sk, 0, now + 901), 300, f, now, 900, 65536).fault, 'future');
  assert.equal(checkLiveEvent(undefined, 100_000, f, now, 900, 65536).fault, 'oversized');
});

test('bounds keep a few numbers, not a record per event', () => {
  // a live remote's event budget: the one token bucket (lib/token-bucket.ts)
  const b = new TokenBucket(5, 50, 0);
  let taken = 0;
  for (let i = 0; i < 100; i++) if (b.take(0, 1)) taken++;
  assert.equal(taken, 50, 'a burst of 10 s worth, then refused');
  assert.ok(b.take(1000, 5), 'refilled at the rate');
  assert.ok(!b.take(1000, 1));
  const r = new MinuteRate();
  for (let i = 0; i < 30; i++) r.add(60_000 * 10 + i);
  assert.equal(r.perMinute(60_000 * 10 + 100), 30);
  assert.equal(r.perMinute(60_000 * 12), 0, 'an idle minute forgets');
});

test('directory kinds: the relay-list family by default, the NIP-defined lists on request', () => {
  const d = directoryKinds(spiderConfig());
  for (const k of [0, 3, 10000, 10002, 10050, 10007, 10006, 10063, 10019]) assert.ok(d.includes(k), `kind ${k} by default`);
  assert.ok(!d.includes(10030));
  const all = directoryKinds(spiderConfig({ allLists: true }));
  for (const k of DEFINED_LISTS) assert.ok(all.includes(k));
});
