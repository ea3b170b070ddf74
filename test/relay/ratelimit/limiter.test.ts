// Token buckets (src/lib/token-bucket.ts) and the rate limiter over them (src/relay/ratelimit/limiter.ts),
// with a clock of the test's own.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TokenBucket } from '../../../src/lib/token-bucket.js';
import { RateLimiter } from '../../../src/relay/ratelimit/limiter.js';
import { configSchema } from '../../../src/config.js';

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
