// NIP-62 and the spider, end to end: after a request to vanish, `spider --once` over loopback relays
// that still hold the author's events stores none of them, whether it delivers to a running relay
// (its ingest path refuses them) or ingests in its own process (the store's precheck refuses them
// before any signature check); and a request to ALL_RELAYS the spider finds on another relay is
// applied here too (kind 62 is crawled by default).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startRelayProcess } from '../helpers/relay-process.js';
import { Client, ids } from '../helpers/client.js';
import { TestRelay, keypair, sign, relayList } from '../fixtures/test-relay.js';
import { loadConfig } from '../../src/config.js';
import type { SpiderSummary } from '../../src/spider/status.js';
import { openStore } from '../../src/store/index.js';
import type { NostrEvent } from '../../src/nostr/event.js';
import { spiderOnceJson } from './harness.js';

const T0 = Math.floor(Date.now() / 1000) - 5000;

async function spiderOnce(dataDir: string, port: number, seed: string): Promise<SpiderSummary> {
  const config = loadConfig({
    env: {},
    flags: { host: '127.0.0.1', port, dataDir, logLevel: 'silent', spider: { seeds: [seed], allowPrivate: true, hops: 1, idleTimeout: '3s', pause: 0 } },
  });
  return spiderOnceJson<SpiderSummary>(config);
}

const sortedIds = (evs: Array<{ id: string }>) => ids(evs).sort();

test('spider --once over relays that still hold a vanished author\'s events stores none of them; a request found elsewhere applies here', async () => {
  const home = await startRelayProcess();
  const a = await new TestRelay({ flavour: 'strfry' }).start();
  const c = await new TestRelay({ flavour: 'rs' }).start();
  try {
    const seed = keypair();
    const [alice, bob, carol, dave] = [keypair(), keypair(), keypair(), keypair()];
    const aliceOld: NostrEvent[] = [sign(alice.sk, 0, T0), sign(alice.sk, 3, T0 + 1, [['p', bob.pk]]), relayList(alice.sk, T0 + 2, ['wss://somewhere.example'])];
    const bobProfile = sign(bob.sk, 0, T0);
    // bob asked every relay to forget him, on relay a only
    const bobVanish = sign(bob.sk, 62, T0 + 10, [['relay', 'ALL_RELAYS']]);
    const carolProfile = sign(carol.sk, 0, T0);
    a.add(...aliceOld, bobProfile, bobVanish, carolProfile);

    const pub = await Client.open(home.url);
    for (const e of [relayList(seed.sk, T0, [a.url]), ...aliceOld, bobProfile]) assert.equal((await pub.publish(e)).ok, true);
    const aliceVanish = sign(alice.sk, 62, T0 + 10, [['relay', home.url]]);
    assert.equal((await pub.publish(aliceVanish)).ok, true);
    assert.deepEqual(sortedIds((await pub.query({ authors: [alice.pk] })).events), [aliceVanish.id]);

    // 1. delivered to the running relay
    const s = await spiderOnce(home.dataDir, home.port, seed.pk);
    assert.equal(s.relays.reached, 1);
    assert.equal(s.events.stored, 2, 'carol\'s profile and bob\'s request');
    assert.ok(s.events.rejected >= aliceOld.length, `alice's copies refused (rejected: ${s.events.rejected})`);
    assert.deepEqual(sortedIds((await pub.query({ authors: [alice.pk, bob.pk] })).events), [aliceVanish.id, bobVanish.id].sort());
    assert.deepEqual(sortedIds((await pub.query({ kinds: [0] })).events), [carolProfile.id]);

    // 2. a relay the spider has not met, and no relay running: ingested in the spider's own process
    c.add(...aliceOld, bobProfile, sign(dave.sk, 0, T0));
    assert.equal((await pub.publish(relayList(seed.sk, T0 + 1, [a.url, c.url]))).ok, true);
    pub.close();
    assert.equal(await home.stop(), 0);
    const s2 = await spiderOnce(home.dataDir, home.port, seed.pk);
    assert.equal(s2.relays.reached, 2);
    assert.equal(s2.events.stored, 1, 'dave\'s profile');
    assert.ok(s2.events.rejected >= aliceOld.length + 1, `alice's and bob's copies refused (rejected: ${s2.events.rejected})`);
    assert.ok(s2.events.verified <= s2.events.fetched - aliceOld.length - 1, 'their signatures were never checked (precheck)');
    const store = await openStore({ dir: home.dataDir, readOnly: true });
    try {
      const held = await store.query([{ authors: [alice.pk, bob.pk, dave.pk] }], { defaultLimit: 100, maxLimit: 100 });
      assert.deepEqual(held.map((j) => (JSON.parse(j) as NostrEvent).id).sort(), [aliceVanish.id, bobVanish.id, c.events.at(-1)!.id].sort());
    } finally {
      await store.close();
    }
  } finally {
    await a.close();
    await c.close();
    await home.cleanup();
  }
});
