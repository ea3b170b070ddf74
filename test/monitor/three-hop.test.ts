// `orbweaver spider --once` with the monitor on, over a 3-hop loopback network, beside the real
// relay process that owns the data directory: the crawl reaches hops 0-3, then one monitor cycle
// checks the directory and publishes through the relay's ingest path. The store then holds one
// kind 30166 per reached relay — signed by the monitor key kept in the data directory, d = the
// relay's URL, rtt-open > 0, N tags equal to the relay's NIP-11 supported_nips — and one 10166;
// the relay beyond the last hop (named by hop 3's lists) is never contacted, not even for NIP-11.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { verifyEvent } from 'nostr-tools/pure';
import { startRelayProcess } from '../helpers/relay-process.js';
import { Client } from '../helpers/client.js';
import { TestRelay, keypair, relayList, sign } from '../fixtures/test-relay.js';
import { FakeRelay, deadUrl } from '../fixtures/fake-relay.js';
import { loadConfig } from '../../src/config.js';
import { monitorKey } from '../../src/monitor/key.js';
import { openStore } from '../../src/store/index.js';
import { MonitorHistory } from '../../src/monitor/history.js';
import { normalizeRelayUrl } from '../../src/remote/url.js';
import { discoveryAddress } from '../../src/monitor/nip66.js';
import { assertNip66, type SignedEvent } from './nip66-validator.js';
import { spiderOnceJson } from '../spider/harness.js';

const T0 = Math.floor(Date.now() / 1000) - 5000;

test('spider --once with the monitor: one signed 30166 per reached relay and one 10166; beyond the last hop nothing is contacted', async () => {
  const home = await startRelayProcess();
  const nips: Record<string, number[]> = {};
  const r0 = await new TestRelay({ flavour: 'strfry', nip11: { name: 'hop 0', supported_nips: [1, 11] } }).start();
  const r1 = await new TestRelay({ flavour: 'rs', nip11: { name: 'hop 1', supported_nips: [1, 2, 9, 11, 40] } }).start();
  const r2 = await new TestRelay({ flavour: 'nostream', nip11: { name: 'hop 2', supported_nips: [1, 11, 45, 50] } }).start();
  const r3 = await new TestRelay({ flavour: 'plain' }).start(); // serves no NIP-11: only the N its probes saw
  const beyond = await new FakeRelay({ nip11: { supported_nips: [1] } }).start();
  const dead = await deadUrl();
  // N as observed (docs/monitor.md, probes): the test relays answer COUNT whether or not they claim
  // NIP-45, so 45 is published for each; r2's claimed 50 is kept (its search finds nothing: no verdict)
  nips[r0.url] = [1, 11, 45]; nips[r1.url] = [1, 2, 9, 11, 40, 45]; nips[r2.url] = [1, 11, 45, 50]; nips[r3.url] = [45];
  try {
    const seed = keypair();
    r0.add(relayList(keypair().sk, T0, [r1.url, dead, home.url]), ...Array.from({ length: 5 }, (_, i) => sign(keypair().sk, 0, T0 - i)));
    r1.add(relayList(keypair().sk, T0, [r2.url]), sign(keypair().sk, 3, T0, [], JSON.stringify({ [beyond.url + '/kind3']: {} })));
    r2.add(relayList(keypair().sk, T0, [r3.url]));
    r3.add(relayList(keypair().sk, T0, [beyond.url]), ...Array.from({ length: 3 }, (_, i) => sign(keypair().sk, 10000, T0 - i)));
    const pub = await Client.open(home.url);
    const seedList = relayList(seed.sk, T0, [r0.url]);
    pub.send(['EVENT', seedList]);
    await pub.next((m) => m[0] === 'OK' && m[1] === seedList.id, 5000, 'OK for the seed list');
    pub.ws.close();

    const config = loadConfig({
      env: {},
      flags: {
        host: '127.0.0.1', port: home.port, dataDir: home.dataDir, logLevel: 'silent',
        spider: { seeds: [seed.pk], allowPrivate: true, hops: 3, idleTimeout: '3s', pause: 0, monitor: true, monitorTimeout: '2s' },
      },
    });
    const summary = await spiderOnceJson<{ hops: Array<{ relays: number; reached: number }>; monitor: { pubkey: string; checked: number; online: number; published: number } }>(config);
    assert.deepEqual(summary.hops.map((h) => h.reached), [1, 1, 1, 1], 'one relay reached per hop');
    assert.deepEqual([summary.monitor.checked, summary.monitor.online, summary.monitor.published], [5, 4, 4], 'the dead relay is checked and found offline; our own relay is not checked');
    const key = monitorKey('', home.dataDir);
    assert.equal(summary.monitor.pubkey, key.pubkey, 'signed by the key kept in the data directory');

    const q = await Client.open(home.url);
    const discovery = (await q.query({ kinds: [30166] })).events;
    const announcements = (await q.query({ kinds: [10166] })).events;
    q.close();
    assert.equal(announcements.length, 1);
    assert.equal(announcements[0].pubkey, key.pubkey);
    assert.ok(verifyEvent(announcements[0]));
    assert.deepEqual(discovery.map((e) => e.tags.find((t) => t[0] === 'd')![1]).sort(), [r0.url, r1.url, r2.url, r3.url].map(discoveryAddress).sort(), 'one 30166 per reached relay, d = its URL in RFC 3986 normal form');
    assertNip66([...discovery, ...announcements] as SignedEvent[]);
    for (const ev of discovery) {
      const url = normalizeRelayUrl(ev.tags.find((t) => t[0] === 'd')![1])!;
      assert.equal(ev.pubkey, key.pubkey);
      assert.ok(verifyEvent(ev), `signature of the 30166 of ${url}`);
      assert.ok(Number(ev.tags.find((t) => t[0] === 'rtt-open')?.[1]) > 0, `rtt-open > 0 for ${url}`);
      assert.deepEqual(ev.tags.filter((t) => t[0] === 'N').map((t) => Number(t[1])), nips[url], `N tags of ${url} are its NIP-11's, corrected by the probes`);
    }
    assert.equal(beyond.connections, 0, 'the relay beyond the last hop is never contacted');
    assert.equal(beyond.nip11Requests, 0, 'not even for its NIP-11 document');

    // The monitor's own records (each check's health, the crawl's events per kind) went through the
    // relay too (ORBWEAVER-RECORD): the relay committed them, and they read back from its store.
    const store = await openStore({ dir: home.dataDir, readOnly: true });
    try {
      const history = new MonitorHistory(store.env);
      const at = (u: string) => normalizeRelayUrl(u)!;
      for (const r of [r0, r1, r2, r3]) {
        assert.equal(history.latest(at(r.url))?.online, true, `health of ${r.url}`);
        assert.equal(history.snapshots(at(r.url)).length, 1, `one snapshot of ${r.url}`);
      }
      assert.equal(history.latest(at(dead))?.online, false, 'the dead relay checked offline');
      assert.equal(history.crawlKinds(at(r3.url))?.last['10000'], 3, 'events per kind of the crawl');
    } finally {
      await store.close();
    }
  } finally {
    await Promise.all([r0.close(), r1.close(), r2.close(), r3.close(), beyond.close()]);
    await home.cleanup();
  }
});
