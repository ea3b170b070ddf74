// The monitor's checks against relays of several behaviours on loopback, and a monitor cycle over a
// real store through the real ingest path: online relays get one kind 30166 each (NIP-66 tags,
// the NIP-11 document as content, signed by the monitor key), the monitor's 10166 and kind 0 are
// stored, every check is a snapshot, history is pruned past the retention, hostile relays (silent,
// garbage, huge or dripping NIP-11) cost bounded time and are reported offline or without a document.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { verifyEvent } from 'nostr-tools/pure';
import { nsecEncode } from 'nostr-tools/nip19';
import { FakeRelay, deadUrl } from '../fixtures/fake-relay.js';
import { keypair, sign } from '../fixtures/test-relay.js';
import { openHome, quietLog } from '../spider/harness.js';
import { checkRelay } from '../../src/monitor/check.js';
import { createMonitor } from '../../src/monitor/monitor.js';
import { MonitorHistory } from '../../src/monitor/history.js';
import { monitorKey } from '../../src/monitor/key.js';
import { RelayDirectory } from '../../src/directory/records.js';
import { configSchema } from '../../src/config/schema.js';
import type { NostrEvent } from '../../src/nostr/event.js';
import type { RelayCheck } from '../../src/monitor/types.js';
import { assertNip66, type SignedEvent } from './nip66-validator.js';

const NIP11 = { name: 'honest', software: 'git+https://example.com/relay.git', version: '2.1.0', supported_nips: [1, 11, 42, 50], limitation: { auth_required: false, payment_required: false }, tags: ['test'] };
const opts = { timeout: 1500, allowPrivate: true };
const tag = (ev: NostrEvent, name: string) => ev.tags.filter((t) => t[0] === name).map((t) => t.slice(1));

test('checks: an honest relay, hostile NIP-11 documents, a silent relay, AUTH, dead, and the write test', async () => {
  const honest = await new FakeRelay({ nip11: NIP11 }).start();
  const garbage = await new FakeRelay({ nip11Raw: '{{ not json <html>' }).start();
  const wrongTypes = await new FakeRelay({ nip11: { name: 7, software: ['x'], supported_nips: 'all', limitation: 'none' } }).start();
  const huge = await new FakeRelay({ nip11Huge: 200_000 }).start();
  const drip = await new FakeRelay({ nip11Drip: true }).start();
  const silent = await new FakeRelay({ behaviour: 'silent', nip11: NIP11 }).start();
  const auth = await new FakeRelay({ behaviour: 'auth', nip11: { supported_nips: [1, 42] } }).start();
  const closedWrites = await new FakeRelay({ nip11: { limitation: { restricted_writes: true } } }).start();
  const refusing = await new FakeRelay({ ok: [false, 'restricted: not on the list'] }).start();
  const dead = await deadUrl();
  const all = [honest, garbage, wrongTypes, huge, drip, silent, auth, closedWrites, refusing];
  try {
    const c = await checkRelay(honest.url, opts);
    assert.equal(c.online, true);
    assert.equal(c.answer, 'eose');
    assert.ok(c.rtt.open! >= 1 && c.rtt.read! >= 1 && c.rtt.nip11! >= 1, JSON.stringify(c.rtt));
    assert.equal(c.rtt.write, undefined, 'no write test unless asked');
    assert.deepEqual(c.nip11?.supported_nips, [1, 11, 42, 50]);
    assert.deepEqual(JSON.parse(c.nip11Json!), NIP11, 'the document as content');
    assert.equal(c.network, 'clearnet');
    assert.equal(c.ssl, undefined, 'ws:// has no certificate');

    const g = await checkRelay(garbage.url, opts);
    assert.deepEqual([g.online, g.nip11], [true, null], 'a garbage document is no document');
    const w = await checkRelay(wrongTypes.url, opts);
    assert.deepEqual([w.online, w.nip11], [true, {}], 'fields of the wrong type are dropped');
    const h = await checkRelay(huge.url, opts);
    assert.deepEqual([h.online, h.nip11], [true, null], 'a document over 64 KiB is not read');
    const d = await checkRelay(drip.url, opts);
    assert.deepEqual([d.online, d.nip11], [true, null], 'a dripping document is cut off at the timeout');

    const s = await checkRelay(silent.url, opts);
    assert.equal(s.online, false);
    assert.match(s.error ?? '', /read: no answer within 1500 ms/);
    assert.ok(s.rtt.open! >= 1, 'the handshake was timed');

    const a = await checkRelay(auth.url, opts);
    assert.equal(a.online, true);
    assert.equal(a.observed.auth, 'auth-required: members only', 'the refusal shows the requirement');
    assert.equal(a.rtt.read, undefined, 'a refused REQ is no read');
    assert.match(a.error ?? '', /CLOSED auth-required/);

    const x = await checkRelay(dead, opts);
    assert.equal(x.online, false);
    assert.equal(x.rtt.open, undefined);

    const refused = await checkRelay(honest.url, { ...opts, allowPrivate: false });
    assert.equal(refused.refused, true, 'loopback refused unless allowed');

    // the write test: an event is published and its OK timed, unless NIP-11 closes writing
    const writeEvent = sign(keypair().sk, 10166, Math.floor(Date.now() / 1000), [['frequency', '3600']]);
    const wc = await checkRelay(honest.url, { ...opts, writeEvent });
    assert.ok(wc.rtt.write! >= 1);
    assert.deepEqual(wc.acceptedKinds, [10166], 'OK true: the kind written is one the relay accepts (NIP-66 k)');
    assert.deepEqual(honest.events.map((e) => e.id), [writeEvent.id]);
    const cw = await checkRelay(closedWrites.url, { ...opts, writeEvent });
    assert.equal(cw.rtt.write, undefined);
    assert.equal(closedWrites.events.length, 0, 'restricted_writes: not even tried');
    const rf = await checkRelay(refusing.url, { ...opts, writeEvent });
    assert.equal(rf.rtt.write, undefined);
    assert.equal(rf.observed.writes, 'restricted: not on the list');
    assert.equal(rf.acceptedKinds, undefined, 'a refusal names no kind it refuses');
    const aw = await checkRelay(auth.url, { ...opts, writeEvent });
    assert.equal(aw.rtt.write, undefined, 'OK false is no write');
  } finally {
    await Promise.all(all.map((r) => r.close()));
  }
});

test('a monitor cycle: one 30166 per online relay, signed, with NIP-66 tags; 10166 and kind 0; snapshots; the key kept in the data directory', async () => {
  const home = await openHome();
  // it answers a search with a matching profile: T Search is published only for a search answered
  const honest = await new FakeRelay({ nip11: NIP11, search: 'serve', profiles: [{ kind: 0, content: '{"name":"a nostr user"}', tags: [] }] }).start();
  const auth = await new FakeRelay({ behaviour: 'auth', nip11: { supported_nips: [1, 42], limitation: { auth_required: true } } }).start();
  const silent = await new FakeRelay({ behaviour: 'silent' }).start();
  const unsafe = await new FakeRelay().start();
  try {
    const directory = new RelayDirectory(home.store.env);
    for (const r of [honest, auth, silent, unsafe]) await directory.discovered(r.url, 0, ['seed'], 1);
    await directory.applyResult({ url: unsafe.url, hop: 0, outcome: 'refused', nip11: null, quirks: {}, cursors: {}, counts: { fetched: 0, stored: 0, duplicate: 0, rejected: 0, invalid: 0, truncated: 0, truncatedSlices: 0, verified: 0, bytes: 0, nip77Relays: 0, nip77Kinds: 0, nip77Fallbacks: 0, nip77Ids: 0, nip77Bytes: 0 }, links: {}, ignoredLists: 0, startedAt: Date.now(), durationMs: 0 });
    const config = configSchema.parse({ dataDir: home.dir, info: { name: 'Home' }, spider: { monitor: true, allowPrivate: true, monitorTimeout: '1500ms', monitorInterval: '1h' } });
    const stored: NostrEvent[] = [];
    const monitor = createMonitor({ config, store: home.store, put: async (ev) => { stored.push(ev); return (await home.ingest(ev, { source: 'monitor' })).status; }, logger: quietLog, validate: false });
    const keyFile = join(home.dir, 'monitor.key');
    assert.equal(statSync(keyFile).mode & 0o777, 0o600, 'generated key kept with mode 0600');
    assert.equal(monitorKey('', home.dir).pubkey, monitor.pubkey, 'the same key on the next start');
    const fixed = keypair();
    assert.equal(monitorKey(nsecEncode(fixed.sk), home.dir).pubkey, fixed.pk, 'a configured key (nsec) wins');

    // a 30166 published before `d` took RFC 3986's "/" (d = the URL as the directory spells it)
    const mk = monitorKey('', home.dir);
    const old = sign(mk.secretKey, 30166, Math.floor(Date.now() / 1000) - 600, [['d', honest.url], ['n', 'clearnet']]);
    assert.equal((await home.ingest(old, { source: 'monitor' })).status, 'stored');
    await monitor.history.record({ url: honest.url, checkedAt: Date.now() - 600_000, network: 'clearnet', online: true, rtt: {}, nip11: null, observed: {} }, { id: old.id, createdAt: old.created_at });

    const s1 = await monitor.runOnce();
    assert.deepEqual([s1.checked, s1.online, s1.published, s1.announced], [3, 2, 2, true]);
    assert.equal(unsafe.connections + unsafe.nip11Requests, 0, 'a refused relay is never contacted');
    const q = async (filter: Record<string, unknown>) => (await home.store.query([filter], { defaultLimit: 500, maxLimit: 500 })).map((j) => JSON.parse(j) as NostrEvent);
    const d1 = await q({ kinds: [30166] });
    assert.equal(d1.length, 2);
    for (const ev of d1) {
      assert.equal(ev.pubkey, monitor.pubkey);
      assert.ok(verifyEvent(ev), 'valid signature');
    }
    const byD = new Map(d1.map((e) => [tag(e, 'd')[0][0], e]));
    const h = byD.get(`${honest.url}/`)!;
    assert.ok(h, '30166 for the honest relay, d = its URL in RFC 3986 normal form ("/" for the empty path)');
    assert.deepEqual(tag(h, 'N').map((t) => Number(t[0])), NIP11.supported_nips);
    assert.deepEqual(tag(h, 'n'), [['clearnet']]);
    assert.deepEqual([tag(h, 's'), tag(h, 'l'), tag(h, 't')], [[], [], [['test']]], 'software in the content, not in an `s` tag; topics as `t`');
    assert.deepEqual(tag(h, 'T'), [['Search']]);
    assert.deepEqual(tag(h, 'R'), [['!auth'], ['!payment']]);
    assert.ok(Number(tag(h, 'rtt-open')[0][0]) > 0 && Number(tag(h, 'rtt-read')[0][0]) > 0);
    assert.deepEqual(JSON.parse(h.content), NIP11);
    assert.deepEqual(tag(byD.get(`${auth.url}/`)!, 'R'), [['auth']]);
    assert.equal(byD.has(`${silent.url}/`), false, 'an offline relay gets no 30166');
    // the 30166 under the old d is retracted by a kind 5, once; the new one stands
    assert.deepEqual(await q({ kinds: [30166], tags: [['d', [honest.url]]] }), [], 'the old address is deleted');
    const retractions = stored.filter((e) => e.kind === 5);
    assert.equal(retractions.length, 1);
    assert.deepEqual(tag(retractions[0], 'a'), [[`30166:${monitor.pubkey}:${honest.url}`]]);
    assert.deepEqual(tag(retractions[0], 'e'), [[old.id]]);

    const ann = await q({ kinds: [10166], authors: [monitor.pubkey] });
    assert.equal(ann.length, 1);
    assert.ok(verifyEvent(ann[0]));
    assert.deepEqual(tag(ann[0], 'frequency'), [['3600']]);
    assert.deepEqual(tag(ann[0], 'c').map((t) => t[0]), ['nip11', 'ssl', 'open', 'read', 'nip50', 'nip45', 'nip77', 'nip42', 'limits'], 'the probes are announced (spider.monitorProbes, on by default)');
    assert.deepEqual(tag(ann[0], 'timeout')[2], ['open', '1500']);
    const profile = await q({ kinds: [0], authors: [monitor.pubkey] });
    assert.equal(JSON.parse(profile[0].content).name, 'Home monitor');

    // a second cycle: the 30166 are replaced (one per relay), each check is a snapshot, no new announcement
    const s2 = await monitor.runOnce();
    assert.equal(s2.announced, false);
    assert.equal(stored.filter((e) => e.kind === 5).length, 1, 'retracted once: the record keeps the new d');
    assertNip66(stored as SignedEvent[]);
    assert.equal((await q({ kinds: [30166] })).length, 2, 'still one 30166 per relay');
    assert.equal(monitor.history.snapshots(honest.url).length, 3, 'the seeded check of the old 30166 and two');
    assert.equal(monitor.history.snapshots(silent.url).length, 2);
    const hs = monitor.history.latest(silent.url)!;
    assert.deepEqual([hs.online, hs.uptimeDay, hs.lastOnline, hs.checks], [false, 0, null, 2]);
    const hh = monitor.history.latest(honest.url)!;
    const h1 = monitor.history.snapshots(honest.url).slice(1);
    assert.ok(hh.probeReport?.limits?.at !== undefined && hh.probeReport.limits.at < h1[1].t, 'the limits are probed once a day: the first check\'s kept at the second');
    assert.deepEqual(h1.map((x) => x.p?.['50']), ['served', 'served'], 'each check keeps its probe outcomes, like its round-trip times');
    assert.deepEqual([hh.online, hh.uptimeDay, hh.software, hh.nips], [true, 1, NIP11.software, NIP11.supported_nips]);
    assert.equal(hh.published, stored.filter((e) => e.kind === 30166 && tag(e, 'd')[0][0] === `${honest.url}/`).at(-1)!.id);
    assert.equal(hh.publishedD, `${honest.url}/`);
    await monitor.stop();
  } finally {
    await Promise.all([honest, auth, silent, unsafe].map((r) => r.close()));
    await home.close();
  }
});

test('history: a snapshot per check, pruned past the retention; figures from the snapshots', async () => {
  const home = await openHome();
  try {
    const DAY = 86_400_000;
    const history = new MonitorHistory(home.store.env, 7 * DAY);
    const url = 'wss://r.example';
    const now = Date.now();
    for (const [ago, on] of [[10, true], [8, true], [6, false], [3, true], [1, true]] as Array<[number, boolean]>) await history.addSnapshot(url, { t: now - ago * DAY, on, o: on ? ago : undefined });
    await history.addSnapshot('wss://other.example', { t: now - 10 * DAY, on: true });
    const check: RelayCheck = { url, checkedAt: now, network: 'clearnet', online: false, rtt: {}, nip11: null, observed: {}, error: 'open: refused' };
    const rec = await history.record(check);
    assert.deepEqual(history.snapshots(url).map((s) => Math.round((now - s.t) / DAY)), [6, 3, 1, 0], 'the 10 and 8 day old snapshots are gone');
    assert.equal(history.snapshots('wss://other.example').length, 1, 'other relays are pruned at their own checks');
    assert.equal(rec.uptimeWeek, 2 / 4, 'online at -3 d and -1 d of -6 d, -3 d, -1 d, now');
    assert.equal(rec.uptimeDay, 0);
    assert.deepEqual(rec.rttOpen, { p50: 1, p90: 3 });
    assert.equal(rec.lastOnline, now - 1 * DAY, 'no record before: the newest online snapshot');
    assert.equal(history.snapshots(url).at(-1)!.e, 'open: refused');
  } finally { await home.close(); }
});
