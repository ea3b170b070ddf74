// The network's paging quirks of issue 73 beyond relay software's own (authors-required.test.ts has
// the relay that answers only by author): an indexer that reads `until <= 0` as "no until" and
// holds events dated 0, a relay that sends events outside the filter's window, and one that limits
// REQs per address (the pace learnt and kept). One crawl of a loopback relay each (crawlRelay),
// through the real ingest path into a real store.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TestRelay, keypair, sign, relayList } from '../fixtures/test-relay.js';
import { crawlRelay } from '../../src/spider/fetch/crawl.js';
import type { WorkItem } from '../../src/directory/types.js';
import type { NostrEvent } from '../../src/nostr/event.js';
import { openHome, crawlDeps, type Home } from './harness.js';

const KINDS = [0, 3, 10000, 10002];
const NOW = Math.floor(Date.now() / 1000);
const item = (url: string, over: Partial<WorkItem> = {}): WorkItem => ({ url, hop: 0, kinds: KINDS, discover: true, quirks: {}, cursors: {}, ...over });

/** `n` events of the directory kinds with unique (author, kind), a few per second from `start` on. */
function spread(n: number, start: number): NostrEvent[] {
  const out: NostrEvent[] = [];
  let key = keypair();
  for (let i = 0; i < n; i++) {
    const kind = KINDS[i % 4];
    if (i % 4 === 0) key = keypair();
    const t = start + Math.floor(i / 3) * 7;
    out.push(kind === 10002 ? relayList(key.sk, t, ['wss://elsewhere.example.com']) : sign(key.sk, kind, t, [], `event ${i}`));
  }
  return out;
}

async function withHome<T>(fn: (h: Home) => Promise<T>): Promise<T> {
  const home = await openHome();
  try { return await fn(home); } finally { await home.close(); }
}

test('until <= 0 read as no until: never sent; events dated 0 and 1 all arrive, a second 0 fuller than a page too', async () => {
  const relay = await new TestRelay({ untilZeroIsNone: true }).start();
  try {
    // kind 10002 lists dated 0 (as on indexers), events at second 1, and more kind 0 events dated 0
    // than a page holds, by authors a follow list names (the stuck second is split by author)
    const zeros = Array.from({ length: 8 }, () => relayList(keypair().sk, 0, ['wss://elsewhere.example.com']));
    const ones = Array.from({ length: 5 }, (_, i) => sign(keypair().sk, 10000, 1, [], `one ${i}`));
    const crowd = Array.from({ length: 70 }, (_, i) => sign(keypair().sk, 0, 0, [], `crowd at 0 ${i}`));
    const follows = sign(keypair().sk, 3, NOW - 10, crowd.map((e) => ['p', e.pubkey]));
    relay.add(...spread(200, NOW - 100_000), ...zeros, ...ones, ...crowd, follows);
    await withHome(async (h) => {
      const r = await crawlRelay(item(relay.url), crawlDeps(h, { pageSize: 50 }));
      assert.equal(r.outcome, 'ok', r.error);
      assert.deepEqual(relay.reqs.filter((f) => f.until !== undefined && Number(f.until) <= 0), [], 'no REQ with until <= 0');
      assert.equal(relay.events.filter((e) => !h.has(e.id)).length, 0, 'every event, those dated 0 and 1 among them');
      // the newest page again for until <= 0 would have been fetched for ever (bounded by the budget)
      assert.ok(relay.reqs.length < 60, `${relay.reqs.length} REQs`);
    });
  } finally { await relay.close(); }
});

test('events outside the filter\'s window: dropped apart, not held against the relay, nothing lost', async () => {
  const relay = await new TestRelay({ outsideWindow: 5 }).start();
  try {
    relay.add(...spread(400, NOW - 100_000));
    await withHome(async (h) => {
      const r = await crawlRelay(item(relay.url), crawlDeps(h, { pageSize: 50 }));
      assert.equal(r.outcome, 'ok', r.error);
      assert.ok((r.quirks.outsideWindow ?? 0) > 0, 'counted');
      assert.equal(relay.events.filter((e) => !h.has(e.id)).length, 0);
    });
  } finally { await relay.close(); }
});

test('a rate limit per address: the pace is learnt, kept, and the next crawl starts at it', async () => {
  // REQs closer than 120 ms together, from any connection, are refused
  const relay = await new TestRelay({ minReqGap: 120 }).start();
  try {
    relay.add(...spread(300, NOW - 100_000));
    await withHome(async (h) => {
      const first = await crawlRelay(item(relay.url), crawlDeps(h, { pageSize: 50 }));
      assert.equal(first.outcome, 'ok', first.error);
      assert.equal(relay.events.filter((e) => !h.has(e.id)).length, 0);
      const pace = first.quirks.pace ?? 0;
      assert.ok(pace >= 120, `pace ${pace} ms`);
      const refusedFirst = relay.refusedTooSoon;
      assert.ok(refusedFirst > 0);
      // the next crawl (whole again: no cursors) keeps the pace from its first REQ
      const second = await crawlRelay(item(relay.url, { quirks: first.quirks }), crawlDeps(h, { pageSize: 50 }));
      assert.equal(second.outcome, 'ok', second.error);
      assert.ok(relay.refusedTooSoon - refusedFirst < refusedFirst, `refused ${refusedFirst}, then ${relay.refusedTooSoon - refusedFirst}`);
    });
  } finally { await relay.close(); }
});
