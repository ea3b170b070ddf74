// Attack: lookup on a miss makes the relay a client of relays that anyone can name, since a relay
// list the attacker published decides where it connects (issue 72). With the lookup on and every
// other setting at its default (loopback remotes allowed: tests only), each test reproduces one
// attack with a hostile remote on this machine and asserts the outcome, never a duration:
//   - a remote answering 4,000 unsigned events of 125 KB (before: 174 -> 695 MB, kept): the page is
//     cut as hostile after a window, RSS growth stays bounded, the host is remembered as failed;
//   - eight remotes dripping events without EOSE (before: they held all 8 connections and another
//     client's lookup missed its wait): one address holds at most its share, the drip is cut by the
//     deadline, another address's lookup is answered before its EOSE;
//   - one REQ for 100 authors whose lists name 3 paths each on one host (before: 300 connection
//     attempts at that host): at most spider.lookup.connectsPerHost (4) attempts at it from one
//     address, at most connectsPerAddress (20) in all;
//   - a host that refuses the upgrade is not tried again, by anyone, for failureMemory.
// The attacker connects from 127.0.0.1, the other client from 127.0.0.2.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startRelayProcess, type RelayProcess } from '../helpers/relay-process.js';
import { Client } from '../helpers/client.js';
import { TestRelay, keypair, relayList, sign } from '../fixtures/test-relay.js';
import type { NostrEvent } from '../../src/nostr/event.js';
import { rssMb } from './helpers.js';

const T0 = Math.floor(Date.now() / 1000) - 3600;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The relay with the lookup on (the crawl off), loopback remotes allowed; every other setting at its default unless `env` says. */
const lookupRelay = (env: Record<string, string> = {}): Promise<RelayProcess> =>
  startRelayProcess({ env: { ORBWEAVER_SPIDER_LOOKUP_ENABLED: 'on', ORBWEAVER_SPIDER_ALLOW_PRIVATE: '1', ...env } });

async function lookupRows(r: RelayProcess): Promise<Record<string, string>> {
  const s = (await (await fetch(r.httpUrl + '/status.json')).json()) as { sections: Array<{ title: string; rows: Array<[string, string]> }> };
  return Object.fromEntries(s.sections.find((x) => x.title === 'Lookup on a miss')?.rows ?? []);
}

/** A figure of the status row `row` read by `re` (its first group), as a number. */
const figure = (rows: Record<string, string>, row: string, re: RegExp): number => Number(re.exec(rows[row] ?? '')?.[1] ?? NaN);

async function until(cond: () => Promise<boolean> | boolean, what: string, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

/** Publishes a relay list per author (from `c`), naming `urls(i)`. */
async function publishLists(c: Client, authors: Array<{ sk: Uint8Array }>, urls: (i: number) => string[]): Promise<void> {
  const results = await Promise.all(authors.map((a, i) => c.publish(relayList(a.sk, T0, urls(i)))));
  assert.ok(results.every((r) => r.ok), 'the relay lists are stored');
}

/** Another address publishes a note and reads it back. */
async function otherClientServed(relay: RelayProcess): Promise<void> {
  const c = await Client.open(relay.url, { localAddress: '127.0.0.2' });
  try {
    const k = keypair();
    const note = sign(k.sk, 1, Math.floor(Date.now() / 1000), [], 'still here');
    assert.equal((await c.publish(note)).ok, true);
    assert.deepEqual((await c.query({ ids: [note.id] })).events.map((e) => e.id), [note.id]);
  } finally { c.close(); }
}

test('a remote answering 4,000 unsigned events of 125 KB: the page is cut as hostile after a window, RSS stays bounded, the host is remembered as failed', async () => {
  const remote = await new TestRelay({ forge: { events: 4000, bytes: 125_000 } }).start();
  const relay = await lookupRelay();
  const attacker = await Client.open(relay.url);
  try {
    const authors = Array.from({ length: 100 }, () => keypair());
    await publishLists(attacker, authors, () => [remote.url]);
    const pid = relay.proc.pid!;
    const rss0 = rssMb(pid);
    let peak = rss0;
    let sampling = true;
    const sampler = (async () => { while (sampling) { peak = Math.max(peak, rssMb(pid)); await sleep(20); } })();
    // 100 authors x 100 directory kinds in one 7 KB REQ
    const kinds = [0, 3, ...Array.from({ length: 98 }, (_, i) => 10000 + i)];
    attacker.send(['REQ', 'flood', { kinds, authors: authors.map((a) => a.pk) }]);
    await attacker.next((m) => m[0] === 'EOSE' && m[1] === 'flood', 30_000, 'EOSE');
    await until(async () => figure(await lookupRows(relay), 'remote pages cut', /^(\d+) lying/) >= 1, 'the page cut as hostile');
    await until(async () => / 0 in flight$/.test((await lookupRows(relay))['lookups'] ?? ''), 'the lookups done');
    sampling = false;
    await sampler;
    const rows = await lookupRows(relay);
    assert.ok(peak - rss0 < 200, `RSS grew ${Math.round(peak - rss0)} MB (before the fix: ~520 MB, kept)`);
    const received = figure(rows, 'remote relays', /; (\d+) bytes received/);
    assert.ok(received < 8 << 20, `the relay read ${received} bytes: a window or two, not the page's 8 MiB nor the 500 MB on offer`);
    assert.ok(remote.forged < 4000, `the remote could send ${remote.forged} of its 4,000 events: the rest waited in its socket`);
    assert.equal(remote.connections, 1);
    assert.match(rows['events stored / invalid'] ?? '', /^0 \/ [1-9]/, 'nothing stored, the forgeries counted invalid');
    // what 100 authors x 99 kinds could bring was charged to the address first: not all of it passed
    assert.ok(figure(rows, 'refused by cost', /bytes: (\d+) per address/) > 0, 'the bytes budget refused part of the REQ');
    assert.ok(figure(rows, 'remote relays', /(\d+) hosts remembered as failed/) >= 1);

    // the host is remembered: more authors naming it, from another address, cause no connection
    const more = Array.from({ length: 5 }, () => keypair());
    await publishLists(attacker, more, () => [`${remote.url}/another/path`]);
    const other = await Client.open(relay.url, { localAddress: '127.0.0.2' });
    try {
      const r = await other.query({ kinds: [0], authors: more.map((a) => a.pk) });
      assert.equal(r.events.length, 0);
    } finally { other.close(); }
    assert.equal(remote.upgrades, 1, 'no second connection attempt to the failed host, whatever the path');
    assert.ok(figure(await lookupRows(relay), 'refused by cost', /(\d+) to hosts remembered as failed/) >= 5);
    await otherClientServed(relay);
  } finally {
    attacker.close();
    await relay.cleanup();
    await remote.close();
  }
});

test('eight remotes dripping events without EOSE: one address holds at most its share of the connections, the drip is cut at the deadline, another address\'s lookup is answered before its EOSE', async () => {
  const drips = await Promise.all(Array.from({ length: 8 }, () => new TestRelay({ drip: 1000 }).start()));
  const honest = await new TestRelay().start();
  // a generous wait (the EOSE comes as soon as the lookup is done; the bound only caps a stuck one):
  // before the fix the honest lookup waited for a connection slot the drips never gave back
  const relay = await lookupRelay({ ORBWEAVER_SPIDER_LOOKUP_WAIT: '8s' });
  const attacker = await Client.open(relay.url);
  let maxOpen = 0;
  let sampling = true;
  const sampler = (async () => { while (sampling) { maxOpen = Math.max(maxOpen, drips.reduce((n, r) => n + r.open, 0)); await sleep(10); } })();
  try {
    // 30 authors per dripping relay, each with a validly signed profile there: every event dripped
    // is one the relay asked for, so each keeps the page alive (a REQ of 30 authors x 2 kinds)
    const attackers = drips.flatMap((r) => Array.from({ length: 30 }, () => {
      const k = keypair();
      r.add(sign(k.sk, 0, T0, [], '{"name":"drip"}'));
      return { ...k, r };
    }));
    await publishLists(attacker, attackers, (i) => [attackers[i]!.r.url]);
    attacker.send(['REQ', 'drip', { kinds: [0, 3], authors: attackers.map((a) => a.pk) }]);
    await until(() => drips.some((r) => r.open > 0), 'a drip connection');
    await sleep(500);

    const dave = keypair();
    const profile = sign(dave.sk, 0, T0, [], '{"name":"dave"}');
    honest.add(profile);
    const victim = await Client.open(relay.url, { localAddress: '127.0.0.2' });
    try {
      assert.equal((await victim.publish(relayList(dave.sk, T0, [honest.url]))).ok, true);
      const r = await victim.query({ kinds: [0], authors: [dave.pk] });
      assert.deepEqual(r.events.map((e: NostrEvent) => e.id), [profile.id], 'the honest lookup is answered before its EOSE');
    } finally { victim.close(); }

    await until(async () => figure(await lookupRows(relay), 'remote pages cut', /(\d+) past the deadline/) >= 1, 'a drip cut at the deadline', 40_000);
    sampling = false;
    await sampler;
    assert.ok(maxOpen <= 2, `at most spider.lookup.connectionsPerAddress (2) connections for the attacker's lookups at once (${maxOpen})`);
    assert.ok(maxOpen >= 1);
    await otherClientServed(relay);
  } finally {
    sampling = false;
    attacker.close();
    await relay.cleanup();
    await Promise.all([...drips, honest].map((r) => r.close()));
  }
});

test('one host under many paths: one address\'s lookups make at most 4 connection attempts to it and 20 in all; another address still reaches it', async () => {
  const host = await new TestRelay().start();
  const others = await Promise.all(Array.from({ length: 30 }, () => new TestRelay().start()));
  const relay = await lookupRelay();
  const attacker = await Client.open(relay.url);
  try {
    // 100 authors, 3 paths each on one host: 300 URLs, one REQ
    const authors = Array.from({ length: 100 }, () => keypair());
    await publishLists(attacker, authors, (i) => [0, 1, 2].map((j) => `${host.url}/a${i}/p${j}`));
    const r = await attacker.query({ kinds: [0], authors: authors.map((a) => a.pk) }, 'paths');
    assert.equal(r.events.length, 0);
    await until(async () => / 0 in flight$/.test((await lookupRows(relay))['lookups'] ?? ''), 'the lookups done');
    assert.ok(host.upgrades >= 1 && host.upgrades <= 4, `connection attempts at the host: ${host.upgrades} (before the fix: 300)`);
    let rows = await lookupRows(relay);
    assert.ok(figure(rows, 'refused by cost', /connection attempts: (\d+) per address and host/) > 0, 'the rest refused per address and host');

    // 100 more authors, each naming paths on the 30 other hosts: at most 20 attempts in all
    const spread = Array.from({ length: 100 }, () => keypair());
    await publishLists(attacker, spread, (i) => [0, 1, 2].map((j) => `${others[(i * 3 + j) % others.length]!.url}/s${i}/p${j}`));
    await attacker.query({ kinds: [0], authors: spread.map((a) => a.pk) }, 'spread');
    await until(async () => / 0 in flight$/.test((await lookupRows(relay))['lookups'] ?? ''), 'the lookups done');
    const total = host.upgrades + others.reduce((n, o) => n + o.upgrades, 0);
    assert.ok(total <= 20, `connection attempts from one address in all: ${total}`);
    assert.ok(others.every((o) => o.upgrades <= 4));
    rows = await lookupRows(relay);
    assert.ok(figure(rows, 'refused by cost', /host, (\d+) per address,/) > 0, 'the rest refused per address');
    assert.equal(figure(rows, 'remote relays', /of (\d+) attempts/), total, 'every attempt counted');

    // the per-address budget is the attacker's alone: another address reaches the same host
    const erin = keypair();
    const profile = sign(erin.sk, 0, T0, [], '{"name":"erin"}');
    host.add(profile);
    const before = host.upgrades;
    const other = await Client.open(relay.url, { localAddress: '127.0.0.2' });
    try {
      assert.equal((await other.publish(relayList(erin.sk, T0, [`${host.url}/erin`]))).ok, true);
      const got = await other.query({ kinds: [0], authors: [erin.pk] });
      assert.deepEqual(got.events.map((e) => e.id), [profile.id], 'found before EOSE');
    } finally { other.close(); }
    assert.equal(host.upgrades, before + 1);
  } finally {
    attacker.close();
    await relay.cleanup();
    await Promise.all([host, ...others].map((r) => r.close()));
  }
});

test('a host that refuses the connection is remembered as failed: no other lookup tries it again, whatever the path or the address', async () => {
  const down = await new TestRelay({ refuseUpgrades: 503 }).start();
  const relay = await lookupRelay();
  const a = await Client.open(relay.url);
  const b = await Client.open(relay.url, { localAddress: '127.0.0.2' });
  try {
    const x = keypair();
    await publishLists(a, [x], () => [`${down.url}/x`]);
    assert.equal((await a.query({ kinds: [0], authors: [x.pk] })).events.length, 0);
    await until(async () => / 0 in flight$/.test((await lookupRows(relay))['lookups'] ?? ''), 'the lookup done');
    assert.equal(down.upgrades, 1);
    let rows = await lookupRows(relay);
    assert.match(rows['remote relays'] ?? '', /1 failed/);
    assert.match(rows['remembered'] ?? '', /^1 authors and kinds/, 'the failed lookup is remembered too');

    // another author on another path of the same host, asked from another address: not tried
    const y = keypair();
    await publishLists(b, [y], () => [`${down.url}/y`]);
    assert.equal((await b.query({ kinds: [0], authors: [y.pk] })).events.length, 0);
    // and the first author again: remembered, not looked up
    assert.equal((await a.query({ kinds: [0], authors: [x.pk] })).events.length, 0);
    await sleep(300);
    assert.equal(down.upgrades, 1, 'one attempt in all');
    rows = await lookupRows(relay);
    assert.ok(figure(rows, 'refused by cost', /(\d+) to hosts remembered as failed/) >= 1);
  } finally {
    a.close();
    b.close();
    await relay.cleanup();
    await down.close();
  }
});
