// The pure parts of live mode: which relays are chosen (write relays of the most weighted pubkeys,
// the general relays' share, exclusions, a trust weight), what a live event must be, and the
// bounds (token bucket, per-minute rate) that keep no record per event.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chooseLive, writeRelays } from '../../src/spider/live/select.js';
import { checkLiveEvent, MinuteRate } from '../../src/spider/live/check.js';
import { TokenBucket } from '../../src/lib/token-bucket.js';
import { directoryKinds, DEFINED_LISTS } from '../../src/spider/kinds.js';
import { keypair, sign } from '../fixtures/test-relay.js';
import { spiderConfig } from './harness.js';

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
