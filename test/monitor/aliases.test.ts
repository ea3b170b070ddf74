// One relay, one 30166 (docs/spider.md, "One relay under many URLs"): once the spider records a URL
// as another relay's alias, the NIP-66 monitor no longer checks it, withdraws the 30166 it had
// published for it (kind 5, by id and address: gone from this relay's store), and goes on
// publishing the relay under its own URL.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeRelay } from '../fixtures/fake-relay.js';
import { openHome, quietLog } from '../spider/harness.js';
import { createMonitor } from '../../src/monitor/monitor.js';
import { RelayDirectory } from '../../src/directory/records.js';
import { configSchema } from '../../src/config/schema.js';
import type { NostrEvent } from '../../src/nostr/event.js';

test('a URL recorded as an alias: not checked any more, its 30166 withdrawn, the relay still published once', async () => {
  const home = await openHome();
  const a = await new FakeRelay({ nip11: { name: 'a' } }).start();
  const b = await new FakeRelay({ nip11: { name: 'b' } }).start();
  try {
    const directory = new RelayDirectory(home.store.env);
    for (const r of [a, b]) await directory.discovered(r.url, 0, ['seed'], 1);
    const config = configSchema.parse({ dataDir: home.dir, info: { name: 'Home' }, spider: { monitor: true, allowPrivate: true, monitorTimeout: '1500ms', monitorInterval: '1h', monitorProbes: false } });
    const monitor = createMonitor({ config, store: home.store, put: async (ev) => (await home.ingest(ev, { source: 'monitor' })).status, logger: quietLog, validate: false });
    const discovery = async () => (await home.store.query([{ kinds: [30166] }], { defaultLimit: 500, maxLimit: 500 })).map((j) => JSON.parse(j) as NostrEvent);
    const dOf = (evs: NostrEvent[]) => evs.map((e) => e.tags.find((t) => t[0] === 'd')![1]).sort();

    const s1 = await monitor.runOnce();
    assert.equal(s1.published, 2);
    assert.deepEqual(dOf(await discovery()), [a.url, b.url].sort());

    // the spider found b to answer as a does
    await directory.recordRelay(a.url, [b.url], []);
    const bChecks = b.connections;
    const s2 = await monitor.runOnce();
    assert.equal(s2.checked, 1, 'the relay checked once');
    assert.equal(b.connections, bChecks, 'the alias not contacted');
    assert.deepEqual(dOf(await discovery()), [a.url], 'one 30166: the alias\'s withdrawn');
    const deletions = (await home.store.query([{ kinds: [5], authors: [monitor.pubkey] }], { defaultLimit: 10, maxLimit: 10 })).map((j) => JSON.parse(j) as NostrEvent);
    assert.equal(deletions.length, 1);
    assert.deepEqual(deletions[0]!.tags.find((t) => t[0] === 'a'), ['a', `30166:${monitor.pubkey}:${b.url}`]);

    // withdrawn once, not every cycle
    await monitor.runOnce();
    assert.equal((await home.store.query([{ kinds: [5] }], { defaultLimit: 10, maxLimit: 10 })).length, 1);
    await monitor.stop();
  } finally {
    await Promise.all([a.close(), b.close()]);
    await home.close();
  }
});
