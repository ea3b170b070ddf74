// One relay, one crawl (docs/spider.md, "One relay under many URLs"), as an operator runs it:
// `orbweaver spider --once` over real relays on loopback, then `orbweaver directory`. One server
// serves one store under six made-up paths; another serves a relay per user under three paths, all
// with the same NIP-11 document (only their stores tell them apart). The first is crawled once,
// listed once with its five other URLs as aliases; the three per-user relays stay three relays. A
// second run trusts the recorded aliases without asking them again; with spider.aliasRecheck 0 a
// path that now serves another store is split off and crawled on its own.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { TestRelay, keypair, relayList } from '../fixtures/test-relay.js';
import { PathHost } from '../fixtures/path-host.js';
import { runCli, runCliAsync } from '../helpers/cli.js';
import { tempDir } from '../helpers/relay-process.js';
import { population } from './harness.js';
import type { DirectoryDocument, RelayDetail } from '../../src/monitor/document.js';
import { IDENTITY_KINDS, IDENTITY_LIMIT } from '../../src/remote/identity.js';

const T0 = Math.floor(Date.now() / 1000) - 10_000;
const SHARED_PATHS = ['/', '/a', '/b', '/nostr', '/relay', '/x/y'];
const USERS = ['/u/alice', '/u/bob', '/u/carol'];

const seed = keypair();
const hub = new TestRelay({ nip11: { name: 'hub' } });
// one store: every path answers with it (its NIP-11 names no path, as such hosts' documents do)
const shared = new TestRelay({ flavour: 'strfry', nip11: { name: 'one store, many paths', supported_nips: [1, 11] } });
// a relay per user: one document for all of them, stores of their own
const perUser = USERS.map(() => new TestRelay({ nip11: { name: 'per-user relays', supported_nips: [1, 11] } }));
const other = new TestRelay({ nip11: { name: 'one store, many paths', supported_nips: [1, 11] } });
const sharedHost = new PathHost(Object.fromEntries(SHARED_PATHS.map((p) => [p, shared])));
const userHost = new PathHost(Object.fromEntries(USERS.map((p, i) => [p, perUser[i]!])));
const dir = tempDir('orbweaver-aliases-');

after(async () => {
  await Promise.all([hub.close(), sharedHost.close(), userHost.close(), other.close()]);
  rmSync(dir, { recursive: true, force: true });
});

/** The probe's REQ (remote/identity.ts), told apart from the crawl's by its kinds and limit. */
const isProbe = (f: Record<string, unknown>) => f.limit === IDENTITY_LIMIT && JSON.stringify(f.kinds) === JSON.stringify(IDENTITY_KINDS);
const crawlPaths = (r: TestRelay) => new Set(r.reqsByPath.filter((q) => !isProbe(q.filter)).map((q) => q.path));

/** The figures of a run as `spider --once` prints them (its summary, src/spider/status.ts). */
interface RunFigures { total: number; reached: number; aliases: number; probed: number }

async function spiderOnce(env: Record<string, string> = {}): Promise<RunFigures> {
  const r = await runCliAsync(['spider', '--once', '--local', '--data', dir], {
    env: {
      ORBWEAVER_SPIDER_SEEDS: seed.pk, ORBWEAVER_SPIDER_BOOTSTRAP_RELAYS: hub.url, ORBWEAVER_SPIDER_ALLOW_PRIVATE: '1',
      ORBWEAVER_SPIDER_HOPS: '1', ORBWEAVER_SPIDER_PAUSE: '0', ORBWEAVER_SPIDER_IDLE_TIMEOUT: '3s', ORBWEAVER_SPIDER_HEAP_MB: '0', ...env,
    },
  });
  assert.equal(r.status, 0, r.stderr);
  const relays = /^relays: (\d+) total, (\d+) reached/m.exec(r.stdout);
  assert.ok(relays, r.stdout);
  // the aliases line is printed only when there is something to say
  const aliases = /^aliases: (\d+) URLs reach a relay crawled under another URL \((\d+) URLs asked/m.exec(r.stdout);
  return { total: Number(relays[1]), reached: Number(relays[2]), aliases: Number(aliases?.[1] ?? 0), probed: Number(aliases?.[2] ?? 0) };
}

function directoryJson(): DirectoryDocument {
  const r = runCli(['directory', '--json', '--data', dir]);
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as DirectoryDocument;
}

test('one store under six paths is crawled once and listed once with five aliases; three per-user relays with one NIP-11 document stay three', async () => {
  await Promise.all([hub.start(), sharedHost.start(), userHost.start(), other.start()]);
  const sharedUrls = SHARED_PATHS.map((p) => sharedHost.url(p));
  const userUrls = USERS.map((p) => userHost.url(p));
  // the seed's list names the hub; the hub's lists name every URL of both servers (hop 1)
  hub.add(relayList(seed.sk, T0, [hub.url]), ...population(8, [...sharedUrls, ...userUrls], T0));
  shared.add(...population(120, [], T0 - 100));
  perUser.forEach((r, i) => r.add(...population(12, [], T0 - 200 - i)));

  const s1 = await spiderOnce();
  assert.equal(s1.total, 1 + 6 + 3, 'every URL taken');
  assert.equal(s1.aliases, 5, 'five URLs folded into the store they reach');
  assert.equal(s1.reached, 1 + 1 + 3, 'relays reached: hub, the shared store once, three per-user relays');
  assert.equal(s1.probed, 6 + 3, 'each URL of a server with several asked once');

  // the crawl's REQs reached the shared store on one path only; each URL was asked the probe once
  const canonical = sharedHost.url('/');
  assert.deepEqual([...crawlPaths(shared)], ['/'], 'crawled under one URL (the plainest: no path)');
  assert.equal(shared.reqsByPath.filter((q) => isProbe(q.filter)).length, 6);
  for (const r of perUser) assert.equal(crawlPaths(r).size, 1, 'each per-user relay crawled on its own path');

  // every event of every store is in the home store: none lost by folding
  const doc = directoryJson();
  const rows = new Map(doc.rows.map((r) => [r.url, r]));
  assert.deepEqual(doc.rows.map((r) => r.url).sort(), [hub.url, canonical, ...userUrls].sort(), 'listed once each, no row for an alias');
  assert.deepEqual(rows.get(canonical)!.aliases, sharedUrls.filter((u) => u !== canonical).sort(), 'the other URLs shown as its aliases');
  assert.equal(rows.get(canonical)!.storedTotal, 120);
  for (const u of userUrls) {
    assert.deepEqual(rows.get(u)!.aliases, [], `${u}: a relay of its own`);
    assert.equal(rows.get(u)!.storedTotal, 12);
  }

  // `orbweaver directory --relay` with an alias shows the relay it reaches and names its aliases
  const one = runCli(['directory', '--relay', sharedHost.url('/x/y'), '--data', dir]);
  assert.equal(one.status, 0, one.stderr);
  const text = one.stdout.replace(/\n +/g, ' ');
  assert.equal(one.stdout.split('\n')[0], canonical);
  assert.match(text, new RegExp(`aliases: +${sharedUrls.filter((u) => u !== canonical).sort().map((u) => u.replace(/[/.]/g, '\\$&')).join(', ')}`));
  for (const line of one.stdout.split('\n')) assert.ok(line.length <= 100, `${line.length} columns: ${line}`);
  const json = JSON.parse(runCli(['directory', '--json', '--relay', sharedHost.url('/a'), '--data', dir]).stdout) as RelayDetail;
  assert.equal(json.url, canonical);

  // second run: the aliases on record are trusted (spider.aliasRecheck 7d), not asked again
  const probesBefore = shared.reqsByPath.filter((q) => isProbe(q.filter)).length;
  const s2 = await spiderOnce();
  assert.equal(s2.aliases, 5);
  assert.equal(s2.reached, 5);
  assert.equal(shared.reqsByPath.filter((q) => isProbe(q.filter)).length, probesBefore, 'recorded aliases not probed again');
  assert.deepEqual([...crawlPaths(shared)], ['/']);
});

test('spider.aliasRecheck 0: a path that now serves another store (same NIP-11 document) is split off and crawled as a relay of its own', async () => {
  // /b now reaches another store
  other.add(...population(16, [], T0 - 300));
  sharedHost.reroute('/b', other);
  const s = await spiderOnce({ ORBWEAVER_SPIDER_ALIAS_RECHECK: '0' });
  assert.equal(s.aliases, 4);
  assert.equal(s.reached, 1 + 2 + 3);
  assert.deepEqual([...crawlPaths(other)], ['/b'], 'the split URL crawled on its own');
  const doc = directoryJson();
  const rows = new Map(doc.rows.map((r) => [r.url, r]));
  const b = sharedHost.url('/b');
  assert.ok(rows.has(b), 'listed as a relay of its own');
  assert.deepEqual(rows.get(b)!.aliases, []);
  assert.equal(rows.get(b)!.storedTotal, 16);
  assert.ok(!rows.get(sharedHost.url('/'))!.aliases.includes(b), 'no longer an alias of the shared store');
  assert.equal(rows.get(sharedHost.url('/'))!.aliases.length, 4);
});
