// Attack: many connections ask for large results and never read them. The output cap was per
// connection only, so 100 such connections took the relay from 283 MB to 1.68 GB. Unsent output is
// now also capped per address (limits.maxBufferedBytesPerIp, 64 MiB): past it, the connection of
// that address holding the most is closed as a slow reader, and memory stays bounded.
// Default settings; the attacker connects from 127.0.0.2, the other client from 127.0.0.1.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import { startRelayProcess, type RelayProcess } from '../helpers/relay-process.js';
import { Client, now } from '../helpers/client.js';
import { metric, rawSocket, rssMb, signedEvents } from './helpers.js';
import { loadPaced } from '../../bench/lib/sockets.js';

let relay: RelayProcess;
let firstId = '';
before(async () => {
  relay = await startRelayProcess();
  const t = now();
  const evs = await signedEvents('slow', 40, (i) => ({ kind: 1, created_at: t - i, tags: [], content: `${i} ${'x'.repeat(60_000)}` }));
  assert.equal((await loadPaced(relay.url, evs)).stored, 40); // within the default 1 MiB/s per address
  firstId = evs[0].id;
});
after(async () => { await relay.cleanup(); });

test('40 connections that never read hold at most the per-address output cap; the relay stays small and answers', async () => {
  const perIp = 64 * 1024 * 1024;
  const rss0 = rssMb(relay.proc.pid!);
  let peakRss = rss0;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      peakRss = Math.max(peakRss, rssMb(relay.proc.pid!));
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  const socks = await Promise.all(Array.from({ length: 40 }, () => rawSocket(relay.url, {}, { localAddress: '127.0.0.2' })));
  for (const [i, ws] of socks.entries()) {
    (ws as unknown as { _socket: Socket })._socket.pause(); // never read again
    // each asks 4 times for the 40 events of ~60 KB: 9.6 MB of output per connection, 384 MB in all
    for (const k of [0, 1, 2, 3]) ws.send(JSON.stringify(['REQ', `s${i}-${k}`, { kinds: [1], limit: 100 }]));
  }
  const closedByAddress = () => relay.logs.filter((l) => l.msg === 'closing a slow reader' && l.cap === 'address').length;
  for (let i = 0; i < 300 && closedByAddress() === 0; i++) await new Promise((r) => setTimeout(r, 20));
  await new Promise((r) => setTimeout(r, 500));
  // another client is served meanwhile
  const victim = await Client.open(relay.url);
  const q = await victim.query({ ids: [firstId] });
  assert.equal(q.events.length, 1);
  sampling = false;
  await sampler;
  assert.ok(closedByAddress() > 0, 'connections were closed for the address cap');
  // the peak the relay itself recorded (without the address cap this run held ~110 MiB unsent;
  // the kernel's socket buffers take the rest of the 480 MB asked for)
  const peakUnsent = await metric(relay, 'orbweaver_unsent_bytes_peak');
  assert.ok(peakUnsent <= perIp + (1 << 20), `unsent output peaked at ${(peakUnsent / 2 ** 20).toFixed(0)} MiB`);
  // transient result strings and garbage come on top: bounded, far from the 1.7 GB of old
  assert.ok(peakRss - rss0 < 700, `RSS ${rss0.toFixed(0)} -> peak ${peakRss.toFixed(0)} MB`);
  for (const ws of socks) ws.terminate();
  victim.close();
});
