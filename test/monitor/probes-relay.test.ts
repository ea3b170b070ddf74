// The probes against the relays this project can start, through the relay's own monitor
// (`orbweaver relay` with ORBWEAVER_SPIDER_MONITOR=1): orbweaver with search on and with search
// off, strfry, a fake relay that claims NIP-50/77/45 and refuses them, one that serves them without
// claiming. Every published N and T tag is true (what the probe saw, or a claim no probe can test),
// every difference is shown on /directory.json and by `orbweaver directory`, and the finder for
// clients — /directory.json?serves=, `orbweaver directory --serves`, a #N REQ for 30166 — names the
// relays that serve a NIP and nothing else.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startRelayProcess, type RelayProcess } from '../helpers/relay-process.js';
import { Client } from '../helpers/client.js';
import { runCliAsync } from '../helpers/cli.js';
import { startStrfry, strfrySkip, type Strfry } from '../helpers/strfry.js';
import { keypair, relayList, sign } from '../fixtures/test-relay.js';
import { FakeRelay } from '../fixtures/fake-relay.js';
import type { DirectoryDocument, RelayDetail, ServingAnswer } from '../../src/monitor/document.js';
import type { NostrEvent } from '../../src/nostr/event.js';
import { discoveryAddress } from '../../src/monitor/nip66.js';
import { assertNip66, type SignedEvent } from './nip66-validator.js';

const now = () => Math.floor(Date.now() / 1000);
const values = (ev: NostrEvent, name: string) => ev.tags.filter((t) => t[0] === name).map((t) => t[1]);

test('probes on real relays: N and T as observed, differences shown, the finder answers', { timeout: 120_000 }, async (t) => {
  const profile = (sk: Uint8Array) => sign(sk, 0, now(), [], JSON.stringify({ name: 'probe target', about: 'a nostr profile' }));
  const searchOn = await startRelayProcess();
  const searchOff = await startRelayProcess({ env: { ORBWEAVER_SEARCH_KINDS: '' } });
  const strfry: Strfry | null = strfrySkip ? null : await startStrfry();
  const liar = await new FakeRelay({ nip11: { name: 'liar', supported_nips: [1, 11, 45, 50, 77] }, search: 'refuse', neg: 'refuse', count: 'refuse' }).start();
  const modest = await new FakeRelay({ nip11: { name: 'modest', supported_nips: [1, 11] }, search: 'serve', neg: 'serve', count: 'serve', authOnDemand: true, profiles: [{ kind: 0, content: '{"about":"nostr"}', tags: [] }] }).start();
  let monitor: RelayProcess | null = null;
  try {
    for (const url of [searchOn.url, searchOff.url, ...(strfry ? [strfry.url] : [])]) {
      const c = await Client.open(url);
      assert.equal((await c.publish(profile(keypair().sk))).ok, true);
      c.close();
    }
    const targets = [searchOn.url, searchOff.url, liar.url, modest.url, ...(strfry ? [strfry.url] : [])];
    monitor = await startRelayProcess({
      env: { ORBWEAVER_SPIDER_MONITOR: '1', ORBWEAVER_SPIDER_ALLOW_PRIVATE: '1', ORBWEAVER_SPIDER_MONITOR_INTERVAL: '2s', ORBWEAVER_SPIDER_MONITOR_TIMEOUT: '2s' },
    });
    const cl = await Client.open(monitor.url);
    assert.equal((await cl.publish(relayList(keypair().sk, now(), targets))).ok, true);

    const doc = async () => (await (await fetch(monitor!.httpUrl + '/directory.json')).json()) as DirectoryDocument;
    let d = await doc();
    for (let i = 0; i < 600 && !(d.rows.length === targets.length && d.rows.every((r) => r.online && Object.keys(r.probes).length > 0)); i++) {
      await new Promise((r) => setTimeout(r, 100));
      d = await doc();
    }
    const row = (url: string) => d.rows.find((r) => r.url === url)!;
    assert.deepEqual(d.rows.map((r) => [r.url, r.online]).sort(), targets.map((u) => [u, true]).sort(), 'every target validated, checked and online');

    const { events } = await cl.query({ kinds: [30166] });
    assertNip66(events as SignedEvent[]);
    // d is the URL in RFC 3986 normal form ("/" for an empty path), the directory's rows the spider's spelling
    const byUrl = new Map(events.map((e) => [values(e, 'd')[0], e]));
    const N = (url: string) => values(byUrl.get(discoveryAddress(url))!, 'N').map(Number);
    const T = (url: string) => values(byUrl.get(discoveryAddress(url))!, 'T');

    // orbweaver, search on: it claims and serves 45, 50, 77; it challenges on demand (a DM REQ)
    assert.deepEqual(row(searchOn.url).probes, { 50: 'served', 45: 'served', 77: 'served', 42: 'challenge on demand' }, JSON.stringify(row(searchOn.url)));
    for (const n of [45, 50, 77]) assert.ok(N(searchOn.url).includes(n), `N ${n}`);
    assert.deepEqual(T(searchOn.url), ['Search']);
    assert.deepEqual(row(searchOn.url).differences, []);
    // search off: NIP-11 omits 50 and the probe sees no search served
    assert.notEqual(row(searchOff.url).probes['50'], 'served');
    assert.equal(N(searchOff.url).includes(50), false);
    assert.deepEqual(T(searchOff.url), []);
    assert.ok(N(searchOff.url).includes(45) && N(searchOff.url).includes(77));
    // the liar: every claim it refuses is gone, and the differences say so
    assert.deepEqual(N(liar.url), [1, 11]);
    assert.deepEqual(T(liar.url), []);
    assert.deepEqual(row(liar.url).claimedNips, [1, 11, 45, 50, 77]);
    assert.deepEqual(row(liar.url).differences, ['claims NIP-45, refused: unsupported: COUNT', 'claims NIP-50, refused: unsupported: search', 'claims NIP-77, refused: NEG-ERR blocked: negentropy disabled']);
    // the modest relay: served without claiming is published
    assert.deepEqual(N(modest.url), [1, 11, 42, 45, 50, 77]);
    assert.deepEqual(T(modest.url), ['Search']);
    assert.equal(row(modest.url).differences.length, 4);
    // strfry: whatever it claims, each probed N agrees with the probe
    if (strfry) {
      const p = row(strfry.url).probes;
      t.diagnostic(`strfry: claims ${row(strfry.url).claimedNips.join(',')}; probes ${JSON.stringify(p)}; differences ${JSON.stringify(row(strfry.url).differences)}`);
      for (const [nip, o] of [[45, p['45']], [50, p['50']], [77, p['77']]] as const) {
        if (o === 'served') assert.ok(N(strfry.url).includes(nip), `strfry N ${nip} served`);
        else if (o !== 'empty' && o !== 'skipped') assert.equal(N(strfry.url).includes(nip), false, `strfry N ${nip}: ${o}`);
      }
      assert.equal(p['77'], 'served', 'strfry serves NIP-77');
      assert.notEqual(p['50'], 'served', 'strfry has no search');
      assert.deepEqual(T(strfry.url), []);
    }

    // the finder for clients: /directory.json?serves=, the CLI, a #N REQ
    const serving = async (q: string) => ((await (await fetch(`${monitor!.httpUrl}/directory.json?serves=${q}`)).json()) as ServingAnswer).relays.map((r) => r.url).sort();
    assert.deepEqual(await serving('50'), [searchOn.url, modest.url].sort());
    assert.deepEqual(await serving('search'), [searchOn.url, modest.url].sort());
    assert.deepEqual(await serving('77'), [searchOn.url, searchOff.url, modest.url, ...(strfry ? [strfry.url] : [])].sort());
    assert.equal((await fetch(`${monitor.httpUrl}/directory.json?serves=everything`)).status, 400);
    const fromN = (await cl.query({ kinds: [30166], '#N': ['50'] })).events.map((e) => values(e, 'd')[0]).sort();
    assert.deepEqual(fromN, [searchOn.url, modest.url].map(discoveryAddress).sort(), 'clients get the same from #N');
    assert.equal(d.summary.serving.find((s) => s.nip === 50)!.relays, 2);
    assert.ok(d.summary.differing >= 2);

    const cli = await runCliAsync(['directory', '--serves', 'search', '--data', monitor.dataDir]);
    assert.equal(cli.status, 0, cli.stderr);
    const listed = cli.stdout.split('\n').slice(1).filter(Boolean).map((l) => l.split(/\s+/)[0]).sort();
    assert.deepEqual(listed, [searchOn.url, modest.url].sort(), cli.stdout);
    assert.match(cli.stdout, new RegExp(`${modest.url.replace(/[.]/g, '\\.')} .*NOT claimed`));
    const one = await runCliAsync(['directory', '--relay', liar.url, '--data', monitor.dataDir]);
    assert.equal(one.status, 0, one.stderr);
    assert.match(one.stdout, /differences: +claims NIP-45, refused: unsupported: COUNT; claims NIP-50/);
    assert.match(one.stdout, /probes: +NIP-42 no challenge, NIP-45 refused, NIP-50 refused, NIP-77 refused$/m);
    for (const line of one.stdout.split('\n')) assert.ok(line.length <= 100, line);
    const table = await runCliAsync(['directory', '--data', monitor.dataDir]);
    assert.match(table.stdout, /serving now \(probed\): NIP-50 2, NIP-45 \d+, NIP-77 \d+; claims differ from the probes at \d+ relays/);

    const detail = (await (await fetch(`${monitor.httpUrl}/directory.json?relay=${encodeURIComponent(liar.url)}`)).json()) as RelayDetail;
    assert.ok(detail.probes.length >= 1, 'the probe history');
    assert.equal(detail.probes.at(-1)![1]['50'], 'refused');
    assert.ok(detail.probeStats['50'].refused >= 1);
    assert.equal(detail.probeReport?.search?.outcome, 'refused');
    const page = await (await fetch(monitor.httpUrl + '/directory')).text();
    assert.match(page, /Serving now \(probed\)/);
    assert.ok(page.includes('claims NIP-50, refused: unsupported: search'), 'the differences are in the page\'s document');
    const metrics = await (await fetch(monitor.httpUrl + '/metrics')).text();
    assert.match(metrics, /^orbweaver_monitor_probes_total\{nip="50",outcome="refused"\} [1-9]\d*$/m);
    assert.match(metrics, /^orbweaver_monitor_probes_total\{nip="77",outcome="served"\} [1-9]\d*$/m);
    assert.equal(liar.verbs.EVENT ?? 0, 0, 'nothing written to the relays without monitorWrite');
    cl.close();
  } finally {
    await monitor?.cleanup();
    await Promise.all([searchOn.cleanup(), searchOff.cleanup(), strfry?.stop(), liar.close(), modest.close()]);
  }
});
