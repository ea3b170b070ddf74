// Lookup on a miss, end to end: the real relay process, remote relays on loopback holding the
// authors' lists, clients that send a REQ and read what comes before and after EOSE. Outcomes are
// asserted (what arrived, in which order, how many REQs each remote got), never durations.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startRelayProcess, type RelayProcess } from '../helpers/relay-process.js';
import { Client } from '../helpers/client.js';
import { TestRelay, keypair, sign, relayList } from '../fixtures/test-relay.js';
import type { NostrEvent } from '../../src/nostr/event.js';
import { waitFor } from './harness.js';

const T0 = Math.floor(Date.now() / 1000) - 3600;

/** The relay with the lookup on and the spider's crawl off; loopback remotes allowed (tests only). */
function lookupRelay(indexer: string, env: Record<string, string> = {}): Promise<RelayProcess> {
  return startRelayProcess({
    env: {
      ORBWEAVER_SPIDER_LOOKUP_ENABLED: 'on',
      ORBWEAVER_SPIDER_LOOKUP_INDEXER_RELAYS: indexer,
      ORBWEAVER_SPIDER_ALLOW_PRIVATE: '1',
      ORBWEAVER_SPIDER_PAUSE: '0',
      // a generous bound: the EOSE comes as soon as the lookup is done, the bound only caps a stuck one
      ORBWEAVER_SPIDER_LOOKUP_WAIT: '8s',
      ...env,
    },
  });
}

/** Messages of one subscription up to its EOSE (inclusive), then `after` ms more. */
async function reqUntilEose(c: Client, subId: string, filter: object, afterMs = 0): Promise<{ before: NostrEvent[]; after: NostrEvent[] }> {
  c.send(['REQ', subId, filter]);
  const before: NostrEvent[] = [];
  for (;;) {
    const m = await c.next((m) => (m[0] === 'EVENT' || m[0] === 'EOSE' || m[0] === 'CLOSED') && m[1] === subId, 15_000, `EOSE for ${subId}`);
    if (m[0] === 'CLOSED') throw new Error(`CLOSED: ${String(m[2])}`);
    if (m[0] === 'EOSE') break;
    before.push(m[2] as NostrEvent);
  }
  const after: NostrEvent[] = [];
  const end = Date.now() + afterMs;
  while (Date.now() < end) {
    const m = await c.next((m) => m[0] === 'EVENT' && m[1] === subId, Math.max(1, end - Date.now())).catch(() => null);
    if (!m) break;
    after.push(m[2] as NostrEvent);
  }
  return { before, after };
}

async function statusRows(r: RelayProcess): Promise<Record<string, string>> {
  const s = (await (await fetch(r.httpUrl + '/status.json')).json()) as { sections: Array<{ title: string; rows: Array<[string, string]> }> };
  const sec = s.sections.find((x) => x.title === 'Lookup on a miss');
  return sec ? Object.fromEntries(sec.rows) : {};
}

test('lookup on a miss: found on the author\'s own relay before EOSE, one hop from the 10002 to its 10050; remembered; one remote REQ for concurrent REQs; forged events not stored', async () => {
  const indexer = await new TestRelay().start();
  const outbox = await new TestRelay().start();
  const relay = await lookupRelay(indexer.url);
  const clients: Client[] = [];
  try {
    // alice's relay list is on the indexer; her profile and DM relay list only on her own relay
    const alice = keypair();
    const aliceList = relayList(alice.sk, T0, [outbox.url]);
    indexer.add(aliceList);
    const profile = sign(alice.sk, 0, T0, [], '{"name":"alice"}');
    const dmRelays = sign(alice.sk, 10050, T0, [['relay', 'wss://dm.example']]);
    outbox.add(profile, dmRelays);

    const c = await Client.open(relay.url);
    clients.push(c);
    const first = await reqUntilEose(c, 'a', { kinds: [0, 10050], authors: [alice.pk] });
    assert.deepEqual(first.before.map((e) => e.id).sort(), [profile.id, dmRelays.id].sort(), 'both lists arrive before EOSE');
    assert.ok(indexer.reqs.length >= 1, 'the indexer was asked (no relay list was known)');
    assert.ok(outbox.reqs.some((f) => (f.kinds as number[]).includes(10050) && (f.authors as string[]).includes(alice.pk)), 'then the relay her 10002 names');

    // stored like any crawled event: the next REQ is answered from the store, nobody is asked again
    const reqsBefore = indexer.reqs.length + outbox.reqs.length;
    const again = await c.query({ kinds: [0, 10050, 10002], authors: [alice.pk] });
    assert.deepEqual(again.events.map((e) => e.id).sort(), [profile.id, dmRelays.id, aliceList.id].sort());
    assert.equal(indexer.reqs.length + outbox.reqs.length, reqsBefore, 'held now: no lookup');

    // a miss is remembered: asked once, not again
    const nobody = keypair();
    const miss1 = await c.query({ kinds: [0], authors: [nobody.pk] });
    assert.equal(miss1.events.length, 0);
    const asked = indexer.reqs.filter((f) => (f.authors as string[]).includes(nobody.pk)).length;
    assert.equal(asked, 1, 'the indexer was asked once');
    const miss2 = await c.query({ kinds: [0], authors: [nobody.pk] });
    assert.equal(miss2.events.length, 0);
    assert.equal(indexer.reqs.filter((f) => (f.authors as string[]).includes(nobody.pk)).length, 1, 'the remembered miss is not asked again');

    // concurrent REQs for one author, from three connections: one REQ at the remote
    const bob = keypair();
    const bobProfile = sign(bob.sk, 0, T0, [], '{"name":"bob"}');
    indexer.add(bobProfile);
    const cs = await Promise.all([0, 1, 2].map(() => Client.open(relay.url)));
    clients.push(...cs);
    const answers = await Promise.all(cs.map((x, i) => x.query({ kinds: [0], authors: [bob.pk] }, 'bob' + i)));
    for (const a of answers) assert.deepEqual(a.events.map((e) => e.id), [bobProfile.id], 'every REQ gets the profile before its EOSE');
    assert.equal(indexer.reqs.filter((f) => (f.authors as string[]).includes(bob.pk)).length, 1, 'one remote REQ for the three');

    // a forged profile (content changed after signing) is not stored nor delivered
    const carol = keypair();
    const good = sign(carol.sk, 0, T0, [], '{"name":"carol"}');
    indexer.add({ ...good, content: '{"name":"mallory"}' });
    const forged = await c.query({ kinds: [0], authors: [carol.pk] });
    assert.equal(forged.events.length, 0, 'nothing delivered');
    const rows = await statusRows(relay);
    assert.match(rows['events stored / invalid'] ?? '', /^\d+ \/ [1-9]/, 'counted as invalid');
    assert.match(rows['lookups'] ?? '', /authors looked up/);
    assert.match(rows['remembered'] ?? '', /^[1-9]\d* authors and kinds/);
    const metrics = await (await fetch(relay.httpUrl + '/metrics')).text();
    assert.match(metrics, /^orbweaver_lookup_found_total [1-9]/m);
  } finally {
    for (const c of clients) c.close();
    await relay.cleanup();
    await Promise.all([indexer.close(), outbox.close()]);
  }
});

test('lookup on a miss with wait 0: EOSE at once, the event after it on the open subscription', async () => {
  const indexer = await new TestRelay().start();
  const relay = await lookupRelay(indexer.url, { ORBWEAVER_SPIDER_LOOKUP_WAIT: '0' });
  const c = await Client.open(relay.url);
  try {
    const dave = keypair();
    const profile = sign(dave.sk, 0, T0, [], '{"name":"dave"}');
    indexer.add(profile);
    c.send(['REQ', 'd', { kinds: [0], authors: [dave.pk] }]);
    const first = await c.next((m) => (m[0] === 'EVENT' || m[0] === 'EOSE') && m[1] === 'd', 10_000, 'EOSE');
    assert.equal(first[0], 'EOSE', 'EOSE comes first: nothing was stored');
    const ev = await c.next((m) => m[0] === 'EVENT' && m[1] === 'd', 10_000, 'the profile after EOSE');
    assert.equal((ev[2] as NostrEvent).id, profile.id);
  } finally {
    c.close();
    await relay.cleanup();
    await indexer.close();
  }
});

test('lookup off (auto without the spider, and off): EOSE with nothing, no remote asked', async () => {
  const indexer = await new TestRelay().start();
  const eve = keypair();
  indexer.add(sign(eve.sk, 0, T0, [], '{"name":"eve"}'));
  for (const enabled of ['auto', 'off']) {
    const relay = await lookupRelay(indexer.url, { ORBWEAVER_SPIDER_LOOKUP_ENABLED: enabled });
    const c = await Client.open(relay.url);
    try {
      const r = await reqUntilEose(c, 'e', { kinds: [0], authors: [eve.pk] }, 300);
      assert.equal(r.before.length + r.after.length, 0, `${enabled}: nothing`);
      assert.equal(indexer.connections, 0, `${enabled}: the indexer was never contacted`);
      assert.equal((await statusRows(relay))['lookups'], undefined, `${enabled}: no lookup section`);
    } finally {
      c.close();
      await relay.cleanup();
    }
  }
  await indexer.close();
});

test('lookup budgets: 1,500 unknown authors from one address open one connection and at most the remote\'s REQ budget; another client is still answered', async () => {
  const indexer = await new TestRelay().start();
  const relay = await lookupRelay(indexer.url, { ORBWEAVER_SPIDER_LOOKUP_REMOTE_REQS_PER_MINUTE: '2' });
  const big = await Client.open(relay.url);
  const other = await Client.open(relay.url);
  try {
    const authors = Array.from({ length: 1500 }, () => keypair().pk);
    big.send(['REQ', 'many', { kinds: [0, 10002], authors }]);
    // meanwhile another client's ordinary query is answered
    const known = keypair();
    const note = sign(known.sk, 1, T0);
    await other.publish(note);
    const r = await other.query({ kinds: [1], authors: [known.pk] });
    assert.deepEqual(r.events.map((e) => e.id), [note.id]);
    await big.next((m) => m[0] === 'EOSE' && m[1] === 'many', 15_000, 'EOSE of the large REQ');
    await waitFor(() => indexer.reqs.length >= 2, 10_000, 'the REQs the budget allows');
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(indexer.connections, 1, 'one connection');
    assert.equal(indexer.reqs.length, 2, 'the remote\'s budget: 2 REQs');
    for (const f of indexer.reqs) assert.ok((f.authors as string[]).length <= 100, 'batches of at most spider.lookup.batch authors');
    const rows = await statusRows(relay);
    assert.match(rows['refused by budgets'] ?? '', /^1200 per address, 0 too many at once, 100 per remote relay$/, 'perAddress 300 of 1,500; the third batch over the remote budget');
  } finally {
    big.close();
    other.close();
    await relay.cleanup();
    await indexer.close();
  }
});

test('lookup on a miss, stale: with the spider on (auto), a stored list older than staleAge is asked of the author\'s write relays; the newer version follows the EOSE, or comes before it with waitStale', async () => {
  const indexer = await new TestRelay().start();
  const outbox = await new TestRelay().start();
  for (const waitStale of [false, true]) {
    const relay = await lookupRelay(indexer.url, {
      ORBWEAVER_SPIDER_LOOKUP_ENABLED: 'auto', ORBWEAVER_SPIDER: '1', ORBWEAVER_SPIDER_INTERVAL: '24h', ORBWEAVER_SPIDER_LOOKUP_STALE_AGE: '1h',
      ORBWEAVER_SPIDER_LOOKUP_WAIT_STALE: String(waitStale),
    });
    const c = await Client.open(relay.url);
    try {
      const frank = keypair();
      const old = T0 - 7200;
      const list = relayList(frank.sk, old, [outbox.url]);
      const oldProfile = sign(frank.sk, 0, old, [], '{"name":"frank (old)"}');
      for (const ev of [list, oldProfile]) assert.equal((await c.publish(ev)).ok, true);
      const newProfile = sign(frank.sk, 0, T0 + 60, [], '{"name":"frank"}');
      outbox.add(list, newProfile);
      c.send(['REQ', 'f', { kinds: [0], authors: [frank.pk] }]);
      const got: string[] = [];
      while (got.length < 3) {
        const m = await c.next((m) => (m[0] === 'EVENT' || m[0] === 'EOSE') && m[1] === 'f', 15_000, 'the profiles and EOSE');
        got.push(m[0] === 'EOSE' ? 'EOSE' : (m[2] as NostrEvent).id);
      }
      const expected = waitStale ? [oldProfile.id, newProfile.id, 'EOSE'] : [oldProfile.id, 'EOSE', newProfile.id];
      assert.deepEqual(got, expected, waitStale ? 'the newer version before EOSE' : 'the stored version answers at once, the newer one follows on the open subscription');
      assert.ok(outbox.reqs.some((f) => (f.authors as string[]).includes(frank.pk)), 'his write relay was asked');
      assert.equal(indexer.reqs.filter((f) => (f.authors as string[]).includes(frank.pk)).length, 0, 'the indexer was not: his relay list is known');
      const now = await c.query({ kinds: [0], authors: [frank.pk] });
      assert.deepEqual(now.events.map((e) => e.id), [newProfile.id], 'the newer version replaced the old one in the store');
    } finally {
      c.close();
      await relay.cleanup();
    }
  }
  await Promise.all([indexer.close(), outbox.close()]);
});

test('lookups one after another on one relay share its lingering connection: ten authors, each found before EOSE, one connection attempt', async () => {
  const indexer = await new TestRelay().start();
  const outbox = await new TestRelay().start();
  const relay = await lookupRelay(indexer.url);
  const c = await Client.open(relay.url);
  try {
    // ten people whose relay lists name one relay (a popular outbox), looked up one REQ at a time:
    // more than spider.lookup.connectsPerHost (4 a minute) would allow as separate connections
    for (let i = 0; i < 10; i++) {
      const k = keypair();
      assert.equal((await c.publish(relayList(k.sk, T0, [outbox.url]))).ok, true);
      const profile = sign(k.sk, 0, T0, [], `{"name":"p${i}"}`);
      outbox.add(profile);
      const r = await reqUntilEose(c, `p${i}`, { kinds: [0], authors: [k.pk] });
      assert.deepEqual(r.before.map((e) => e.id), [profile.id], `profile ${i} before EOSE`);
    }
    assert.equal(outbox.upgrades, 1, 'one connection, kept open between the lookups');
    assert.equal(outbox.reqs.length, 10);
  } finally {
    c.close();
    await relay.cleanup();
    await Promise.all([indexer.close(), outbox.close()]);
  }
});
