// The finder over a real store (events through the real ingest path) and the validator against
// relays of several behaviours on loopback: candidates from every source with where they were
// found, URLs already in the directory or not allowed left out; a candidate joins the directory
// only after a Nostr answer; failures counted, least-failed and oldest first, exhausted ones
// dropped, at most `concurrency` probes at once, private addresses refused when not allowed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { keypair, sign } from '../fixtures/test-relay.js';
import { FakeRelay, deadUrl, type Behaviour } from '../fixtures/fake-relay.js';
import { openHome, quietLog } from '../spider/harness.js';
import { RelayDirectory } from '../../src/directory/records.js';
import { CandidateStore } from '../../src/directory/candidates.js';
import { Finder } from '../../src/directory/finder.js';
import { validateCandidates, validateRelay, FOUND_HOP } from '../../src/monitor/validator.js';

const T0 = Math.floor(Date.now() / 1000) - 1000;

test('finder: candidates from kind 3 content, kind 2 content, r tags of the chosen kinds and other monitors\' 30166', async () => {
  const home = await openHome();
  try {
    const directory = new RelayDirectory(home.store.env);
    const candidates = new CandidateStore(home.store.env);
    await directory.discovered('wss://known.example', 0, ['seed'], 1);
    const self = keypair();
    const store = async (ev: ReturnType<typeof sign>) => assert.equal((await home.ingest(ev, { source: 'client' })).status, 'stored');
    const k3 = sign(keypair().sk, 3, T0, [['p', keypair().pk]], JSON.stringify({ 'wss://contacts.example': { read: true, write: true }, 'wss://known.example': {} }));
    await store(k3);
    await store(sign(keypair().sk, 2, T0, [], 'wss://recommended.example'));
    await store(sign(keypair().sk, 10002, T0, [['r', 'wss://outbox.example', 'write'], ['r', 'ws://10.0.0.1:7000'], ['r', 'wss://contacts.example']]));
    await store(sign(keypair().sk, 30166, T0, [['d', 'wss://monitored.example'], ['rtt-open', '80']]));
    await store(sign(self.sk, 30166, T0, [['d', 'wss://ours.example']]));
    await store(sign(keypair().sk, 1, T0, [['r', 'wss://note.example']]));
    const finder = new Finder({ store: home.store, candidates, directory, rKinds: [2, 3, 10002], allowPrivate: false, maxCandidates: 100, selfPubkey: self.pk, log: quietLog });
    const s = await finder.run();
    assert.equal(s.fullScan, true, 'the first run scans the stored events');
    assert.deepEqual([s.added, s.known, s.refused], [4, 1, 1]);
    const got = Object.fromEntries(candidates.all().map((c) => [c.url, c.sources]));
    assert.deepEqual(got, {
      'wss://contacts.example': { 'kind 3 content': 1, 'r tag of kind 10002': 1 },
      'wss://recommended.example': { 'kind 2 content': 1 },
      'wss://outbox.example': { 'r tag of kind 10002': 1 },
      'wss://monitored.example': { 'NIP-66 30166': 1 },
    });
    assert.equal(candidates.get('wss://contacts.example')?.first.event !== undefined, true, 'where it was found: the event');
    assert.deepEqual(candidates.bySource(), { 'kind 3 content': 1, 'r tag of kind 10002': 2, 'kind 2 content': 1, 'NIP-66 30166': 1 });

    // the live feed: an event stored later is seen without a rescan; a rescan does not double-count
    const later = sign(keypair().sk, 10002, T0 + 1, [['r', 'wss://later.example'], ['r', 'wss://outbox.example']]);
    finder.see(later);
    const s2 = await finder.run();
    assert.deepEqual([s2.fullScan, s2.added, s2.updated], [false, 1, 1]);
    assert.deepEqual(candidates.get('wss://outbox.example')?.sources, { 'r tag of kind 10002': 1 }, 'the larger count per source is kept');
    // the list is bounded
    const small = new CandidateStore(home.store.env, 'small-candidates');
    const f3 = new Finder({ store: home.store, candidates: small, directory, rKinds: [10002], allowPrivate: false, maxCandidates: 2, log: quietLog });
    const s3 = await f3.run({ full: true });
    assert.equal(small.count(), 2);
    assert.ok(s3.full > 0, 'candidates past the bound are left out');
  } finally { await home.close(); }
});

test('validator: only a Nostr answer makes a directory relay; failures counted, order, dropping, concurrency, SSRF', async () => {
  const home = await openHome();
  const relays: Record<string, FakeRelay> = {};
  for (const b of ['nostr', 'auth', 'notice', 'silent', 'garbage', 'http'] as Behaviour[]) relays[b] = await new FakeRelay({ behaviour: b }).start();
  const dead = await deadUrl();
  try {
    const o = { timeout: 1500, allowPrivate: true };
    assert.deepEqual(await validateRelay(relays.nostr.url, o), { valid: true }, 'REQ answered with EOSE');
    assert.equal((await validateRelay(relays.auth.url, o)).valid, true, 'AUTH challenge and CLOSED auth-required');
    assert.equal((await validateRelay(relays.notice.url, o)).valid, true, 'a NOTICE is a Nostr answer');
    const silent = await validateRelay(relays.silent.url, o);
    assert.deepEqual([silent.valid, /read: no answer within 1500 ms/.test(silent.error ?? '')], [false, true], silent.error);
    assert.equal((await validateRelay(relays.garbage.url, o)).valid, false, 'a WebSocket that does not speak Nostr');
    assert.match((await validateRelay(relays.http.url, o)).error ?? '', /HTTP 404|Unexpected server response/);
    assert.equal((await validateRelay(dead, o)).valid, false);
    const priv = await validateRelay(relays.nostr.url, { timeout: 1500, allowPrivate: false });
    assert.deepEqual([priv.valid, priv.refused], [false, true], 'loopback refused unless allowed');

    const directory = new RelayDirectory(home.store.env);
    const candidates = new CandidateStore(home.store.env);
    const add = async (url: string, at: number) => {
      await candidates.add(new Map([[url, new Map([['r tag of kind 10002', 1]])]]), new Map([[url, { url, source: 'r tag of kind 10002', event: 'e', pubkey: 'p' }]]), 100, at);
    };
    const now = Date.now();
    // oldest first: silent (1), dead (2), nostr (3), garbage (4), auth (5); notice is in the directory already
    await add(relays.silent.url, now - 5000);
    await add(dead, now - 4000);
    await add(relays.nostr.url, now - 3000);
    await add(relays.garbage.url, now - 2000);
    await add(relays.auth.url, now - 1000);
    await add(relays.notice.url, now - 500);
    await directory.discovered(relays.notice.url, 1, ['x'], 1);
    const deps = { candidates, directory, batch: 2, concurrency: 2, timeout: 1500, maxFailures: 2, allowPrivate: true, log: quietLog };
    const conns = (r: FakeRelay) => r.connections;
    const silentBefore = conns(relays.silent), nostrBefore = conns(relays.nostr);

    let s = await validateCandidates(deps);
    assert.deepEqual([s.tried, s.valid, s.failed, s.stale], [2, 0, 2, 1], 'the two oldest, both failing; the known one removed');
    assert.equal(conns(relays.silent) - silentBefore, 1);
    assert.equal(conns(relays.nostr) - nostrBefore, 0, 'not in this batch');
    assert.deepEqual([candidates.get(relays.silent.url)?.failures, candidates.get(dead)?.failures], [1, 1]);

    s = await validateCandidates(deps);
    assert.deepEqual([s.tried, s.valid, s.failed], [2, 1, 1], 'least-failed first: nostr (valid) and garbage (fails)');
    const rec = directory.get(relays.nostr.url);
    assert.equal(rec?.hop, FOUND_HOP);
    assert.deepEqual(rec?.referrers, ['finder: r tag of kind 10002']);
    assert.equal(candidates.get(relays.nostr.url), undefined);

    s = await validateCandidates(deps);
    assert.deepEqual([s.tried, s.valid, s.dropped], [2, 1, 1], 'auth (valid), then the oldest of the once-failed (silent), failing a second time: dropped');
    assert.ok(directory.get(relays.auth.url));
    assert.equal(candidates.get(relays.silent.url), undefined);
    s = await validateCandidates({ ...deps, batch: 10 });
    assert.equal(s.dropped, 2, 'second failures: dropped');
    assert.equal(candidates.count(), 0);
    assert.equal(directory.get(relays.silent.url), undefined, 'a failed candidate never enters the directory');

    // concurrency: 6 silent candidates, 3 at a time
    const slow = await new FakeRelay({ behaviour: 'silent' }).start();
    for (let i = 0; i < 6; i++) await add(`${slow.url}/p${i}`, now + i);
    await validateCandidates({ ...deps, batch: 6, concurrency: 3, timeout: 1000, maxFailures: 5 });
    assert.equal(slow.connections, 6);
    assert.equal(slow.maxOpen, 3, 'never more than `concurrency` probes at once');
    // SSRF: a private candidate when private targets are not allowed is dropped without contact
    const before = relays.garbage.connections;
    await add(relays.garbage.url, now);
    s = await validateCandidates({ ...deps, allowPrivate: false, batch: 20 });
    assert.ok(s.refused >= 1);
    assert.equal(relays.garbage.connections, before);
    await slow.close();
  } finally {
    await Promise.all(Object.values(relays).map((r) => r.close()));
    await home.close();
  }
});
