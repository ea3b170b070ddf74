// NIP-67 in the spider's paging: a relay that ends a page with ["finish"] sent every match of that
// page's filter, so the spider asks no further page of that kind (the one more REQ that would only
// show nothing older). The same data on a relay without NIP-67 is fetched as completely, with more
// REQs; a relay that says finish while holding more is believed only for that page's kind and
// window (a relay can always leave events out by ending early).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { tempDir } from '../helpers/relay-process.js';
import { TestRelay, keypair, sign, relayList } from '../fixtures/test-relay.js';
import { spiderCommand } from '../../src/commands/spider.js';
import { loadConfig } from '../../src/config.js';
import { openStore } from '../../src/store/index.js';
import type { NostrEvent } from '../../src/nostr/event.js';

const T0 = Math.floor(Date.now() / 1000) - 5000;

async function crawl(relay: TestRelay, events: NostrEvent[], seed: string): Promise<{ reqs: number; stored: number }> {
  const dataDir = tempDir();
  const config = loadConfig({ env: {}, flags: { dataDir, logLevel: 'silent', spider: { seeds: [seed], bootstrapRelays: [relay.url], allowPrivate: true, hops: 0, idleTimeout: '3s', pause: 0, negentropy: 'off' } } });
  let text = '';
  const out = new Writable({ write(chunk, _enc, cb) { text += chunk.toString(); cb(); } });
  assert.equal(await spiderCommand(config, ['--once', '--local', '--json'], out), 0, text);
  const store = await openStore({ dir: dataDir, readOnly: true });
  try {
    return { reqs: relay.reqs.length, stored: events.filter((e) => store.get(e.id)).length };
  } finally {
    await store.close();
  }
}

test('spider paging stops at a page whose EOSE says finish: every event, fewer REQs', async () => {
  const seed = keypair();
  const people = Array.from({ length: 40 }, () => keypair());
  const relays = [await new TestRelay({ flavour: 'strfry', cap: 25 }).start(), await new TestRelay({ flavour: 'strfry', cap: 25, nip67: true }).start()];
  try {
    const results: Array<{ reqs: number; stored: number }> = [];
    for (const relay of relays) {
      const events = [relayList(seed.sk, T0, [relay.url]), ...people.flatMap((p, i) => [sign(p.sk, 0, T0 + i), sign(p.sk, 3, T0 + i, [['p', seed.pk]])])];
      relay.add(...events);
      results.push(await crawl(relay, events, seed.pk));
      assert.equal(results.at(-1)!.stored, events.length, 'every event stored');
    }
    const [plain, nip67] = [results[0]!, results[1]!];
    assert.ok(nip67.reqs < plain.reqs, `REQs: ${nip67.reqs} with finish, ${plain.reqs} without`);
  } finally {
    await Promise.all(relays.map((r) => r.close()));
  }
});
