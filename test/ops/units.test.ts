// The pure parts of operating in public: CIDR matching, token buckets, relay URL normalisation,
// kind sets, the DM visibility rules and the exact COUNT rewrite, the scan guard.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CidrSet, parseIp } from '../../src/policy/cidr.js';
import { TokenBucket } from '../../src/lib/token-bucket.js';
import { RateLimiter } from '../../src/relay/ratelimit/limiter.js';
import { normaliseRelayUrl } from '../../src/relay/auth/nip42.js';
import { normaliseHttpUrl } from '../../src/relay/auth/nip98.js';
import { KindSet } from '../../src/policy/kinds.js';
import { kindOfJson, ProtectedKinds } from '../../src/relay/policy/read.js';
import { matchFilter, type Filter } from '../../src/nostr/filter.js';
import { configSchema } from '../../src/config.js';
import type { NostrEvent } from '../../src/nostr/event.js';

test('IPs and CIDR ranges, IPv4, IPv6 and IPv4-mapped', () => {
  assert.equal(parseIp('1.2.3.4'), parseIp('::ffff:1.2.3.4'));
  assert.equal(parseIp('::1'), 1n);
  assert.equal(parseIp('2001:db8::1'), parseIp('2001:0db8:0:0:0:0:0:1'));
  for (const bad of ['1.2.3', '256.1.1.1', '1::2::3', 'x', '1:2:3:4:5:6:7:8:9', '']) assert.equal(parseIp(bad), null, bad);
  const s = new CidrSet(['10.0.0.0/8', '2001:db8::/32', '127.0.0.2', '::1']);
  assert.ok(s.has('10.200.3.4'));
  assert.ok(s.has('::ffff:10.1.1.1'));
  assert.ok(!s.has('11.0.0.1'));
  assert.ok(s.has('2001:db8:ffff::5'));
  assert.ok(!s.has('2001:db9::5'));
  assert.ok(s.has('127.0.0.2'));
  assert.ok(!s.has('127.0.0.1'));
  assert.ok(s.has('::1'));
  assert.ok(!s.add('10.0.0.0/33'));
  assert.ok(s.remove('127.0.0.2'));
  assert.ok(!s.has('127.0.0.2'));
  assert.ok(new CidrSet(['0.0.0.0/0']).has('8.8.8.8'));
});

test('token buckets refill at their rate up to their capacity; the limiter keeps IPs, connections and pubkeys apart', () => {
  const b = new TokenBucket(2, 4, 0);
  for (let i = 0; i < 4; i++) assert.ok(b.take(0));
  assert.ok(!b.take(0));
  assert.ok(b.take(500)); // one token after 0.5 s at 2/s
  assert.ok(!b.take(500));
  let t = 0;
  const cfg = configSchema.parse({ rateLimits: { perIp: { event: 1 }, perConnection: { req: 1 }, perPubkey: { count: 1 }, burstSeconds: 2 } }).rateLimits;
  const lim = new RateLimiter(cfg, () => t);
  const c1 = {}, c2 = {};
  const none = new Set<string>();
  assert.equal(lim.check('EVENT', { ip: 'a', conn: c1, authed: none }), null);
  assert.equal(lim.check('EVENT', { ip: 'a', conn: c2, authed: none }), null);
  assert.match(lim.check('EVENT', { ip: 'a', conn: c1, authed: none })!, /^rate-limited: .*IP/);
  assert.equal(lim.check('EVENT', { ip: 'b', conn: c1, authed: none }), null, 'another IP has its own bucket');
  assert.equal(lim.check('REQ', { ip: 'a', conn: c1, authed: none }), null, 'REQ is counted apart from EVENT');
  lim.check('REQ', { ip: 'a', conn: c1, authed: none });
  assert.match(lim.check('REQ', { ip: 'a', conn: c1, authed: none })!, /connection/);
  assert.equal(lim.check('REQ', { ip: 'a', conn: c2, authed: none }), null);
  const pk = new Set(['p1']);
  lim.check('COUNT', { ip: 'x', conn: c1, authed: pk });
  lim.check('COUNT', { ip: 'y', conn: c2, authed: pk });
  assert.match(lim.check('COUNT', { ip: 'z', conn: {}, authed: pk })!, /pubkey/);
  t += 1000;
  assert.equal(lim.check('COUNT', { ip: 'z', conn: {}, authed: pk }), null, 'refilled');
});

test('relay URLs compare without case, default ports or trailing slashes', () => {
  assert.equal(normaliseRelayUrl('wss://Relay.Example.COM/'), 'wss://relay.example.com');
  assert.equal(normaliseRelayUrl('wss://relay.example.com:443'), 'wss://relay.example.com');
  assert.equal(normaliseRelayUrl('ws://127.0.0.1:7447/'), 'ws://127.0.0.1:7447');
  assert.notEqual(normaliseRelayUrl('wss://relay.example.com/a'), normaliseRelayUrl('wss://relay.example.com'));
  assert.equal(normaliseHttpUrl('wss://Relay.example.com/'), 'https://relay.example.com');
  assert.equal(normaliseHttpUrl('http://h:80/'), 'http://h');
});

test('kind sets take numbers and ranges', () => {
  const k = new KindSet([1, '7', '30000-39999']);
  assert.ok(k.has(1) && k.has(7) && k.has(30023) && !k.has(2) && !k.has(40000));
  assert.throws(() => new KindSet(['9-3']));
});

const ev = (kind: number, pubkey: string, p: string[] = [], id = 'i'.repeat(64)): NostrEvent =>
  ({ id, pubkey, created_at: 1, kind, tags: p.map((x) => ['p', x]), content: '', sig: '' });

test('DM visibility, the filter refusal and the exact COUNT rewrite', async () => {
  const pk = new ProtectedKinds([4, 1059]);
  const A = 'a'.repeat(64), B = 'b'.repeat(64), C = 'c'.repeat(64);
  assert.ok(pk.canSee(ev(1, A), new Set()));
  assert.ok(!pk.canSee(ev(4, A, [B]), new Set()));
  assert.ok(pk.canSee(ev(4, A, [B]), new Set([B])));
  assert.ok(pk.canSee(ev(4, A, [B]), new Set([A])));
  assert.ok(!pk.canSee(ev(4, A, [B]), new Set([C])));
  assert.equal(kindOfJson(JSON.stringify(ev(1059, A))), 1059);
  assert.equal(kindOfJson(JSON.stringify({ id: 'x', content: '"kind":5' }).replace('"id"', '"kind":7,"id"')), 7);
  const reject = pk.rejectFilter();
  assert.match(reject([{ kinds: [4] }], { verb: 'REQ' })!, /^auth-required: /);
  assert.match(reject([{ kinds: [4] }], { verb: 'REQ', authed: new Set([C]) })!, /^restricted: /);
  assert.equal(reject([{ kinds: [4], '#p': undefined, tags: [['p', [C]]] } as Filter], { verb: 'REQ', authed: new Set([C]) }), null);
  assert.equal(reject([{ kinds: [1, 4] }], { verb: 'REQ' }), null, 'mixed kinds are filtered event by event');

  // COUNT over a store of these events, reader C: C sees the DM to C and the DM by C, not the DM A->B
  const store = [ev(1, A, [], '1'.repeat(64)), ev(4, A, [B], '2'.repeat(64)), ev(4, A, [C], '3'.repeat(64)), ev(4, C, [A], '4'.repeat(64)), ev(1059, B, [C], '5'.repeat(64)), ev(7, C, [], '6'.repeat(64))];
  const count = async (fs: Filter[]) => ({ count: store.filter((e) => fs.some((f) => matchFilter(f, e))).length });
  const reader = new Set([C]);
  const visible = (fs: Filter[]) => store.filter((e) => fs.some((f) => matchFilter(f, e)) && pk.canSee(e, reader)).length;
  for (const fs of [[{}], [{ authors: [A] }], [{ kinds: [1, 4] }], [{ kinds: [4], authors: [A, C] }], [{ authors: [A] }, { kinds: [1059] }], [{ tags: [['p', [C, B]]] }] as Filter[]] as Filter[][]) {
    assert.equal((await pk.count(fs, reader, count)).count, visible(fs), JSON.stringify(fs));
    assert.equal((await pk.count(fs, new Set(), count)).count, store.filter((e) => fs.some((f) => matchFilter(f, e)) && pk.canSee(e, new Set())).length);
  }
});
