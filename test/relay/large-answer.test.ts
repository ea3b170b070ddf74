// One REQ's stored events may be larger than a connection's output cap (limits.maxBufferedBytes):
// 500 follow lists of the network's size are 8-35 MB, over the default 8 MiB. A client that asks
// for them and reads gets all of them, then EOSE; it is not closed as a slow reader. (Clients that
// never read stay bounded by the address cap: test/hostile/slow-readers.test.ts.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startRelayProcess } from '../helpers/relay-process.js';
import { Author, Client } from '../helpers/client.js';

test('a REQ answer larger than the connection output cap is sent whole, and the connection stays open', async () => {
  // a 64 KiB cap, and 24 events of ~20 KB: an answer of ~480 KB, queued at once
  const relay = await startRelayProcess({ env: { ORBWEAVER_LIMITS_MAX_BUFFERED_BYTES: '65536' } });
  try {
    const a = new Author();
    const pub = await Client.open(relay.url);
    for (let i = 0; i < 24; i++) assert.equal((await pub.publish(a.sign({ content: `${i} ${'x'.repeat(20_000)}` }))).ok, true);
    const reader = await Client.open(relay.url);
    for (const round of [1, 2]) {
      const r = await reader.query({ authors: [a.pk], limit: 24 });
      assert.equal(r.closed, undefined, `round ${round}: not closed`);
      assert.equal(r.events.length, 24, `round ${round}: every event`);
    }
    assert.equal(reader.closed, false, 'the reader is still connected');
    const metrics = await (await fetch(relay.httpUrl + '/metrics')).text();
    assert.match(metrics, /^orbweaver_slow_connections_closed_total 0$/m);
    reader.close();
    pub.close();
  } finally {
    await relay.cleanup();
  }
});
