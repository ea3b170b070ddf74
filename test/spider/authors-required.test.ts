// Relays that answer only REQs naming authors (issue 73: such a relay refused the spider's REQs, one
// per kind, and was never asked by author, so 3,347 of the 3,359 events only it held were lost).
// The spider pages such a relay by the authors it knows: authors learnt before its crawl (relay
// lists and follow lists elsewhere), during it (its own follow lists) and after it (a relay crawled
// later: the run's last pass, late-authors.ts). Loopback relays (test/fixtures/test-relay.ts) and,
// for `spider --once`, a real relay process as the home.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startRelayProcess } from '../helpers/relay-process.js';
import { Client } from '../helpers/client.js';
import { TestRelay, keypair, sign, relayList } from '../fixtures/test-relay.js';
import { loadConfig } from '../../src/config.js';
import type { SpiderSummary } from '../../src/spider/status.js';
import { openStore } from '../../src/store/index.js';
import { RelayDirectory } from '../../src/directory/records.js';
import { normalizeRelayUrl } from '../../src/remote/url.js';
import { crawlRelay } from '../../src/spider/fetch/crawl.js';
import type { NostrEvent } from '../../src/nostr/event.js';
import type { WorkItem } from '../../src/directory/types.js';
import { openHome, crawlDeps, spiderOnceJson } from './harness.js';

const T0 = Math.floor(Date.now() / 1000) - 5000;
const KINDS = [0, 3, 10000, 10002];
const item = (url: string, over: Partial<WorkItem> = {}): WorkItem => ({ url, hop: 0, kinds: KINDS, discover: true, quirks: {}, cursors: {}, ...over });

/** n fresh authors, each with a profile and a mute list (the mute list of the first one dated 0). */
function people(n: number, tag: string): { pks: string[]; events: NostrEvent[]; keys: Array<{ sk: Uint8Array; pk: string }> } {
  const keys = Array.from({ length: n }, () => keypair());
  const events = keys.flatMap((k, i) => [sign(k.sk, 0, T0 - i, [], `${tag} ${i}`), sign(k.sk, 10000, i === 0 ? 0 : T0 - 2 * i, [], '')]);
  return { pks: keys.map((k) => k.pk), events, keys };
}

/** Reads back the ids the home relay holds of `ids`. */
async function held(url: string, ids: string[]): Promise<Set<string>> {
  const c = await Client.open(url);
  try {
    const out = new Set<string>();
    for (let i = 0; i < ids.length; i += 500) {
      const sub = `q${i}`;
      c.send(['REQ', sub, { ids: ids.slice(i, i + 500) }]);
      await c.next((m) => m[0] === 'EOSE' && m[1] === sub, 10_000, 'EOSE');
    }
    for (const m of c.inbox) if (m[0] === 'EVENT') out.add((m[2] as NostrEvent).id);
    return out;
  } finally { c.ws.close(); }
}

test('spider --once: every event held only by a relay that answers only REQs naming authors arrives', async () => {
  const home = await startRelayProcess();
  const p = await new TestRelay({ flavour: 'plain' }).start();
  // strfry's cap as well: pages by author are capped like pages by kind
  const q = await new TestRelay({ flavour: 'strfry', cap: 100, authorsRequired: { reason: 'blocked: filters must name authors' } }).start();
  const r = await new TestRelay({ flavour: 'plain' }).start();
  try {
    const seed = keypair();
    // A: 150 authors whose relay lists (on p and q) name p and q: q is found at hop 1.
    const a = people(150, 'a');
    const aLists = a.keys.map((k) => relayList(k.sk, T0, [p.url, q.url]));
    // B: 250 authors followed by someone whose follow list is on p (more than one batch of authors).
    const b = people(250, 'b');
    const bFollower = sign(keypair().sk, 3, T0, b.pks.map((pk) => ['p', pk]));
    p.add(...aLists, bFollower);
    // C: 60 authors named by a follow list that only q holds (by B's first author): learnt during q's own sweep.
    const c = people(60, 'c');
    const cFollows = sign(b.keys[0].sk, 3, T0, c.pks.map((pk) => ['p', pk]));
    // B's second author's relay list, only on q, names r: r is found at hop 2, after q's crawl.
    const bList = relayList(b.keys[1].sk, T0, [r.url]);
    // D: 40 authors named only by a follow list on r: learnt after q's crawl (the run's last pass asks q for them).
    const d = people(40, 'd');
    r.add(sign(keypair().sk, 3, T0, d.pks.map((pk) => ['p', pk])));
    const onlyQ = [...a.events, ...b.events, ...c.events, ...d.events, cFollows, bList];
    q.add(...aLists, ...onlyQ);

    const pub = await Client.open(home.url);
    const seedList = relayList(seed.sk, T0, [p.url]);
    pub.send(['EVENT', seedList]);
    await pub.next((m) => m[0] === 'OK' && m[1] === seedList.id, 5000, 'OK for the seed list');
    pub.ws.close();

    const config = loadConfig({
      env: {},
      flags: {
        host: '127.0.0.1', port: home.port, dataDir: home.dataDir, logLevel: 'silent',
        spider: { seeds: [seed.pk], allowPrivate: true, hops: 2, idleTimeout: '10s', pause: 0 },
      },
    });
    const s = await spiderOnceJson<SpiderSummary>(config);
    assert.deepEqual(s.hops.map((h) => h.relays), [1, 1, 1], 'p at hop 0, q at hop 1, r at hop 2');

    // q refused what named no authors, and was asked by author for everything else
    assert.ok(q.refusedNoAuthors > 0, 'q was asked without authors first');
    assert.ok(q.reqs.some((f) => Array.isArray(f.authors)), 'q was asked by author');
    assert.ok(q.reqs.every((f) => Number(f.until ?? 1) >= 1), 'no REQ asked until <= 0');

    const expected = [...onlyQ, ...aLists, bFollower, ...r.events].map((e) => e.id);
    const got = await held(home.url, expected);
    const missing = {
      a: a.events.filter((e) => !got.has(e.id)).length,
      b: b.events.filter((e) => !got.has(e.id)).length,
      c: c.events.filter((e) => !got.has(e.id)).length,
      d: d.events.filter((e) => !got.has(e.id)).length,
      other: [cFollows, bList, ...aLists, bFollower, ...r.events].filter((e) => !got.has(e.id)).length,
    };
    assert.deepEqual(missing, { a: 0, b: 0, c: 0, d: 0, other: 0 }, 'events held only by q, by when their authors were learnt');
    assert.equal(s.events.stored, new Set(expected).size, 'each stored once');

    // The quirk is kept with q's record (used from the first REQ of the next run).
    const store = await openStore({ dir: home.dataDir, readOnly: true });
    try {
      const rec = new RelayDirectory(store.env).get(normalizeRelayUrl(q.url)!);
      assert.equal(rec?.quirks.authorsRequired, true);
      assert.equal(rec?.lastOutcome, 'ok', rec?.lastError);
    } finally { await store.close(); }
  } finally {
    await p.close();
    await q.close();
    await r.close();
    await home.cleanup();
  }
});

test('a relay that refuses filters without authors by NOTICE: paged by author, and by author only from the next crawl on', async () => {
  const q = await new TestRelay({ flavour: 'strfry', cap: 50, authorsRequired: { reason: 'ERROR: too broad filter', notice: true } }).start();
  const h = await openHome();
  try {
    const x = people(120, 'x');
    const lists = x.keys.map((k) => relayList(k.sk, T0, ['wss://elsewhere.example.com']));
    q.add(...x.events, ...lists);
    const deps = crawlDeps(h, { pageSize: 50 });
    for (const pk of x.pks) deps.shared.authors.add(pk);
    const first = await crawlRelay(item(q.url), deps);
    assert.equal(first.outcome, 'ok', first.error);
    assert.equal(first.quirks.authorsRequired, true);
    assert.equal(q.events.filter((e) => !h.has(e.id)).length, 0, 'every event, the mute list dated 0 among them');
    assert.ok(q.refusedNoAuthors > 0);

    // Next crawl: no REQ without authors, and what is new arrives.
    const refused = q.refusedNoAuthors;
    const fresh = sign(x.keys[7].sk, 0, T0 + 100, [], 'newer profile');
    q.add(fresh);
    const second = await crawlRelay(item(q.url, { quirks: first.quirks, cursors: first.cursors }), deps);
    assert.equal(second.outcome, 'ok', second.error);
    assert.equal(q.refusedNoAuthors, refused, 'asked by author from its first REQ');
    assert.ok(h.has(fresh.id));
  } finally {
    await q.close();
    await h.close();
  }
});

test('a relay that also takes at most 30 authors in a filter: the batch is halved until it fits, remembered', async () => {
  const q = await new TestRelay({ authorsRequired: { reason: 'restricted: a filter must name pubkeys', maxAuthors: 30 } }).start();
  const h = await openHome();
  try {
    const x = people(100, 'y');
    q.add(...x.events);
    const deps = crawlDeps(h, { pageSize: 200 });
    for (const pk of x.pks) deps.shared.authors.add(pk);
    const r = await crawlRelay(item(q.url), deps);
    assert.equal(r.outcome, 'ok', r.error);
    assert.equal(r.quirks.authorsRequired, true);
    assert.ok((r.quirks.maxAuthors ?? Infinity) <= 30, `maxAuthors ${r.quirks.maxAuthors}`);
    assert.equal(q.events.filter((e) => !h.has(e.id)).length, 0);
  } finally {
    await q.close();
    await h.close();
  }
});
