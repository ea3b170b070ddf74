// Complete fetch of one relay (crawlRelay, the unit of work) against test relays that behave like
// strfry, nostream and nostr-rs-relay, plus the failure modes: never EOSE, auth-required,
// rate-limited, hostile. Events go through the real ingest path into a real store.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { TestRelay, keypair, sign, relayList } from '../fixtures/test-relay.js';
import { crawlRelay } from '../../src/spider/fetch/crawl.js';
import type { WorkItem } from '../../src/directory/types.js';
import type { NostrEvent } from '../../src/nostr/event.js';
import { openHome, crawlDeps, type Home } from './harness.js';

const KINDS = [0, 3, 10000, 10002];
const NOW = Math.floor(Date.now() / 1000);
const item = (url: string, over: Partial<WorkItem> = {}): WorkItem => ({ url, hop: 0, kinds: KINDS, discover: true, quirks: {}, cursors: {}, ...over });

/** `n` events of the directory kinds with unique (author, kind), spread over time, a few per second. */
function spread(n: number, start = NOW - 400_000, perSecond = 3): NostrEvent[] {
  const out: NostrEvent[] = [];
  let key = keypair();
  for (let i = 0; i < n; i++) {
    const kind = KINDS[i % 4];
    if (i % 4 === 0) key = keypair();
    const t = start + Math.floor(i / perSecond) * 7;
    out.push(kind === 10002 ? relayList(key.sk, t, [`wss://relay${i % 13}.example.com`]) : sign(key.sk, kind, t, [], `event ${i}`));
  }
  return out;
}

let big: NostrEvent[]; // 3,000 events spread out
let crowd: NostrEvent[]; // 800 kind 0 events in one second
let follows: NostrEvent; // a follow list naming the crowd's authors
const crowdSecond = NOW - 500_000;
let home: Home;

before(async () => {
  big = spread(3000);
  crowd = Array.from({ length: 800 }, (_, i) => sign(keypair().sk, 0, crowdSecond, [], `crowd ${i}`));
  follows = sign(keypair().sk, 3, NOW - 1000, crowd.map((e) => ['p', e.pubkey]));
});

async function withHome<T>(fn: (h: Home) => Promise<T>): Promise<T> {
  home = await openHome();
  try { return await fn(home); } finally { await home.close(); }
}

test('strfry-like relay: 3,000 events behind a 500 cap and 800 events in one second all arrive', async () => {
  const relay = await new TestRelay({ flavour: 'strfry', nip11: { name: 'strfry-like', supported_nips: [1, 11, 45] } }).start();
  relay.add(...big, ...crowd, follows);
  try {
    await withHome(async (h) => {
      // pageSize above the cap: the cap must be learned from short pages followed by more events.
      const r = await crawlRelay(item(relay.url), crawlDeps(h, { pageSize: 1000 }));
      assert.equal(r.outcome, 'ok', r.error);
      const missing = relay.events.filter((e) => !h.has(e.id));
      assert.equal(missing.length, 0, `${missing.length} events missing from the home store`);
      assert.equal(r.counts.stored, relay.events.length);
      assert.equal(r.quirks.cap, 500);
      assert.equal(r.quirks.bounds, 'inclusive');
      assert.equal(r.counts.truncated, 0);
      assert.equal(r.counts.invalid, 0);
      for (const k of KINDS) assert.ok(r.cursors[String(k)], `cursor for kind ${k}`);
      assert.ok(Object.keys(r.links).length >= 13, 'relays named by the kind 10002 lists are reported');
      assert.equal(relay.connections, 1, 'one WebSocket for all subscriptions');
    });
  } finally { await relay.close(); }
});

test('a stuck second whose authors are unknown is counted as truncated, not lost silently', async () => {
  const relay = await new TestRelay({ flavour: 'strfry', nip11: { supported_nips: [1, 45] } }).start();
  relay.add(...crowd); // no follow list: nobody knows the other 300 authors
  try {
    await withHome(async (h) => {
      const r = await crawlRelay(item(relay.url), crawlDeps(h));
      assert.equal(r.counts.stored, 500);
      assert.equal(r.counts.truncated, 300);
    });
  } finally { await relay.close(); }
});

test('nostream-like relay: a refused limit is halved and remembered', async () => {
  const relay = await new TestRelay({ flavour: 'nostream', maxLimitError: 2000 }).start();
  relay.add(...big);
  try {
    await withHome(async (h) => {
      const r = await crawlRelay(item(relay.url), crawlDeps(h, { pageSize: 5000 }));
      assert.equal(r.outcome, 'ok', r.error);
      assert.equal(r.quirks.maxLimit, 1250);
      assert.equal(relay.events.filter((e) => !h.has(e.id)).length, 0);
      assert.ok(relay.reqs.every((f) => typeof f.limit === 'number'), 'every REQ carries a limit (no oldest-first surprise)');
    });
  } finally { await relay.close(); }
});

test('nostr-rs-relay-like relay: exclusive since/until is detected and nothing at page edges is lost', async () => {
  const relay = await new TestRelay({ flavour: 'rs' }).start();
  relay.add(...spread(1200, NOW - 100_000, 11));
  try {
    await withHome(async (h) => {
      const r = await crawlRelay(item(relay.url), crawlDeps(h, { pageSize: 100 }));
      assert.equal(r.outcome, 'ok', r.error);
      assert.equal(r.quirks.bounds, 'exclusive');
      assert.equal(relay.events.filter((e) => !h.has(e.id)).length, 0);
    });
  } finally { await relay.close(); }
});

test('a relay that never sends EOSE is read to the idle timeout and remembered as such', async () => {
  const relay = await new TestRelay({ flavour: 'plain', noEose: true }).start();
  relay.add(...big.slice(0, 300));
  try {
    await withHome(async (h) => {
      const r = await crawlRelay(item(relay.url), crawlDeps(h, { pageSize: 100, idleTimeout: '200ms' }));
      assert.notEqual(r.outcome, 'failed', r.error);
      assert.equal(r.quirks.noEose, true);
      assert.equal(relay.events.filter((e) => !h.has(e.id)).length, 0);
    });
  } finally { await relay.close(); }
});

test('auth-required: the relay is given up on and remembered; rate-limited: backed off and completed', async () => {
  const auth = await new TestRelay({ closeWith: 'auth-required: we only serve members' }).start();
  const limited = await new TestRelay({ rateLimitFirst: 3 }).start();
  auth.add(...big.slice(0, 40));
  limited.add(...big.slice(0, 400));
  try {
    await withHome(async (h) => {
      const a = await crawlRelay(item(auth.url), crawlDeps(h));
      assert.equal(a.outcome, 'failed');
      assert.equal(a.quirks.authRequired, true);
      assert.equal(a.counts.stored, 0);
      const l = await crawlRelay(item(limited.url), crawlDeps(h, { pageSize: 100 }));
      assert.equal(l.outcome, 'ok', l.error);
      assert.equal(l.quirks.rateLimited, 3);
      assert.equal(limited.events.filter((e) => !h.has(e.id)).length, 0);
    });
  } finally { await auth.close(); await limited.close(); }
});

test('hostile relay: bad signatures, off-filter events, oversized frames and floods are all dropped', async () => {
  const relay = await new TestRelay({ hostile: true }).start();
  try {
    await withHome(async (h) => {
      const r = await crawlRelay(item(relay.url), crawlDeps(h, { idleTimeout: '1500ms', pageSize: 200 }));
      assert.equal(r.counts.stored, 0);
      assert.equal(r.counts.fetched, 0);
      assert.ok(r.counts.invalid > 0);
      assert.equal(h.broadcast.length, 0, 'nothing stored or broadcast');
      assert.deepEqual(await h.store.query([{}], { defaultLimit: 10, maxLimit: 10 }), []);
      // most of what it sent was forged or outside the filter: the page ends there, before its flood
      assert.match(r.error ?? '', /cut off: most events it sent were forged, malformed or outside the filter/);
      assert.ok(r.counts.invalid < 200, `read no further than a window or two (${r.counts.invalid} refused)`);
    });
  } finally { await relay.close(); }
});

test('a second run fetches only new events, and a cut-off backfill resumes', async () => {
  const relay = await new TestRelay({ flavour: 'strfry' }).start();
  relay.add(...big.slice(0, 1000));
  try {
    await withHome(async (h) => {
      // First run cut off by the per-relay event cap: a partial cursor is kept.
      const r1 = await crawlRelay(item(relay.url, { kinds: [0] }), crawlDeps(h, { pageSize: 100, maxEventsPerRelay: 120 }));
      assert.equal(r1.outcome, 'partial');
      const c1 = r1.cursors['0'];
      assert.ok(c1 && c1.lo > 0, 'partial cursor');
      // Second run: nothing new above the cursor, the backfill resumes and completes.
      const r2 = await crawlRelay(item(relay.url, { kinds: [0], cursors: r1.cursors, quirks: r1.quirks }), crawlDeps(h, { pageSize: 100 }));
      assert.equal(r2.outcome, 'ok', r2.error);
      assert.equal(r2.cursors['0'].lo, 0);
      assert.equal(r1.counts.stored + r2.counts.stored, 250, 'every kind 0 event stored');
      assert.ok(r2.counts.duplicate <= 3, 'the backfill resumes where the first run stopped (only the edge second again)');
      assert.equal(relay.events.filter((e) => e.kind === 0 && !h.has(e.id)).length, 0);
      // Third run after new events (dated before the cursor's end: they arrived late, which the
      // lookback covers): only those are fetched.
      const fresh = Array.from({ length: 7 }, (_, i) => sign(keypair().sk, 0, Math.floor(Date.now() / 1000) - i, [], 'new'));
      relay.add(...fresh);
      const r3 = await crawlRelay(item(relay.url, { kinds: [0], cursors: r2.cursors, quirks: r2.quirks }), crawlDeps(h, { pageSize: 100, lookback: '1h' }));
      assert.equal(r3.counts.fetched, 7);
      assert.equal(r3.counts.stored, 7);
      for (const e of fresh) assert.ok(h.has(e.id));
    });
  } finally { await relay.close(); }
});

test('private addresses are refused unless allowed', async () => {
  const relay = await new TestRelay().start();
  try {
    await withHome(async (h) => {
      const r = await crawlRelay(item(relay.url), crawlDeps(h, { allowPrivate: false }));
      assert.equal(r.outcome, 'refused');
      assert.equal(relay.connections, 0);
    });
  } finally { await relay.close(); }
});
