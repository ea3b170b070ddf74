// The spider as an operator turns it on: ORBWEAVER_SPIDER=1 and friends on the real relay process.
// It crawls at start-up, its events reach the relay's live subscribers through the one ingest path,
// and its progress shows in /metrics, on the dashboard and through NIP-86 spiderstatus.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startRelayProcess } from '../helpers/relay-process.js';
import { Client } from '../helpers/client.js';
import { TestRelay, keypair, sign, relayList } from '../fixtures/test-relay.js';
import { waitFor } from './harness.js';

const T0 = Math.floor(Date.now() / 1000) - 5000;

test('ORBWEAVER_SPIDER=1: the relay crawls from its seeds and shows its progress', async () => {
  const bootstrap = await new TestRelay({ flavour: 'strfry' }).start();
  const a = await new TestRelay({ flavour: 'nostream' }).start();
  const b = await new TestRelay({ flavour: 'rs' }).start();
  const seed = keypair();
  // The seed's own relay list lives only on the bootstrap relay; it names a; a's lists name b.
  bootstrap.add(relayList(seed.sk, T0, [a.url]));
  const onA = [relayList(keypair().sk, T0, [b.url]), ...Array.from({ length: 40 }, (_, i) => sign(keypair().sk, i % 2 ? 0 : 3, T0 - i))];
  const onB = Array.from({ length: 25 }, (_, i) => sign(keypair().sk, 10000, T0 - i));
  a.add(...onA);
  b.add(...onB);
  const home = await startRelayProcess({
    env: {
      ORBWEAVER_SPIDER: '1',
      ORBWEAVER_SPIDER_SEEDS: seed.pk,
      ORBWEAVER_SPIDER_BOOTSTRAP_RELAYS: bootstrap.url,
      ORBWEAVER_SPIDER_ALLOW_PRIVATE: '1',
      ORBWEAVER_SPIDER_HOPS: '2',
      ORBWEAVER_SPIDER_IDLE_TIMEOUT: '3s',
      ORBWEAVER_SPIDER_PAUSE: '0',
      ORBWEAVER_SPIDER_INTERVAL: '24h',
    },
  });
  const sub = await Client.open(home.url);
  try {
    sub.send(['REQ', 'live', { kinds: [0, 3, 10000, 10002], since: T0 - 1000 }]);
    const expected = [...onA, ...onB].map((e) => e.id);
    const seen = () => new Set(sub.inbox.filter((m) => m[0] === 'EVENT' && m[1] === 'live').map((m) => (m[2] as { id: string }).id));
    await waitFor(() => expected.every((id) => seen().has(id)), 30_000, 'every crawled event delivered to the subscriber (stored or live)');

    let metrics = '';
    for (let i = 0; i < 150 && !/^orbweaver_spider_runs(_total)? [1-9]/m.test(metrics); i++) {
      await new Promise((r) => setTimeout(r, 100));
      metrics = await (await fetch(home.httpUrl + '/metrics')).text();
    }
    assert.match(metrics, /^orbweaver_spider_runs(_total)? 1$/m, 'one finished run in /metrics');
    const status = (await (await fetch(home.httpUrl + '/status.json')).json()) as { sections: Array<{ title: string; rows: Array<[string, string]> }> };
    const section = status.sections.find((s) => s.title === 'Directory spider');
    assert.ok(section, 'the dashboard has a spider section');
    const rows = Object.fromEntries(section.rows);
    assert.match(rows['runs'], /^[1-9]/);
    assert.match(rows['last run'], /UTC by relay: 2 reached, 0 failed, 0 refused, 67 events stored/, 'a and b reached; 66 crawled events plus the seed list from the bootstrap relay');
  } finally {
    sub.close();
    await home.cleanup();
    await Promise.all([bootstrap.close(), a.close(), b.close()]);
  }
});
