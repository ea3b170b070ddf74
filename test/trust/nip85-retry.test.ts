// NIP-85 on a quiet relay: an assertion the ingest path refused is published again by a pass of its
// own, without waiting for a follow or mute list to arrive (issue 75: one of the most followed had
// none after 120 s). In process: createTrust over a store, its `put` refusing one assertion once.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { createTrust } from '../../src/trust/trust.js';
import type { NostrEvent } from '../../src/nostr/event.js';
import type { IngestStatus } from '../../src/ingest/types.js';
import { ev, hex, put, withStore } from '../store/helpers.js';

const quiet = { info() {}, warn() {}, error() {} };

test('NIP-85: an assertion refused once is published by the next pass, which runs without any new list', async () => {
  await withStore(async (store, dir) => {
    const a = hex(), b = hex(), x = hex();
    await put(store, ev({ kind: 3, pubkey: a, tags: [['p', b], ['p', x]] }));
    await put(store, ev({ kind: 3, pubkey: b, tags: [['p', x]] }));
    const config = loadConfig({ env: {}, flags: { dataDir: dir, trust: { nip85: true, debounce: '50ms', interval: '0' } } });
    let refused = 0;
    const stored: NostrEvent[] = [];
    const putEvent = async (e: NostrEvent): Promise<IngestStatus> => {
      // the first assertion about x is refused (a store error, say); everything else is stored
      if (e.kind === 30382 && e.tags[0]![1] === x && refused++ === 0) return 'rejected';
      stored.push(e);
      return (await store.write(e, JSON.stringify(e))).status === 'stored' ? 'stored' : 'rejected';
    };
    const trust = createTrust({ config, store, put: putEvent, logger: quiet });
    try {
      trust.start();
      const deadline = Date.now() + 30_000;
      while (Date.now() < deadline && !stored.some((e) => e.kind === 30382 && e.tags[0]![1] === x)) await new Promise((r) => setTimeout(r, 50));
      assert.equal(refused, 2, 'refused once, then offered again');
      const about = (pk: string) => stored.filter((e) => e.kind === 30382 && e.tags[0]![1] === pk).length;
      assert.equal(about(x), 1, 'x asserted by the second pass');
      assert.equal(about(b), 1, 'b, stored by the first pass, not republished');
      assert.ok(trust.status().passes >= 2);
      // the second publication's report, once it is over (x is stored before it ends)
      while (Date.now() < deadline && trust.status().nip85?.last?.failed !== 0) await new Promise((r) => setTimeout(r, 50));
      assert.equal(trust.status().nip85?.last?.failed, 0);
    } finally {
      await trust.stop();
    }
  });
});
