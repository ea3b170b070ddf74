// Live mode and spider.hops on the real relay process (issue 77): a loopback network of three relays
// where the crawl (hops = 1) reaches a (hop 0) and b (hop 1), and c is named only by the relay lists
// fetched from b — one hop beyond the limit, so no crawl places it. The rule (docs/spider.md "Which
// relays"): by default live mode follows the write relays of the most pubkeys whatever their hop, so
// c is followed live; with spider.live.maxHop = 1 nothing of live mode (the live set, the outbox
// refresh) ever connects to c. /directory and /directory.json show each live relay's hop, none for c.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startRelayProcess, type RelayProcess } from '../helpers/relay-process.js';
import { TestRelay, keypair, sign, relayList } from '../fixtures/test-relay.js';
import { waitFor } from './harness.js';

const T0 = Math.floor(Date.now() / 1000) - 5000;
const DAY = 86_400;

interface Network { a: TestRelay; b: TestRelay; c: TestRelay; seed: string; stale: string; close(): Promise<void> }

/**
 * a holds the seed's list (naming a) and three lists naming b; b holds four lists naming c as their
 * only write relay, and one ten days old (stale: the outbox refresh asks for its author) naming b
 * and c; c holds the profiles of c's writers.
 */
async function network(): Promise<Network> {
  const [a, b, c] = await Promise.all([new TestRelay({ flavour: 'strfry' }).start(), new TestRelay({ flavour: 'strfry' }).start(), new TestRelay({ flavour: 'strfry' }).start()]);
  const seed = keypair();
  a.add(relayList(seed.sk, T0, [a.url]), ...Array.from({ length: 3 }, () => relayList(keypair().sk, T0, [b.url])));
  const writers = Array.from({ length: 4 }, () => keypair());
  const stale = keypair();
  b.add(...writers.map((w) => relayList(w.sk, T0, [c.url])), relayList(stale.sk, T0 - 10 * DAY, [b.url, c.url]));
  c.add(...writers.map((w) => sign(w.sk, 0, T0, [], 'writes on c')));
  return { a, b, c, seed: seed.pk, stale: stale.pk, close: async () => { await Promise.all([a.close(), b.close(), c.close()]); } };
}

function startHome(n: Network, env: Record<string, string> = {}): Promise<RelayProcess> {
  return startRelayProcess({
    env: {
      ORBWEAVER_SPIDER: '1',
      ORBWEAVER_SPIDER_SEEDS: n.seed,
      ORBWEAVER_SPIDER_BOOTSTRAP_RELAYS: n.a.url,
      ORBWEAVER_SPIDER_ALLOW_PRIVATE: '1',
      ORBWEAVER_SPIDER_HOPS: '1',
      ORBWEAVER_SPIDER_IDLE_TIMEOUT: '2s',
      ORBWEAVER_SPIDER_PAUSE: '0',
      ORBWEAVER_SPIDER_INTERVAL: '24h',
      // a round every tick, so the test can wait for one that planned the stale author
      ORBWEAVER_SPIDER_LIVE_OUTBOX_INTERVAL: '1s',
      ...env,
      ...(process.env.LIVE_TEST_LOGS ? { ORBWEAVER_LOG_LEVEL: 'debug' } : {}),
    },
  });
}

type LiveRemote = { url: string; state: string; hop: number | null };
type DirectoryJson = { live?: { maxHop: number; remotes: LiveRemote[] } };
const liveOf = async (home: RelayProcess) => ((await (await fetch(home.httpUrl + '/directory.json')).json()) as DirectoryJson).live;

/** /directory.json's live part once `cond` holds of it. */
async function liveWhen(home: RelayProcess, cond: (live: DirectoryJson['live']) => boolean, what: string): Promise<DirectoryJson['live']> {
  const end = Date.now() + 30_000;
  for (;;) {
    const live = await liveOf(home);
    if (cond(live)) return live;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(live)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The live table of /directory as [relay, hop, state] per row. */
async function liveTable(home: RelayProcess): Promise<string[][]> {
  const html = await (await fetch(home.httpUrl + '/directory')).text();
  const section = /<section id="live">([\s\S]*?)<\/section>/.exec(html)?.[1] ?? '';
  assert.match(section, /<th>relay<\/th><th>hop<\/th><th>state<\/th>/, 'the live table has a hop column');
  return [...section.matchAll(/<tr><td>([^<]*)<\/td><td>([^<]*)<\/td><td>([^<]*)<\/td>/g)].map((m) => [m[1]!, m[2]!, m[3]!]);
}

const logIndex = (home: RelayProcess, pred: (l: Record<string, unknown>) => boolean, from = 0) => home.logs.findIndex((l, i) => i >= from && pred(l));

function dumpLogs(home: RelayProcess): void {
  if (process.env.LIVE_TEST_LOGS) for (const l of home.logs) if (/live|spider/.test(String(l.msg))) console.error(JSON.stringify(l).slice(0, 400));
}

test('live.maxHop = 1: a relay named only by lists beyond spider.hops is never contacted; a and b are live with their hops', async () => {
  const n = await network();
  const home = await startHome(n, { ORBWEAVER_SPIDER_LIVE_MAX_HOP: '1' });
  try {
    // live mode has had its chances to reach c: the choice made after the crawl, and an outbox
    // round that planned the stale author whose list names b and c
    let finished = -1;
    await waitFor(() => (finished = logIndex(home, (l) => l.msg === 'spider: run finished')) >= 0, 30_000, 'the crawl finished');
    await waitFor(() => logIndex(home, (l) => l.msg === 'live: relays chosen' && Number(l.relays) >= 2, finished) >= 0, 30_000, 'the live set chosen after the crawl');
    await waitFor(() => logIndex(home, (l) => l.msg === 'live: outbox refresh done' && Number(l.pubkeys) >= 1) >= 0, 30_000, 'an outbox round that asked for the stale author');
    await waitFor(() => n.a.liveSubs >= 1 && n.b.liveSubs >= 1, 30_000, 'a and b followed live');
    assert.ok(n.b.reqs.some((f) => Array.isArray(f.authors) && f.authors.includes(n.stale)), 'the outbox round asked b for the stale author');

    assert.equal(n.c.connections, 0, 'c, beyond the bound, was never connected to');
    const live = await liveOf(home);
    assert.equal(live?.maxHop, 1);
    assert.deepEqual(live?.remotes.map((r) => [r.url, r.hop]).sort(), [[n.a.url, 0], [n.b.url, 1]].sort(), '/directory.json: the live relays and their hops, c not among them');
    assert.deepEqual((await liveTable(home)).map((r) => [r[0], r[1]]).sort(), [[n.a.url, '0'], [n.b.url, '1']].sort(), '/directory shows each live relay\'s hop');
    const chosen = home.logs.filter((l) => l.msg === 'live: relays chosen').at(-1);
    assert.equal(chosen?.beyondHops, 0, 'nothing beyond spider.hops followed');
  } catch (e) {
    dumpLogs(home);
    throw e;
  } finally {
    await home.cleanup();
    await n.close();
  }
});

test('by default live mode follows where the most pubkeys write, past spider.hops: c is live, its hop shown as none', async () => {
  const n = await network();
  const home = await startHome(n);
  try {
    await waitFor(() => n.c.liveSubs >= 1, 30_000, 'a live subscription on c');
    assert.ok(n.c.connections >= 1);
    const live = await liveWhen(home, (l) => [n.a, n.b, n.c].every((x) => l?.remotes.some((r) => r.url === x.url && r.state === 'live')), 'a, b and c live');
    assert.equal(live?.maxHop, -1, 'no bound by default');
    assert.deepEqual(live?.remotes.map((r) => [r.url, r.state, r.hop]).sort(), [[n.a.url, 'live', 0], [n.b.url, 'live', 1], [n.c.url, 'live', null]].sort(), '/directory.json: c live, no hop');
    assert.deepEqual((await liveTable(home)).map((r) => [r[0], r[1]]).sort(), [[n.a.url, '0'], [n.b.url, '1'], [n.c.url, 'none']].sort(), '/directory: c\'s hop shown as none');
    const chosen = home.logs.filter((l) => l.msg === 'live: relays chosen' && Number(l.relays) === 3).at(-1);
    assert.equal(chosen?.beyondHops, 1, 'the log of the choice counts the relay beyond spider.hops');
  } catch (e) {
    dumpLogs(home);
    throw e;
  } finally {
    await home.cleanup();
    await n.close();
  }
});
