// The pure parts behind the status page: the sampler's rates, series and latency percentiles, the
// refusal counts, and the relay directory rows (states, next attempt, quirks in words).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Sampler } from '../../src/relay/dashboard/sampler.js';
import { RefusalLog } from '../../src/relay/policy/refusals.js';
import { Histogram } from '../../src/relay/metrics.js';
import { directoryView, formatDirectory, quirkWords } from '../../src/directory/view.js';
import type { RelayRecord } from '../../src/directory/records.js';
import { zeroCounts } from '../../src/directory/types.js';

test('sampler: per-second rates per step, gauges as sampled, latency mean and p95 from the histogram', () => {
  let stored = 0;
  let conns = 0;
  const h = new Histogram('q', 'q', [0.001, 0.01, 0.1]);
  const t0 = 1_000_000;
  const realNow = Date.now;
  Date.now = () => t0;
  try {
    const s = new Sampler({ counters: { stored: () => stored }, gauges: { connections: () => conns }, histograms: { query: () => h.snapshot() } }, 10_000, 3);
    stored = 50; conns = 2;
    for (let i = 0; i < 19; i++) h.observe(0.0005);
    h.observe(0.05);
    s.sample(t0 + 10_000);
    stored = 50; conns = 1;
    s.sample(t0 + 20_000);
    const ser = s.series(t0 + 20_500); // the partial last step is under a second: left out
    assert.deepEqual(ser.t, [t0 / 1000 + 10, t0 / 1000 + 20]);
    assert.deepEqual(ser.stored, [5, 0]);
    assert.deepEqual(ser.connections, [2, 1]);
    assert.equal((ser.queryMs as number[])[0], 2.975, 'mean (19 x 0.5 ms + 50 ms) / 20');
    assert.equal((ser.queryP95Ms as number[])[0], 1, '95% of the observations are at most 1 ms');
    // latency: each point covers the minute ending at it, as the card does
    assert.equal(ser.latencyWindowSeconds, 60);
    assert.equal((ser.queryMs as Array<number | null>)[1], 2.975, 'the minute ending at the second step still holds the queries');
    // the card (window) and the chart's last point: one definition, the same figures
    for (const at of [t0 + 20_500, t0 + 25_000]) {
      const card = s.window(at);
      const chart = s.series(at);
      assert.deepEqual([card.mean.query, card.p95.query], [(chart.queryMs as number[]).at(-1), (chart.queryP95Ms as number[]).at(-1)], `card and chart at +${at - t0} ms`);
    }
    stored = 80;
    const w = s.window(t0 + 30_000, 20_000);
    assert.equal(w.seconds, 20);
    assert.equal(w.rates.stored, 1.5, '(80 - 50) / 20 s');
    assert.equal(w.mean.query, null);
    // the ring keeps `keep` steps
    for (let i = 3; i < 10; i++) s.sample(t0 + i * 10_000);
    assert.equal(s.series(t0 + 90_000).t.length, 3);
  } finally {
    Date.now = realNow;
  }
});

test('refusals: counted once by NIP-01 reason word and by verb', () => {
  const r = new RefusalLog();
  r.add('EVENT', 'invalid: bad signature', '1.2.3.4');
  r.add('EVENT', 'blocked: older version', '1.2.3.4');
  r.add('REQ', 'invalid: more than 20 filters');
  r.add('CONNECT', 'rate-limited: too many connections');
  r.add('EVENT', 'something without a prefix');
  const s = r.snapshot();
  assert.equal(s.total, 5);
  assert.equal(r.count('EVENT'), 3);
  assert.deepEqual(s.verbs, ['EVENT', 'REQ', 'CONNECT']);
  assert.deepEqual(s.byReason.find((x) => x.reason === 'invalid'), { reason: 'invalid', total: 2, byVerb: { EVENT: 1, REQ: 1 } });
  assert.equal(s.byReason.find((x) => x.reason === 'error')?.total, 1, 'no prefix counts as error');
  assert.equal(s.recent[0].message, 'something without a prefix', 'newest first');
  // the public snapshot names no client, it counts them (1.2.3.4 twice is one); the operator's view names them
  assert.ok(s.recent.every((x) => !('ip' in x)), JSON.stringify(s.recent));
  assert.equal(s.recentAddresses, 1);
  r.add('EVENT', 'invalid: x', '2001:db8::1');
  r.add('EVENT', 'invalid: y', '2001:db8::2');
  assert.equal(r.snapshot().recentAddresses, 2, 'an IPv6 /64 is one client');
  assert.deepEqual(r.addressed().map((x) => x.ip), ['2001:db8::2', '2001:db8::1', '', '', '', '1.2.3.4', '1.2.3.4']);
});

function rec(over: Partial<RelayRecord>): RelayRecord {
  return { url: 'wss://x', hop: 0, referrers: [], mentions: 1, firstSeen: 1, lastSeen: 1, failures: 0, quirks: {}, cursors: {}, links: {}, storedTotal: 0, ...over };
}

test('directory rows: state, next attempt, last counts and quirks in words', () => {
  const now = 10 * 86_400_000;
  const backoff = { base: 86_400_000, max: 30 * 86_400_000 };
  const v = directoryView([
    rec({ url: 'wss://b.example', hop: 1 }),
    rec({ url: 'wss://a.example', lastAttempt: now - 1000, lastOutcome: 'ok', lastCounts: { ...zeroCounts(), fetched: 7, stored: 3 }, quirks: { cap: 500, bounds: 'exclusive', noEose: true } }),
    rec({ url: 'wss://c.example', lastAttempt: now - 1000, lastOutcome: 'failed', failures: 1, lastError: 'connect refused' }),
    rec({ url: 'wss://d.example', lastAttempt: now - 1000, lastOutcome: 'failed', failures: 3, lastError: 'timeout' }),
    rec({ url: 'wss://e.example', lastAttempt: now - 1000, lastOutcome: 'ok' }),
  ], { now, backoff, crawling: ['wss://e.example'], nextRun: now + 3_600_000 });
  const by = Object.fromEntries(v.rows.map((r) => [r.url, r]));
  assert.deepEqual(v.rows.map((r) => r.url), ['wss://a.example', 'wss://c.example', 'wss://d.example', 'wss://e.example', 'wss://b.example'], 'by hop, then URL');
  assert.equal(by['wss://b.example'].state, 'new');
  assert.equal(by['wss://a.example'].state, 'ok');
  assert.equal(by['wss://a.example'].fetched, 7);
  assert.deepEqual(by['wss://a.example'].quirks, ['cap 500', 'exclusive since/until', 'no EOSE']);
  assert.equal(by['wss://c.example'].state, 'failed', 'one failure: tried again next run');
  assert.equal(by['wss://c.example'].nextAttempt, now + 3_600_000);
  assert.equal(by['wss://d.example'].state, 'backoff');
  assert.equal(by['wss://d.example'].nextAttempt, now - 1000 + 2 * 86_400_000, 'base doubled for the third failure');
  assert.equal(by['wss://e.example'].state, 'crawling');
  assert.equal(by['wss://b.example'].fetched, null);
  assert.deepEqual(v.byState, { crawling: 1, ok: 1, partial: 0, new: 1, failed: 1, backoff: 1, refused: 0, self: 0 });
  assert.match(formatDirectory(v), /wss:\/\/d\.example +1?0? *backoff/);
  assert.match(formatDirectory(v), /5 relays: .*\(times in UTC\)/);
  // 100 columns whatever the rows hold: a long URL gets a line of its own, whole; errors are not in the table
  const longUrl = 'wss://' + 'a-very-long-relay-host-name.'.repeat(2) + 'example/with/a/path';
  const wide = directoryView([
    rec({ url: longUrl, lastAttempt: now - 1000, lastOutcome: 'failed', failures: 1, lastError: 'x'.repeat(300), quirks: { cap: 500, bounds: 'exclusive', noEose: true, rateLimited: 12 } }),
    rec({ url: 'wss://short.example', lastAttempt: now - 1000, lastOutcome: 'ok', lastCounts: { ...zeroCounts(), fetched: 1_234_567, stored: 1_000_000 } }),
  ], { now, backoff });
  const text = formatDirectory(wide);
  for (const line of text.split('\n')) assert.ok(line.length <= 100, `${line.length} columns: ${line}`);
  assert.ok(text.split('\n').includes(longUrl), 'the long URL whole, on its own line');
  assert.match(text, /^wss:\/\/short\.example +0 +ok +\d\d-\d\d \d\d:\d\d +1234567 +1000000/m);
  assert.doesNotMatch(text, /xxxxxxxx/);
  assert.deepEqual(quirkWords({ authRequired: true, rateLimited: 3, invalid: 2, flooded: true, maxLimit: 100 }), ['limit ≤ 100', 'auth required', 'rate-limited ×3', '2 invalid', 'floods']);
});
