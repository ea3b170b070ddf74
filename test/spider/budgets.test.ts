// The spider honours its budgets everywhere (issue 9): a remote relay that advertises max_limit 1 and
// NIP-45, holds one event per second and never answers COUNT makes every second a stuck slice. The
// relay budget and the spider's stop must still end the fetch (slice splitting and COUNT included),
// stuck slices are capped per kind, and with concurrency 1 the relays after it are still crawled.
// Each test is bounded by its own timeout: a spider that waits out COUNTs fails by timing out.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { TestRelay, keypair, sign, relayList } from '../fixtures/test-relay.js';
import { crawlRelay } from '../../src/spider/fetch/crawl.js';
import { createSpider } from '../../src/spider/spider.js';
import type { NostrEvent } from '../../src/nostr/event.js';
import { openHome, crawlDeps, spiderConfig, quietLog, waitFor } from './harness.js';

const T0 = Math.floor(Date.now() / 1000) - 50_000;
const SECONDS = 300;
let oneASecond: NostrEvent[];

before(() => {
  // kind 0 by distinct authors, one per second: with max_limit 1 each second is a stuck slice
  oneASecond = Array.from({ length: SECONDS }, (_, i) => sign(keypair().sk, 0, T0 - i, [], `p${i}`));
});

/** max_limit 1, NIP-45 advertised, COUNT never answered. */
const stalling = () => new TestRelay({ flavour: 'strfry', cap: 1, countSilent: true, nip11: { supported_nips: [1, 11, 45], limitation: { max_limit: 1 } } }).start();

test('a relay that never answers COUNT: the fetch ends, one COUNT is sent, stuck seconds are capped and counted', { timeout: 30_000 }, async () => {
  const relay = await stalling();
  const events = oneASecond.slice(0, 100); // paged within the budget; the COUNT stalls it
  relay.add(...events);
  const home = await openHome();
  try {
    // The case: a 3 s budget and the default 15 s idle timeout, which each COUNT used to
    // wait out (100 slices: 25 minutes).
    const r = await crawlRelay({ url: relay.url, hop: 0, kinds: [0], discover: false, quirks: {}, cursors: {} },
      crawlDeps(home, { idleTimeout: '15s', relayBudget: '3s', maxStuckSlices: 20 }));
    assert.equal(relay.countReqs, 1, 'COUNT asked once: an unanswered COUNT is not asked again, and not awaited past the budget');
    assert.equal(r.counts.fetched, events.length);
    assert.equal(r.counts.stored, events.length);
    // Every second is a slice that could not be proven complete (20 split, 80 over the cap); none is lost silently.
    assert.equal(r.counts.truncatedSlices, events.length);
    assert.equal(r.counts.truncated, 0);
  } finally { await home.close(); await relay.close(); }
});

test('concurrency 1: the stalling relay takes its budget, the next relay is crawled completely', { timeout: 30_000 }, async () => {
  const bad = await stalling();
  const good = await new TestRelay({ flavour: 'strfry' }).start();
  bad.add(...oneASecond);
  const onGood = Array.from({ length: 60 }, (_, i) => sign(keypair().sk, i % 2 ? 0 : 10002, T0 - i));
  good.add(...onGood);
  const seedA = keypair(), seedB = keypair();
  const home = await openHome();
  try {
    // Both relays at hop 0; the stalling one is named by two seeds, so it is crawled first.
    for (const ev of [relayList(seedA.sk, T0, [bad.url]), relayList(seedB.sk, T0, [bad.url, good.url])]) await home.ingest(ev, { source: 'client' });
    const spider = createSpider({
      config: spiderConfig({ seeds: [seedA.pk, seedB.pk], hops: 0, concurrency: 1, idleTimeout: '15s', relayBudget: '2s', kinds: [0, 10002] }),
      store: home.store, ingest: home.ingest, logger: quietLog,
    });
    const s = await spider.runOnce();
    assert.equal(s.relays.reached, 2);
    assert.equal(onGood.filter((e) => !home.has(e.id)).length, 0, 'every event of the relay after the stalling one stored');
    assert.ok(bad.countReqs <= 1);
    await spider.stop();
  } finally { await home.close(); await bad.close(); await good.close(); }
});

test('stop() during a stalled COUNT ends the run at once', { timeout: 30_000 }, async () => {
  const relay = await stalling();
  relay.add(...oneASecond);
  const seed = keypair();
  const home = await openHome();
  try {
    await home.ingest(relayList(seed.sk, T0, [relay.url]), { source: 'client' });
    // Default budget (10 min) and idle timeout (15 s): only the stop can end this quickly.
    const spider = createSpider({
      config: spiderConfig({ seeds: [seed.pk], hops: 0, idleTimeout: '15s', relayBudget: '10m', kinds: [0] }),
      store: home.store, ingest: home.ingest, logger: quietLog,
    });
    const run = spider.runOnce();
    await waitFor(() => relay.countReqs >= 1, 20_000, 'the first COUNT');
    await spider.stop();
    const s = await run;
    assert.equal(s.aborted, true);
    assert.equal(relay.countReqs, 1);
    assert.equal(s.events.truncatedSlices, s.events.fetched, 'the slices not split are counted, not dropped');
  } finally { await home.close(); await relay.close(); }
});
