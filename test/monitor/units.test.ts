// The monitor's pure parts against hand-computed figures: what each finder source yields, the
// NIP-66 templates, uptime and RTT percentiles from snapshots, and the summary views over rows.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { relaysNamedBy } from '../../src/directory/finder.js';
import { finalizeEvent, generateSecretKey, getPublicKey } from 'nostr-tools/pure';
import { announcementEvent, discoveryAddress, discoveryEvent, monitorProfile, monitorRelayList, networkOf, refusalRequirement, requirements, retractionEvent, wholeMs, type EventTemplate } from '../../src/monitor/nip66.js';
import { nip66Problems, type SignedEvent } from './nip66-validator.js';
import { dailyUptime, percentile, relayStats, DAY } from '../../src/monitor/stats.js';
import { directorySummary, directoryView, type RelayHealth } from '../../src/directory/view.js';
import type { RelayRecord } from '../../src/directory/records.js';
import type { RelayCheck, Snapshot } from '../../src/monitor/types.js';

const ev = (kind: number, tags: string[][] = [], content = '', pubkey = 'a'.repeat(64)) => ({ kind, tags, content, pubkey });

test('finder sources: kind 3 content, kind 2 content, r tags of the chosen kinds, other monitors\' 30166', () => {
  const o = { rKinds: [2, 3, 10002], selfPubkey: 'f'.repeat(64) };
  assert.deepEqual(relaysNamedBy(ev(3, [['p', 'x'], ['r', 'wss://r3.example']], JSON.stringify({ 'wss://A.example/': { read: true }, 'https://no.example': {}, 'wss://b.example': {} })), o), [
    { url: 'wss://a.example', source: 'kind 3 content' },
    { url: 'wss://b.example', source: 'kind 3 content' },
    { url: 'wss://r3.example', source: 'r tag of kind 3' },
  ]);
  assert.deepEqual(relaysNamedBy(ev(2, [], 'wss://two.example'), o), [{ url: 'wss://two.example', source: 'kind 2 content' }]);
  assert.deepEqual(relaysNamedBy(ev(10002, [['r', 'wss://x.example', 'read'], ['r', 'wss://x.example/'], ['r', 'nonsense']]), o), [{ url: 'wss://x.example', source: 'r tag of kind 10002' }]);
  assert.deepEqual(relaysNamedBy(ev(1, [['r', 'wss://note.example']]), o), [], 'kind 1 is not among the r-tag kinds');
  assert.deepEqual(relaysNamedBy(ev(1, [['r', 'wss://note.example']]), { rKinds: [1] }), [{ url: 'wss://note.example', source: 'r tag of kind 1' }]);
  assert.deepEqual(relaysNamedBy(ev(30166, [['d', 'wss://seen.example'], ['n', 'clearnet']]), o), [{ url: 'wss://seen.example', source: 'NIP-66 30166' }]);
  assert.deepEqual(relaysNamedBy(ev(30166, [['d', 'wss://mine.example']], '', 'f'.repeat(64)), o), [], 'our own 30166 are no news');
  assert.deepEqual(relaysNamedBy(ev(30166, [['d', 'wss://Slash.example/']]), o), [{ url: 'wss://slash.example', source: 'NIP-66 30166' }], 'd in RFC 3986 form: the directory\'s spelling');
  assert.deepEqual(relaysNamedBy(ev(30166, [['d', 'c'.repeat(64)]]), o), [], 'a relay named by its pubkey (NIP-66: not reachable by URL) is nothing to check');
  assert.deepEqual(relaysNamedBy(ev(3, [], '{not json'), o), []);
  const absurd = Object.fromEntries(Array.from({ length: 201 }, (_, i) => [`wss://r${i}.example`, {}]));
  assert.deepEqual(relaysNamedBy(ev(3, [], JSON.stringify(absurd)), o), [], 'absurd maps are ignored');
});

const sk = generateSecretKey();
const signed = (t: EventTemplate) => finalizeEvent(t, sk) as SignedEvent;

test('NIP-66 templates: 30166 tags from a check, 10166 frequency, timeouts and checks; each valid per the NIP text', () => {
  const c: RelayCheck = {
    url: 'wss://relay.example', checkedAt: 1_700_000_000_000, network: 'clearnet', online: true,
    rtt: { open: 12, read: 7, write: 30, nip11: 5 }, answer: 'eose',
    nip11: { name: 'R', software: 'git+https://github.com/hoytech/strfry.git', version: '1.0.4', supported_nips: [11, 1, 50, 1], limitation: { auth_required: false, payment_required: true, min_pow_difficulty: 0 }, tags: ['Cats', 'cats', 'sfw-only'] },
    nip11Json: '{"name":"R"}', ssl: { valid: true, expires: 1_800_000_000, issuer: "Let's Encrypt" }, observed: { auth: 'auth-required: sign in' },
    acceptedKinds: [10166],
  };
  const t = discoveryEvent(c, 1_700_000_000);
  assert.equal(t.kind, 30166);
  assert.equal(t.content, '{"name":"R"}');
  // no `s` (software: in the content) and no `l` (gone from NIP-66); `k` from the write test; `t` lower-cased, once
  assert.deepEqual(t.tags, [
    ['d', 'wss://relay.example/'], ['n', 'clearnet'], ['rtt-open', '12'], ['rtt-read', '7'], ['rtt-write', '30'],
    ['N', '1'], ['N', '11'], ['N', '50'],
    ['R', 'auth'], ['R', 'payment'], ['R', '!pow'],
    ['T', 'Search'], ['k', '10166'], ['t', 'cats'], ['t', 'sfw-only'],
    ['ssl', 'valid'], ['ssl-expires', '1800000000'], ['ssl-issuer', "Let's Encrypt"],
  ]);
  assert.deepEqual(nip66Problems(signed(t)), []);
  // d in RFC 3986's normal form: a URL without a path gets "/", one with a path is kept
  assert.deepEqual(['wss://relay.example', 'ws://127.0.0.1:7000', 'wss://[::1]:7000', 'wss://relay.example/inbox', 'wss://relay.example/a/b'].map(discoveryAddress),
    ['wss://relay.example/', 'ws://127.0.0.1:7000/', 'wss://[::1]:7000/', 'wss://relay.example/inbox', 'wss://relay.example/a/b']);
  const offlineLike: RelayCheck = { url: 'ws://abc.onion', checkedAt: 1, network: 'tor', online: true, rtt: {}, nip11: null, observed: {} };
  assert.deepEqual(discoveryEvent(offlineLike, 2).tags, [['d', 'ws://abc.onion/'], ['n', 'tor']], 'no document, nothing measured: d and n only');
  assert.deepEqual(nip66Problems(signed(discoveryEvent(offlineLike, 2))), []);
  // the retraction of a 30166 published under the older d, and the companions of the announcement
  const pk = getPublicKey(sk);
  const r = retractionEvent({ pubkey: pk, oldAddress: 'wss://relay.example', id: 'e'.repeat(64) }, 5);
  assert.deepEqual([r.kind, r.tags], [5, [['e', 'e'.repeat(64)], ['a', `30166:${pk}:wss://relay.example`], ['k', '30166']]]);
  for (const x of [r, monitorProfile({ relayName: 'Home', relayUrl: 'wss://home.example' }, 5), monitorRelayList(['wss://home.example', 'wss://m.example'], 5)]) assert.deepEqual(nip66Problems(signed(x)), [], JSON.stringify(x));
  assert.deepEqual(requirements(null, { writes: 'restricted: no' }), ['writes']);
  assert.deepEqual(requirements({ limitation: { auth_required: false, payment_required: false, restricted_writes: false } }, {}), ['!auth', '!payment', '!writes'], 'the claims stand where no refusal contradicts them');
  // what a refusal shows, by its prefix and what was refused
  const shows = (m: string, of: 'read' | 'write') => refusalRequirement(m, of);
  assert.deepEqual(['auth-required: x', 'payment-required: x', 'restricted: x', 'blocked: x', 'pow: x', 'rate-limited: x', 'invalid: x', 'error: x', 'payment: x', ''].map((m) => shows(m, 'write')),
    ['auth', 'payment', 'writes', 'writes', 'pow', null, null, null, null, null]);
  assert.deepEqual(['auth-required: x', 'payment-required: x', 'restricted: x', 'blocked: x', 'pow: x'].map((m) => shows(m, 'read')),
    ['auth', 'payment', null, null, null], 'a read refused restricted: says nothing of writes');
  assert.equal(wholeMs(0.2), 1, 'a loopback answer is 1 ms, never 0');
  assert.equal(wholeMs(12.01), 13);
  assert.deepEqual(networkOf('ws://abc.onion'), 'tor');
  assert.deepEqual(networkOf('wss://x.i2p/path'), 'i2p');
  assert.deepEqual(networkOf('wss://relay.example'), 'clearnet');
  const a = announcementEvent({ intervalMs: 3_600_000, timeoutMs: 10_000, write: false }, 5);
  assert.equal(a.kind, 10166);
  assert.deepEqual(a.tags, [
    ['frequency', '3600'],
    ['timeout', 'nip11', '10000'], ['timeout', 'ssl', '10000'], ['timeout', 'open', '10000'], ['timeout', 'read', '10000'],
    ['c', 'nip11'], ['c', 'ssl'], ['c', 'open'], ['c', 'read'],
  ]);
  assert.ok(announcementEvent({ intervalMs: 1000, timeoutMs: 1, write: true }, 5).tags.some((x) => x[0] === 'c' && x[1] === 'write'));
  for (const o of [{ write: false }, { write: true, probes: true }]) assert.deepEqual(nip66Problems(signed(announcementEvent({ intervalMs: 3_600_000, timeoutMs: 10_000, ...o }, 5))), []);
});

const NOW = Date.UTC(2026, 10, 20, 12, 0, 0);
const H = 3_600_000;
const SNAPS: Snapshot[] = [
  { t: NOW - 31 * DAY, on: true, o: 999, r: 999 }, // outside the month
  { t: NOW - 8 * DAY, on: false },
  { t: NOW - 3 * DAY, on: true, o: 50 },
  { t: NOW - 25 * H, on: true, o: 30, r: 40 },
  { t: NOW - 2 * H, on: false, e: 'open: connection refused' },
  { t: NOW - 30 * 60_000, on: true, o: 10, r: 20 },
];

test('uptime and RTT percentiles from snapshots, by hand', () => {
  const s = relayStats(SNAPS, NOW);
  assert.equal(s.uptimeDay, 1 / 2, 'last day: online at -30 min, offline at -2 h');
  assert.equal(s.uptimeWeek, 3 / 4, 'last week: -30 min, -2 h, -25 h, -3 d');
  assert.equal(s.uptimeMonth, 3 / 5, 'last 30 days: the -8 d check too, not the -31 d one');
  assert.equal(s.checks, 5);
  assert.deepEqual(s.rttOpen, { p50: 30, p90: 50, p99: 50, n: 3 }, 'nearest rank over 10, 30, 50');
  assert.deepEqual(s.rttRead, { p50: 20, p90: 40, p99: 40, n: 2 });
  assert.equal(percentile([], 50), null);
  assert.equal(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 90), 9);
  assert.equal(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 99), 10);
  const days = dailyUptime(SNAPS, NOW, 30);
  assert.equal(days.length, 30);
  assert.deepEqual(days.at(-1), { day: Date.UTC(2026, 10, 20), checks: 2, online: 1 });
  assert.deepEqual(days.at(-2), { day: Date.UTC(2026, 10, 19), checks: 1, online: 1 });
  assert.equal(days.reduce((a, d) => a + d.checks, 0), 5);
  assert.equal(relayStats([], NOW).uptimeDay, null);
});

const rec = (url: string, hop = 0): RelayRecord => ({ url, hop, referrers: [], mentions: 1, firstSeen: NOW - DAY, lastSeen: NOW - DAY, failures: 0, quirks: {}, cursors: {}, links: {}, storedTotal: 0 });
const health = (h: Partial<RelayHealth>): RelayHealth => ({
  checkedAt: NOW - 60_000, online: true, lastOnline: NOW - 60_000, network: 'clearnet', rtt: {}, name: null, software: null, version: null,
  nips: [], requirements: [], types: [], ssl: null, error: null, uptimeDay: null, uptimeWeek: null, uptimeMonth: null,
  rttOpen: { p50: null, p90: null }, rttRead: { p50: null, p90: null }, ...h,
});

test('views: online now / 24 h / 7 d, by network, software and version, NIP — by hand', () => {
  const hs: Record<string, RelayHealth> = {
    'wss://a.example': health({ software: 'strfry', version: '1.0', nips: [1, 11], rtt: { open: 5, read: 3 }, uptimeWeek: 1 }),
    'wss://b.example': health({ online: false, lastOnline: NOW - 2 * H, software: 'strfry', version: '1.0', nips: [1], error: 'open: timeout' }),
    'wss://c.onion': health({ online: false, lastOnline: NOW - 3 * DAY, network: 'tor', software: 'nostr-rs-relay', version: '0.9', nips: [1, 50] }),
    'wss://e.example': health({ online: false, lastOnline: null, software: null, nips: [] }),
  };
  const v = directoryView([rec('wss://a.example'), rec('wss://b.example', 1), rec('wss://c.onion', -1), rec('wss://d.example'), rec('wss://e.example')], {
    now: NOW, backoff: { base: DAY, max: 30 * DAY }, health: (u) => hs[u], eventsByKind: (u) => (u === 'wss://a.example' ? { '0': 4, '3': 2 } : undefined),
  });
  const s = directorySummary(v.rows, NOW);
  assert.deepEqual(s, v.summary);
  assert.equal(s.checked, 4);
  assert.deepEqual(s.online, { now: 1, day: 2, week: 3 });
  assert.deepEqual(s.byNetwork, { clearnet: 3, tor: 1 });
  assert.deepEqual(s.bySoftware, [
    { software: 'strfry', version: '1.0', relays: 2, online: 1 },
    { software: 'nostr-rs-relay', version: '0.9', relays: 1, online: 0 },
    { software: 'unknown', version: null, relays: 1, online: 0 },
  ]);
  assert.deepEqual(s.byNip, [{ nip: 1, relays: 3 }, { nip: 11, relays: 1 }, { nip: 50, relays: 1 }]);
  const a = v.rows.find((r) => r.url === 'wss://a.example')!;
  assert.deepEqual([a.online, a.rttOpen, a.rttRead, a.uptimeWeek, a.software, a.eventsByKind], [true, 5, 3, 1, 'strfry', { '0': 4, '3': 2 }]);
  const b = v.rows.find((r) => r.url === 'wss://b.example')!;
  assert.deepEqual([b.online, b.checkError], [false, 'open: timeout']);
  assert.equal(v.rows.find((r) => r.url === 'wss://d.example')!.online, null, 'never checked');
  assert.equal(v.rows.at(-1)!.url, 'wss://c.onion', 'relays found by the finder (hop -1) come last');
  assert.equal(v.rows.at(-1)!.nextAttempt, null, 'and the spider does not crawl them');
});
