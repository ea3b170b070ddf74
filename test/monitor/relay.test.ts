// The monitor inside `orbweaver relay` (ORBWEAVER_SPIDER_MONITOR=1), the spider off: relay URLs in
// events clients publish become candidates (the finder's live feed), the validator admits those
// that answer as Nostr relays — a wss:// relay with a certificate from a CA the process trusts
// (NODE_EXTRA_CA_CERTS), a plain one — and drops those that fail twice (silent; an untrusted
// certificate); every admitted relay is checked and its 30166 carries the certificate's expiry and
// issuer, signed by the key from ORBWEAVER_SPIDER_MONITOR_KEY. /directory.json, the relay detail,
// the status section, /metrics and `orbweaver directory` show the same figures.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { nsecEncode } from 'nostr-tools/nip19';
import { verifyEvent } from 'nostr-tools/pure';
import { startRelayProcess } from '../helpers/relay-process.js';
import { Client } from '../helpers/client.js';
import { runCliAsync } from '../helpers/cli.js';
import { keypair, relayList, sign } from '../fixtures/test-relay.js';
import { FakeRelay } from '../fixtures/fake-relay.js';
import { makeCerts } from '../fixtures/certs.js';
import type { DirectoryDocument, RelayDetail } from '../../src/monitor/document.js';
import { discoveryAddress } from '../../src/monitor/nip66.js';
import { assertNip66, type SignedEvent } from './nip66-validator.js';

const certs = makeCerts();
const now = () => Math.floor(Date.now() / 1000);

test('the relay\'s monitor: finder -> validator -> checks, certificates, pages and the CLI agree', { skip: certs ? false : 'openssl is not installed' }, async () => {
  const c = certs!;
  const tlsGood = await new FakeRelay({ tls: { key: c.key, cert: c.cert }, nip11: { name: 'secure', supported_nips: [1, 11], software: 'fake', version: '1' } }).start();
  const tlsBad = await new FakeRelay({ tls: c.untrusted }).start();
  const honest = await new FakeRelay({ nip11: { name: 'plain', supported_nips: [1, 9, 11] } }).start();
  const silent = await new FakeRelay({ behaviour: 'silent' }).start();
  const monitorKey = keypair();
  const relay = await startRelayProcess({
    env: {
      ORBWEAVER_SPIDER_MONITOR: '1', ORBWEAVER_SPIDER_MONITOR_KEY: nsecEncode(monitorKey.sk), ORBWEAVER_SPIDER_ALLOW_PRIVATE: '1',
      ORBWEAVER_SPIDER_MONITOR_INTERVAL: '1s', ORBWEAVER_SPIDER_MONITOR_TIMEOUT: '2s', ORBWEAVER_SPIDER_CANDIDATE_MAX_FAILURES: '2',
      NODE_EXTRA_CA_CERTS: c.caFile,
    },
  });
  try {
    const cl = await Client.open(relay.url);
    const other = keypair();
    for (const ev of [
      relayList(keypair().sk, now(), [tlsGood.url, honest.url]),
      sign(keypair().sk, 3, now(), [], JSON.stringify({ [silent.url]: { read: true, write: true } })),
      sign(other.sk, 30166, now(), [['d', tlsBad.url], ['rtt-open', '40']]),
    ]) assert.equal((await cl.publish(ev)).ok, true);

    const doc = async () => (await (await fetch(relay.httpUrl + '/directory.json')).json()) as DirectoryDocument;
    let d = await doc();
    for (let i = 0; i < 300; i++) {
      const online = d.rows.filter((r) => r.online).map((r) => r.url).sort();
      // two validation failures each: then the silent relay and the untrusted certificate are dropped
      if (online.length === 2 && d.candidates.total === 0 && d.rows.length === 2 && silent.connections >= 2 && tlsBad.tcp >= 2) break;
      await new Promise((r) => setTimeout(r, 100));
      d = await doc();
    }
    assert.deepEqual(d.rows.map((r) => [r.url, r.online, r.hop]).sort(), [[honest.url, true, -1], [tlsGood.url, true, -1]].sort(), 'validated relays are in the directory, checked and online');
    assert.equal(d.candidates.total, 0, 'the silent relay and the untrusted certificate failed twice: dropped');
    assert.equal(silent.connections, 2, 'tried twice');
    assert.deepEqual([tlsBad.tcp, tlsBad.connections], [2, 0], 'tried twice; the TLS handshake failed before any WebSocket');
    assert.deepEqual([d.summary.checked, d.summary.online.now, d.summary.byNetwork], [2, 2, { clearnet: 2 }]);
    assert.deepEqual(d.summary.byNip, [{ nip: 1, relays: 2 }, { nip: 9, relays: 1 }, { nip: 11, relays: 2 }]);
    assert.equal(d.monitor.enabled, true);
    assert.equal(d.monitor.pubkey, monitorKey.pk);

    const secure = d.rows.find((r) => r.url === tlsGood.url)!;
    assert.equal(secure.sslExpires, c.expires * 1000);
    assert.equal(secure.sslIssuer, 'Orbweaver Test CA');
    assert.equal(secure.sslValid, true);
    const { events } = await cl.query({ kinds: [30166], '#d': [discoveryAddress(tlsGood.url)] });
    assert.equal(events.length, 1, 'd: the URL in RFC 3986 normal form');
    assertNip66([...events, ...(await cl.query({ kinds: [10166, 0, 10002, 5], authors: [monitorKey.pk] })).events] as SignedEvent[]);
    const ev = events[0];
    assert.equal(ev.pubkey, monitorKey.pk, 'signed by ORBWEAVER_SPIDER_MONITOR_KEY');
    assert.ok(verifyEvent(ev));
    const tags = Object.fromEntries(ev.tags.filter((t) => t[0].startsWith('ssl')).map((t) => [t[0], t[1]]));
    assert.deepEqual(tags, { ssl: 'valid', 'ssl-expires': String(c.expires), 'ssl-issuer': 'Orbweaver Test CA' });
    assert.equal((await cl.query({ kinds: [10166], authors: [monitorKey.pk] })).events.length, 1, 'the announcement is REQ-able here');

    const detail = (await (await fetch(`${relay.httpUrl}/directory.json?relay=${encodeURIComponent(tlsGood.url)}`)).json()) as RelayDetail;
    assert.ok(detail.checksInWindow >= 1);
    assert.equal(detail.days.length, 30);
    assert.equal(detail.days.at(-1)!.online, detail.days.at(-1)!.checks, 'online at every check today');
    assert.deepEqual((detail.nip11 as { name: string }).name, 'secure');
    assert.equal((await fetch(`${relay.httpUrl}/directory.json?relay=${encodeURIComponent('wss://nowhere.example')}`)).status, 404);
    const page = await fetch(relay.httpUrl + '/directory');
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type') ?? '', /text\/html/);
    assert.equal((await fetch(relay.httpUrl + '/directory', { method: 'HEAD' })).status, 200);

    const status = (await (await fetch(relay.httpUrl + '/status.json')).json()) as { sections: Array<{ title: string; rows: Array<[string, string]> }> };
    const section = Object.fromEntries(status.sections.find((s) => s.title === 'NIP-66 monitor')?.rows ?? []);
    assert.equal(section['relays checked'], '2');
    const metrics = await (await fetch(relay.httpUrl + '/metrics')).text();
    assert.match(metrics, /^orbweaver_monitor_checks_total\{result="online"\} [1-9]\d*$/m);
    assert.match(metrics, /^orbweaver_monitor_relays_checked 2$/m);
    assert.match(metrics, /^orbweaver_events_stored_total\{source="monitor"\} [1-9]/m);

    // the command line reads the same records beside the running relay
    const cli = await runCliAsync(['directory', '--json', '--data', relay.dataDir]);
    assert.equal(cli.status, 0, cli.stderr);
    const fromCli = JSON.parse(cli.stdout) as DirectoryDocument;
    assert.deepEqual(fromCli.rows.map((r) => [r.url, r.online, r.sslIssuer]).sort(), d.rows.map((r) => [r.url, r.online, r.sslIssuer]).sort());
    const text = await runCliAsync(['directory', '--data', relay.dataDir]);
    assert.match(text.stdout, /monitor: 2 checked; online now 2/);
    assert.match(text.stdout, /^URL +HOP +STATE +LAST CRAWL +FETCHED +STORED +ONLINE +UP 7D +RTT READ$/m);
    for (const line of text.stdout.split('\n')) assert.ok(line.length <= 100, `${line.length} columns: ${line}`);
    const one = await runCliAsync(['directory', '--relay', tlsGood.url, '--data', relay.dataDir]);
    assert.equal(one.status, 0, one.stderr);
    assert.match(one.stdout, /certificate: +valid, expires .* issued by Orbweaver Test CA/);
    cl.close();
  } finally {
    await relay.cleanup();
    await Promise.all([tlsGood, tlsBad, honest, silent].map((r) => r.close()));
    rmSync(c.dir, { recursive: true, force: true });
  }
});
