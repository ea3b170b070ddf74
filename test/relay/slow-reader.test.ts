// A client that stops reading is bounded: once its unsent output passes limits.maxBufferedBytes
// the relay closes it (with a NOTICE), while other connections carry on.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import { startRelayProcess } from '../helpers/relay-process.js';
import { Author, Client, sleep } from '../helpers/client.js';

test('a subscriber that does not read is closed at the output cap; the publisher is unaffected', async () => {
  // the publisher sends ~60 KB events back to back, above the default 1 MiB/s per address
  const relay = await startRelayProcess({ env: { ORBWEAVER_LIMITS_MAX_BUFFERED_BYTES: '65536', ORBWEAVER_RATE_LIMITS_BYTES_PER_IP: '0' } });
  try {
    const a = new Author();
    const slow = await Client.open(relay.url);
    await slow.query({ authors: [a.pk], limit: 0 }, 'feed', false);
    // Stop reading: the kernel buffers fill, then uWS holds the rest for this socket.
    const socket = (slow.ws as unknown as { _socket: Socket })._socket;
    socket.pause();
    const pub = await Client.open(relay.url);
    const content = 'x'.repeat(60_000); // large events: loopback kernel buffers hold several MB before uWS must
    let acked = 0;
    for (let i = 0; i < 1000 && !slow.closed; i++) {
      const r = await pub.publish(a.sign({ content: `${i} ${content}` }));
      assert.equal(r.ok, true, r.message);
      acked++;
      if (i % 20 === 19) {
        const metrics = await (await fetch(relay.httpUrl + '/metrics')).text();
        if (/^orbweaver_slow_connections_closed_total [1-9]/m.test(metrics)) break;
      }
    }
    const metrics = await (await fetch(relay.httpUrl + '/metrics')).text();
    assert.match(metrics, /^orbweaver_slow_connections_closed_total 1$/m, `closed after ${acked} events of ~60 KB`);
    // The slow client, reading again, finds the NOTICE and then the close.
    socket.resume();
    for (let i = 0; i < 100 && !slow.closed; i++) await sleep(50);
    assert.equal(slow.closed, true, 'the slow connection was closed');
    assert.ok(slow.inbox.some((m) => m[0] === 'NOTICE' && /slow reader/.test(String(m[1]))), 'it was told why');
    // The publisher's connection is fine.
    assert.equal((await pub.publish(a.sign({ content: 'after' }))).ok, true);
    pub.close();
  } finally {
    await relay.cleanup();
  }
});
