// The whole spider in-process: seeds -> hop 0 -> ... -> hop 3 over a graph of test relays, with the
// real store and ingest path. Checks hops, completeness, the hostile relay, our own relay skipped,
// a second run fetching only new events, and private addresses refused.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { npubEncode } from 'nostr-tools/nip19';
import { TestRelay, keypair, sign, relayList } from '../fixtures/test-relay.js';
import { createSpider } from '../../src/spider/spider.js';
import { openHome, spiderConfig, quietLog, population, DIRECTORY_KINDS as KINDS, type Home } from './harness.js';

const T0 = Math.floor(Date.now() / 1000) - 10_000;


const seedA = keypair();
const seedB = keypair();
const selfKey = keypair();
let r0: TestRelay, r1a: TestRelay, r1b: TestRelay, r1c: TestRelay, r2: TestRelay, r3: TestRelay, r4: TestRelay, boot: TestRelay, ownRelay: TestRelay;
let all: TestRelay[];

before(async () => {
  r0 = await new TestRelay({ flavour: 'plain' }).start();
  r1a = await new TestRelay({ flavour: 'rs' }).start();
  r1b = await new TestRelay({ hostile: true }).start();
  r1c = await new TestRelay({ nip11: { name: 'us, under another name', self: selfKey.pk } }).start();
  r2 = await new TestRelay({ flavour: 'strfry', nip11: { supported_nips: [1, 11, 45] } }).start();
  r3 = await new TestRelay({ flavour: 'nostream' }).start();
  r4 = await new TestRelay().start();
  boot = await new TestRelay().start();
  ownRelay = await new TestRelay().start(); // stands for our own relay's configured URL
  all = [r0, r1a, r1b, r1c, r2, r3, r4, boot, ownRelay];
  // hop 0: named by the seeds' lists. hop 1: named by lists on r0. hop 2: r1a's. hop 3: r2's. r4: beyond.
  r0.add(relayList(keypair().sk, T0, [r1a.url, r1b.url, r1c.url]), ...population(40, [r1a.url], T0 - 10));
  r1a.add(relayList(keypair().sk, T0, [r2.url, ownRelay.url, r0.url]), ...population(400, [r2.url], T0 - 100));
  r1c.add(...population(8, [r4.url], T0));
  // r2: 3,000 events behind its 500 cap, and 800 kind 0 events in one second (authors followed by a kind 3)
  const crowd = Array.from({ length: 800 }, (_, i) => sign(keypair().sk, 0, T0 - 50_000, [], `crowd ${i}`));
  r2.add(...population(3000, [r3.url], T0 - 200), ...crowd, sign(keypair().sk, 3, T0 - 20, crowd.map((e) => ['p', e.pubkey])));
  r3.add(...population(60, [r4.url], T0 - 30));
  r4.add(...population(12, [], T0));
  boot.add(relayList(seedB.sk, T0, [r0.url]));
});

after(async () => { await Promise.all(all.map((r) => r.close())); });

function spiderFor(home: Home, over: Record<string, unknown> = {}) {
  return createSpider({
    config: spiderConfig({ seeds: [seedA.pk, npubEncode(seedB.pk)], bootstrapRelays: [boot.url], hops: 3, selfUrls: [ownRelay.url], lookback: '1h', ...over }),
    store: home.store, ingest: home.ingest, logger: quietLog, selfPubkey: selfKey.pk,
  });
}

test('a 3-hop crawl: right hops, every directory event stored, hostile and own relays left alone, second run fetches only new events', async () => {
  const home = await openHome();
  try {
    // seed A's list is in the local store already; seed B's only on the bootstrap relay.
    const seedList = relayList(seedA.sk, T0, [r0.url]);
    assert.equal((await home.ingest(seedList, { source: 'client' })).status, 'stored');
    const spider = spiderFor(home);
    const s1 = await spider.runOnce();
    assert.equal(s1.seeds, 2);
    assert.equal(s1.seedsWithoutList, 0);
    assert.deepEqual(s1.hops.map((h) => h.relays), [1, 3, 2, 1], 'relays per hop');

    const hopOf = (r: TestRelay) => spider.directory.get(r.url)?.hop;
    assert.equal(hopOf(r0), 0);
    assert.equal(hopOf(r1a), 1);
    assert.equal(hopOf(r1b), 1);
    assert.equal(hopOf(r1c), 1);
    assert.equal(hopOf(r2), 2);
    assert.equal(hopOf(ownRelay), 2);
    assert.equal(hopOf(r3), 3);
    assert.equal(spider.directory.get(r4.url), undefined, 'a relay beyond the last hop is not crawled');
    assert.equal(r4.connections, 0);

    // Our own relay: by configured URL (never contacted) and by NIP-11 self (not subscribed to).
    assert.equal(ownRelay.connections, 0);
    assert.equal(r1c.reqs.length, 0);
    assert.equal(spider.directory.get(r1c.url)?.lastOutcome, 'self');

    // Every directory event of the honest relays is in the home store.
    for (const r of [r0, r1a, r2, r3, boot]) {
      const missing = r.events.filter((e) => KINDS.includes(e.kind) && !home.has(e.id));
      assert.equal(missing.length, 0, `${missing.length} events of ${r.url} missing`);
    }
    const expected = new Set([seedList.id, ...[r0, r1a, r2, r3, boot].flatMap((r) => r.events.map((e) => e.id))]);
    assert.equal(home.store.stats().events, expected.size, 'nothing else stored: nothing from the hostile relay');
    assert.equal(s1.events.truncated, 0);
    assert.ok(s1.events.invalid > 0, 'the hostile relay was read and its events dropped');
    assert.equal(spider.directory.get(r2.url)?.quirks.cap, undefined, 'page size 500 = cap: nothing to learn');
    assert.equal(spider.directory.get(r1a.url)?.quirks.bounds, 'exclusive');
    // The live fan-out saw every stored event.
    assert.equal(home.broadcast.length, expected.size);
    const st = spider.status();
    assert.equal(st.running, false);
    assert.equal(st.lastRun?.events.stored, s1.events.stored);
    assert.match(spider.metricsText(), /orbweaver_spider_events_stored_total \d+/);

    // Second run: only the new events are fetched.
    const fresh2 = population(5, [], Math.floor(Date.now() / 1000));
    const fresh3 = [sign(keypair().sk, 0, Math.floor(Date.now() / 1000)), sign(keypair().sk, 10000, Math.floor(Date.now() / 1000))];
    r2.add(...fresh2);
    r3.add(...fresh3);
    const before = home.broadcast.length;
    const s2 = await spider.runOnce();
    assert.equal(s2.events.fetched, 7, 'only new events fetched');
    assert.equal(s2.events.stored, 7);
    assert.equal(home.broadcast.length - before, 7);
    assert.deepEqual(s2.hops.map((h) => h.relays), [1, 3, 2, 1], 'same hops from the remembered links');
    for (const e of [...fresh2, ...fresh3]) assert.ok(home.has(e.id));
    await spider.stop();
  } finally { await home.close(); }
});

test('private addresses are refused when not allowed: nothing is contacted', async () => {
  const home = await openHome();
  try {
    await home.ingest(relayList(seedA.sk, T0, [r0.url]), { source: 'client' });
    const conns = all.map((r) => r.connections);
    const spider = spiderFor(home, { allowPrivate: false });
    const s = await spider.runOnce();
    assert.equal(s.relays.refused, 1);
    assert.equal(s.relays.reached, 0);
    assert.equal(s.events.fetched, 0);
    assert.deepEqual(all.map((r) => r.connections), conns, 'no connection to any relay, bootstrap included');
    await spider.stop();
  } finally { await home.close(); }
});

test('start() runs at once and schedules the next run; runs never overlap; stop() ends it', async () => {
  const home = await openHome();
  try {
    const spider = spiderFor(home, { seeds: [], admins: [], interval: '1h' });
    spider.start();
    const a = spider.runOnce();
    const b = spider.runOnce();
    assert.equal(a, b, 'a run in progress is shared, not doubled');
    await a;
    assert.ok(spider.status().nextRun !== null, 'next run scheduled');
    await spider.stop();
    assert.equal(spider.status().nextRun, null);
  } finally { await home.close(); }
});
