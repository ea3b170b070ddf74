// The network's largest follow lists through the spider (issue 77): a follow list of 5,000 people
// (~360 KB) held by a remote relay is fetched and stored by `spider --once` with default settings,
// as it is from a client or by `import` (test/relay/large-lists.test.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { tempDir } from '../helpers/relay-process.js';
import { TestRelay, keypair, sign, relayList } from '../fixtures/test-relay.js';
import { spiderCommand } from '../../src/commands/spider.js';
import { loadConfig } from '../../src/config.js';
import type { SpiderSummary } from '../../src/spider/status.js';
import { openStore } from '../../src/store/index.js';
import { fakeHex } from '../../bench/lib/events.js';

const T0 = Math.floor(Date.now() / 1000) - 5000;

test('spider --once stores follow lists of 5,000 people from a remote relay', async () => {
  const remote = await new TestRelay({ flavour: 'strfry' }).start();
  const dataDir = tempDir();
  try {
    const seed = keypair();
    const other = keypair();
    const follows = (salt: string) => Array.from({ length: 5000 }, (_, i) => ['p', fakeHex('spider-lists', salt, i)]);
    const seedList = sign(seed.sk, 3, T0, follows('seed'));
    const otherList = sign(other.sk, 3, T0 + 1, follows('other'));
    const mutes = sign(other.sk, 10000, T0 + 2, follows('mutes'));
    assert.ok(JSON.stringify(seedList).length > 350_000);
    remote.add(relayList(seed.sk, T0, [remote.url]), seedList, otherList, mutes);
    const config = loadConfig({ env: {}, flags: { dataDir, logLevel: 'silent', spider: { seeds: [seed.pk], bootstrapRelays: [remote.url], allowPrivate: true, hops: 0, idleTimeout: '3s', pause: 0 } } });
    let text = '';
    const out = new Writable({ write(chunk, _enc, cb) { text += chunk.toString(); cb(); } });
    assert.equal(await spiderCommand(config, ['--once', '--local', '--json'], out), 0, text);
    const summary = JSON.parse(text) as SpiderSummary;
    assert.equal(summary.events.invalid, 0, text);
    const store = await openStore({ dir: dataDir, readOnly: true });
    try {
      for (const e of [seedList, otherList, mutes]) assert.ok(store.get(e.id), `stored: kind ${e.kind} of ${e.tags.length} tags`);
    } finally {
      await store.close();
    }
  } finally {
    await remote.close();
  }
});
