// The monitor's probes against fake relays on loopback: a relay that claims NIP-50/77/45 and refuses
// them, one that serves them without claiming, one that ignores `search`, limits and AUTH on demand;
// the pure decision of what is published (N, T, the differences) from claims and observations; and
// hostile relays that answer the probes with garbage, floods or drips — the check stays bounded
// (outcomes asserted, never wall-clock figures) and publishes nothing the probes did not see.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeRelay } from '../fixtures/fake-relay.js';
import { checkRelay } from '../../src/monitor/check.js';
import { discoveryEvent } from '../../src/monitor/nip66.js';
import { decide } from '../../src/monitor/probes/decide.js';
import { authObservation } from '../../src/monitor/probes/auth.js';
import { matchesWord, searchWordFrom } from '../../src/monitor/probes/search-word.js';
import { UNCLAIMED_TIMEOUT_MS } from '../../src/monitor/probes/run.js';
import type { ProbeReport } from '../../src/monitor/probes/types.js';
import { parseServes, serves, servingNow, type DirectoryRow } from '../../src/directory/view.js';
import type { RelayCheck } from '../../src/monitor/types.js';
import { finalizeEvent, generateSecretKey } from 'nostr-tools/pure';
import { nip66Problems, type SignedEvent } from './nip66-validator.js';

const opts = { timeout: 1000, allowPrivate: true, probes: { budget: 5000 } };
const tagValues = (tags: string[][], name: string) => tags.filter((t) => t[0] === name).map((t) => t[1]);
const profile = (content: Record<string, string>) => ({ id: 'a'.repeat(64), pubkey: 'b'.repeat(64), kind: 0, created_at: 1_700_000_000, tags: [], content: JSON.stringify(content), sig: 'c'.repeat(128) });
const PROFILES = [profile({ name: 'alice', about: 'nostr dev' }), profile({ name: 'bob', about: 'cats' }), profile({ name: 'Nostr fan' })];

const sk = generateSecretKey();

/** The N and T a check publishes; its 30166 must be valid per NIP-66 whatever the relay did. */
function published(c: RelayCheck) {
  const ev = discoveryEvent(c, 1);
  assert.deepEqual(nip66Problems(finalizeEvent(ev, sk) as SignedEvent), [], `the 30166 of ${c.url}`);
  return { N: tagValues(ev.tags, 'N').map(Number), T: tagValues(ev.tags, 'T') };
}

test('decide: N as observed, the claim kept where no probe can tell, T Search only for a served search, differences in words', () => {
  const base: ProbeReport = { nip11: 'valid', ms: 1 };
  const nip11 = { supported_nips: [1, 11, 42, 45, 50, 77], limitation: { max_limit: 100, max_filters: 5, auth_required: true } };
  const refused: ProbeReport = { ...base, search: { outcome: 'refused', detail: 'unsupported: search' }, count: { outcome: 'wrong', detail: 'COUNT "x"' }, negentropy: { outcome: 'silent' }, auth: { challenge: 'none', readWithoutAuth: true }, limits: { limit: { asked: 101, got: 300 }, filters: { asked: 5, accepted: false } } };
  const d = decide(nip11, refused);
  assert.deepEqual(d.nips, [1, 11, 42], '42 kept: no challenge is no observation; 45/50/77 dropped');
  assert.deepEqual(d.types, []);
  assert.deepEqual(d.claimed, [1, 11, 42, 45, 50, 77]);
  assert.deepEqual(d.differences, [
    'claims NIP-45, wrong: COUNT "x"', 'claims NIP-50, refused: unsupported: search', 'claims NIP-77, no answer',
    'claims max_limit 100, sent 300 events to limit 101', 'claims max_filters 5, refused a REQ with 5', 'claims auth_required, served a REQ without AUTH',
  ]);
  const served: ProbeReport = { ...base, search: { outcome: 'served' }, count: { outcome: 'served', hll: false }, negentropy: { outcome: 'served' }, auth: { challenge: 'demand', readWithoutAuth: true } };
  const s = decide({ supported_nips: [1] }, served);
  assert.deepEqual(s.nips, [1, 42, 45, 50, 77]);
  assert.deepEqual(s.types, ['Search']);
  assert.deepEqual(s.differences, ['serves NIP-42 without claiming it', 'serves NIP-45 without claiming it', 'serves NIP-50 without claiming it', 'serves NIP-77 without claiming it', 'NIP-45 hll malformed']);
  const empty = decide({ supported_nips: [50] }, { ...base, search: { outcome: 'empty' }, count: { outcome: 'skipped' } });
  assert.deepEqual([empty.nips, empty.types, empty.differences], [[50], [], []], 'an empty search keeps the claim but is no Search type');
  assert.deepEqual(decide({ supported_nips: [50, 1, 1] }, undefined), { nips: [1, 50], types: ['Search'], claimed: [1, 50], differences: [] }, 'probes off: the claims as before');
  assert.deepEqual(decide(null, { ...base, nip11: 'invalid' }).differences, ['NIP-11 document not valid']);
});

test('the finder (pure): which relays serve a NIP and are online now, lowest latency first', () => {
  const row = (url: string, o: Partial<DirectoryRow>) => ({ url, online: true, rttRead: null, rttOpen: null, nips: [], probes: {}, ...o }) as DirectoryRow;
  const rows = [
    row('wss://slow', { rttRead: 90, probes: { 50: 'served' } }),
    row('wss://fast', { rttRead: 12, probes: { 50: 'served', 42: 'challenge on demand' } }),
    row('wss://open-only', { rttOpen: 30, probes: { 50: 'served' } }),
    row('wss://liar', { rttRead: 1, nips: [50], probes: { 50: 'refused' } }),
    row('wss://down', { online: false, probes: { 50: 'served' } }),
    row('wss://unprobed', { rttRead: 5, nips: [50, 11] }),
  ];
  assert.deepEqual(servingNow(rows, 50).map((r) => r.url), ['wss://unprobed', 'wss://fast', 'wss://open-only', 'wss://slow'], 'the probe decides where it ran; else the published N');
  assert.equal(serves(rows[1], 42), true);
  assert.equal(serves(rows[0], 42), false);
  assert.equal(serves(rows[5], 11), true);
  assert.deepEqual(['50', 'NIP-50', 'nip50', 'search', 'count', 'negentropy', 'auth', 'everything', ''].map(parseServes), [50, 50, 50, 50, 45, 77, 42, null, null]);
});

test('auth observation and word matching (pure)', () => {
  assert.equal(authObservation([], true, undefined, 0).challenge, 'none');
  assert.equal(authObservation([{ afterAnswers: 0 }], true, undefined, 0).challenge, 'connect');
  assert.equal(authObservation([{ afterAnswers: 0 }], true, 'auth-required: x', 1).challenge, 'demand', 'a challenge sent together with a refusal is on demand');
  assert.equal(authObservation([{ afterAnswers: 3 }], true, undefined, 0).challenge, 'demand');
  assert.equal(authObservation([{ afterAnswers: 2 }], false, undefined, 1).challenge, 'connect', 'plain reads refused: the challenge was on connect');
  assert.equal(matchesWord(PROFILES[0], 'nostr'), true);
  assert.equal(matchesWord(PROFILES[2], 'NOSTR'), true);
  assert.equal(matchesWord(PROFILES[1], 'nostr'), false);
  assert.equal(matchesWord({ kind: 1, content: 'nostr' }, 'nostr'), false, 'kind 0 only');
  assert.equal(matchesWord('nostr', 'nostr'), false);
  assert.equal(matchesWord(profile({ name: 'Zoë' }), 'ZOE'), true, 'folded: case and accents do not decide');
  assert.equal(matchesWord({ kind: 0, tags: [], content: '{"name":"Zo\\u00eb"}' }, 'zoe'), true, 'an escaped character in the content JSON');
});

test('the search word comes from a profile the relay served (pure)', () => {
  // names first (every search indexes them), the longest usable word of the first name that has one
  assert.equal(searchWordFrom(PROFILES), 'alice');
  assert.equal(searchWordFrom([profile({ name: 'Al', about: 'mountains and rivers' }), profile({ display_name: 'Wandering Zoë' })]), 'wandering', 'a later profile\'s name before an about');
  assert.equal(searchWordFrom([profile({ name: 'bob', about: 'I climb mountains' })]), 'mountains', 'no usable name: the about');
  assert.equal(searchWordFrom([profile({ name: 'Zoë Ñandú' })]), 'nandu', 'folded as this relay\'s search folds (ñandú is nandu; zoë is too short)');
  assert.equal(searchWordFrom([profile({ name: 'さとし', about: 'x1234 42 a_b' })]), null, 'unspaced scripts, digits, short words: none usable');
  assert.equal(searchWordFrom([{ kind: 0, content: 'not json' }, { kind: 1, content: '{"name":"notes"}' }, 'garbage', null]), null, 'only readable kind 0 profiles');
});

test('probes: claims refused, served without claims, ignored search, limits, AUTH on demand', async () => {
  const liar = await new FakeRelay({ nip11: { supported_nips: [1, 11, 45, 50, 77] }, search: 'refuse', neg: 'refuse', count: 'refuse', profiles: PROFILES }).start();
  const modest = await new FakeRelay({ nip11: { supported_nips: [1, 11] }, search: 'serve', neg: 'serve', count: 'hll', authOnDemand: true, profiles: PROFILES }).start();
  // every profile it holds says the word taken from them ("nostr"): only the nonsense word tells it ignores `search`
  const ignores = await new FakeRelay({ nip11: { supported_nips: [1, 50] }, search: 'ignore', profiles: [PROFILES[2], PROFILES[0]], count: 'garbage' }).start();
  const limited = await new FakeRelay({ nip11: { supported_nips: [1], limitation: { max_limit: 50, max_filters: 3, max_subscriptions: 4 } }, kind1: 200, maxLimit: 100, maxFilters: 2, maxSubs: 4 }).start();
  const mostlyOff = await new FakeRelay({ search: 'ignore', profiles: [PROFILES[1], PROFILES[1], PROFILES[0]] }).start();
  const greeter = await new FakeRelay({ challengeOnConnect: true }).start();
  // search served, profiles that never say "nostr": the word comes from them
  const plain = await new FakeRelay({ search: 'serve', profiles: [profile({ name: 'Wanderer', about: 'mountains and rivers' }), profile({ name: 'bob', about: 'cats' })] }).start();
  const none = await new FakeRelay({ search: 'serve' }).start();
  const members = await new FakeRelay({ behaviour: 'auth', nip11: { supported_nips: [1, 42], limitation: { auth_required: true } } }).start();
  const all = [liar, modest, ignores, limited, greeter, members, mostlyOff, plain, none];
  try {
    const l = await checkRelay(liar.url, opts);
    assert.equal(l.online, true);
    assert.deepEqual([l.probes?.search?.outcome, l.probes?.count?.outcome, l.probes?.negentropy?.outcome], ['refused', 'refused', 'refused']);
    assert.equal(l.probes?.search?.detail, 'unsupported: search');
    assert.deepEqual(published(l), { N: [1, 11], T: [] }, 'no N for a claimed NIP the probe saw refused; no T Search');
    assert.equal(l.probes?.auth?.challenge, 'none');

    const m = await checkRelay(modest.url, opts);
    assert.deepEqual([m.probes?.search?.outcome, m.probes?.count?.outcome, m.probes?.count?.hll, m.probes?.negentropy?.outcome], ['served', 'served', true, 'served']);
    assert.deepEqual(m.probes?.auth, { challenge: 'demand', readWithoutAuth: true, gated: 'auth-required: DMs need AUTH' });
    assert.deepEqual(published(m), { N: [1, 11, 42, 45, 50, 77], T: ['Search'] }, 'served without claiming: published');
    assert.equal(m.probes?.cut, undefined, 'not cut short');
    assert.equal(l.probes?.cut, undefined);

    const i = await checkRelay(ignores.url, opts);
    assert.equal(i.probes?.search?.outcome, 'wrong');
    assert.equal(i.probes?.search?.detail, 'a nonsense word was answered with events: search ignored', 'both its profiles say "nostr": the nonsense word tells');
    assert.deepEqual([i.probes?.search?.word, i.probes?.search?.wordFrom], ['nostr', 'profile']);
    const i2 = await checkRelay(mostlyOff.url, opts);
    assert.deepEqual([i2.probes?.search?.outcome, i2.probes?.search?.detail], ['wrong', '2 of 3 events do not contain "alice"']);
    const p = await checkRelay(plain.url, opts);
    assert.deepEqual([p.probes?.search?.outcome, p.probes?.search?.word, p.probes?.search?.wordFrom], ['served', 'wanderer', 'profile'], 'a relay whose profiles never say "nostr" is seen to search');
    assert.deepEqual(published(p).T, ['Search']);
    const n = await checkRelay(none.url, opts);
    assert.deepEqual([n.probes?.search?.outcome, n.probes?.search?.word, n.probes?.search?.wordFrom], ['empty', 'nostr', 'fallback'], 'no profile served: the fallback word, and no verdict');
    assert.equal(i.probes?.count?.outcome, 'wrong');
    assert.equal(i.probes?.negentropy?.outcome, 'silent', 'NEG-OPEN ignored: no answer within the timeout');
    assert.deepEqual(published(i), { N: [1], T: [] });

    const x = await checkRelay(limited.url, opts);
    assert.equal(typeof x.probes?.limits?.at, 'number');
    assert.deepEqual({ ...x.probes?.limits, at: 0 }, { at: 0, limit: { asked: 51, got: 51 }, filters: { asked: 3, accepted: false, reason: 'invalid: too many filters' }, subscriptions: { asked: 5, accepted: false } });
    assert.deepEqual(decide(x.nip11, x.probes).differences.filter((d) => /max_/.test(d)), ['claims max_limit 50, sent 51 events to limit 51', 'claims max_filters 3, refused a REQ with 3 (invalid: too many filters)']);
    const gr = await checkRelay(greeter.url, opts);
    assert.deepEqual(gr.probes?.auth, { challenge: 'connect', readWithoutAuth: true }, 'challenged on connect, served without AUTH');
    assert.deepEqual(published(gr), { N: [42], T: [] }, 'no document: N 42 from the challenge alone');
    const mb = await checkRelay(members.url, opts);
    assert.deepEqual([mb.probes?.auth?.challenge, mb.probes?.auth?.readWithoutAuth], ['connect', false]);
    assert.ok(all.every((r) => r.connections === 1), 'the probes continue on the check\'s connection');
    assert.ok(all.every((r) => (r.verbs.EVENT ?? 0) === 0), 'read-only: no EVENT written');
    const sent = (r: FakeRelay) => Object.values(r.verbs).reduce((a, b) => a + b, 0);
    assert.ok(sent(modest) <= 12, `a few small messages per check: ${JSON.stringify(modest.verbs)}`);

    // with a longer check timeout, the probe of an unclaimed NIP (77 here) gives up at its own bound
    const patient = await checkRelay(ignores.url, { ...opts, timeout: 10 * UNCLAIMED_TIMEOUT_MS, probes: { budget: 20 * UNCLAIMED_TIMEOUT_MS } });
    assert.equal(patient.probes?.negentropy?.outcome, 'silent');
    assert.ok(patient.probes!.ms < 5 * UNCLAIMED_TIMEOUT_MS, `an unclaimed NIP's silence ends the probes at ${UNCLAIMED_TIMEOUT_MS} ms, not the check's timeout: ${patient.probes!.ms} ms`);

    // probes off (spider.monitorProbes false): no probe message, N and T as NIP-11 claims them
    const before = { ...liar.verbs };
    const off = await checkRelay(liar.url, { timeout: 1000, allowPrivate: true });
    assert.equal(off.probes, undefined);
    assert.deepEqual([liar.verbs.REQ - before.REQ, liar.verbs.COUNT - before.COUNT, liar.verbs['NEG-OPEN'] - before['NEG-OPEN']], [1, 0, 0], 'the check\'s REQ only');
    assert.deepEqual(published(off), { N: [1, 11, 45, 50, 77], T: ['Search'] });
  } finally {
    await Promise.all(all.map((r) => r.close()));
  }
});

test('hostile probes: garbage, floods and drips are bounded, cut short and publish nothing they did not show', async () => {
  const nip11 = { supported_nips: [1, 11, 45, 50, 77] };
  const garbage = await new FakeRelay({ nip11, probeHostile: 'garbage' }).start();
  const flood = await new FakeRelay({ nip11, probeHostile: 'flood' }).start();
  const drip = await new FakeRelay({ nip11, probeHostile: 'drip' }).start();
  const all = [garbage, flood, drip];
  try {
    // three hostile relays in this process, one flooding: a timeout of 1 s made the garbage relay's
    // COUNT answer late on a loaded machine (silent, not wrong); the budget stays above the timeout
    // so that the drip is silent at the timeout rather than cut by the budget
    const [g, f, d] = await Promise.all(all.map((r) => checkRelay(r.url, { ...opts, timeout: 4000, probes: { budget: 10_000 } })));
    for (const c of [g, f, d]) {
      assert.equal(c.online, true, 'the check itself is answered');
      assert.ok(c.probes, 'probes ran');
      for (const p of [c.probes.search, c.probes.count, c.probes.negentropy]) assert.notEqual(p?.outcome, 'served');
      const pub = published(c);
      assert.deepEqual(pub.T, []);
      assert.deepEqual(pub.N, [1, 11], 'no N 45/50/77 from a hostile answer (a flood counts as not served)');
    }
    assert.equal(g.probes!.count!.outcome, 'wrong', 'COUNT "many" is no count');
    assert.match(f.probes!.cut ?? '', /^flood: \d+ messages/, 'a flood cuts the probes short');
    assert.ok(flood.hostileFrames >= 2000);
    // the one bounded remote read stops at limit + 1 events, EOSE or not: a drip past the limit is
    // the wrong answer (more than asked), seen as soon as it passes the limit
    assert.deepEqual([d.probes!.search!.outcome, d.probes!.search!.detail], ['wrong', 'more than limit 5 events'], 'dripped events past the limit, without EOSE');
    assert.ok(all.every((r) => r.connections === 1), 'one connection each, no retries');
  } finally {
    await Promise.all(all.map((r) => r.close()));
  }
});
