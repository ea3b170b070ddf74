// End to end with the real relay process: `spider --once` (spiderCommand) while the relay runs
// publishes every fetched event to it over NIP-01, so they take its ingest path and a live
// subscriber on the home relay receives them as they are stored. The relay's own URL is skipped.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startRelayProcess } from '../helpers/relay-process.js';
import { Client } from '../helpers/client.js';
import { TestRelay, keypair, sign, relayList } from '../fixtures/test-relay.js';
import { spiderCommand } from '../../src/commands/spider.js';
import { loadConfig } from '../../src/config.js';
import type { SpiderSummary } from '../../src/spider/status.js';
import { waitFor, spiderOnceJson } from './harness.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { openStore } from '../../src/store/index.js';
import { RelayDirectory } from '../../src/directory/records.js';
import { SpiderRuns } from '../../src/directory/runs.js';
import { normalizeRelayUrl } from '../../src/remote/url.js';

const T0 = Math.floor(Date.now() / 1000) - 5000;

test('spider --once against a running relay: events reach its store and its live subscribers', async () => {
  const home = await startRelayProcess();
  const a = await new TestRelay({ flavour: 'strfry' }).start();
  const b = await new TestRelay({ flavour: 'rs' }).start();
  const sub = await Client.open(home.url);
  try {
    const seed = keypair();
    // hop 0: a (named by the seed's list). a's lists name b and the home relay itself.
    const onA = [relayList(keypair().sk, T0, [b.url, home.url]), ...Array.from({ length: 30 }, (_, i) => sign(keypair().sk, i % 2 ? 0 : 3, T0 - i))];
    const onB = Array.from({ length: 20 }, (_, i) => sign(keypair().sk, 10000, T0 - i));
    a.add(...onA);
    b.add(...onB);
    const seedList = relayList(seed.sk, T0, [a.url]);
    const pub = await Client.open(home.url);
    pub.send(['EVENT', seedList]);
    await pub.next((m) => m[0] === 'OK' && m[1] === seedList.id, 5000, 'OK for the seed list');
    pub.ws.close();

    // A live subscriber on the home relay, past its EOSE.
    sub.send(['REQ', 'live', { kinds: [0, 3, 10000, 10002], since: T0 - 1000 }]);
    await sub.next((m) => m[0] === 'EOSE' && m[1] === 'live', 5000, 'EOSE');
    const live = () => sub.inbox.filter((m) => m[0] === 'EVENT' && m[1] === 'live').map((m) => (m[2] as { id: string }).id);

    const config = loadConfig({
      env: {},
      flags: {
        host: '127.0.0.1', port: home.port, dataDir: home.dataDir, logLevel: 'silent',
        spider: { seeds: [seed.pk], allowPrivate: true, hops: 2, idleTimeout: '3s', pause: 0 },
      },
    });
    const s = await spiderOnceJson<SpiderSummary>(config);
    assert.deepEqual(s.hops.map((h) => [h.relays, h.reached, h.skipped]), [[1, 1, 0], [2, 1, 1]], 'a at hop 0; b and the home relay (skipped) at hop 1');
    assert.equal(s.events.stored, onA.length + onB.length);

    const expected = [...onA, ...onB].map((e) => e.id);
    await waitFor(() => expected.every((id) => live().includes(id)), 10_000, 'live events on the home relay');
    // And they are stored: a fresh REQ returns them.
    const q = await Client.open(home.url);
    q.send(['REQ', 'q', { ids: expected }]);
    await q.next((m) => m[0] === 'EOSE' && m[1] === 'q', 5000, 'EOSE');
    assert.equal(q.inbox.filter((m) => m[0] === 'EVENT').length, expected.length);
    q.ws.close();

    // The spider's own records went through the relay too (ORBWEAVER-RECORD): the store kept one
    // writing process, the relay, which still holds its lock; what it committed reads back here.
    const lock = JSON.parse(readFileSync(join(home.dataDir, 'writer.lock'), 'utf8')) as { pid: number };
    assert.equal(lock.pid, home.proc.pid);
    const store = await openStore({ dir: home.dataDir, readOnly: true });
    try {
      const dir = new RelayDirectory(store.env);
      assert.equal(dir.get(normalizeRelayUrl(a.url)!)?.lastOutcome, 'ok');
      assert.equal(dir.get(normalizeRelayUrl(b.url)!)?.lastCounts?.stored, onB.length);
      assert.equal(new SpiderRuns(store.env).last()?.by, 'orbweaver spider --once');
    } finally {
      await store.close();
    }
  } finally {
    sub.ws.close();
    await a.close();
    await b.close();
    await home.cleanup();
  }
});
