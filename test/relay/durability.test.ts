// An event acknowledged with OK true survives kill -9: publish from several connections, kill the
// relay mid-stream, restart it on the same data directory, and look for every acknowledged id.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { startRelayProcess, tempDir } from '../helpers/relay-process.js';
import { Author, Client } from '../helpers/client.js';

// with the store's writer on its own thread (the default) and on the main thread
for (const writerThread of ['true', 'false']) test(`every event acknowledged before kill -9 is there after restart (store.writerThread ${writerThread})`, async () => {
  const dataDir = tempDir();
  try {
    const relay = await startRelayProcess({ dataDir, env: { ORBWEAVER_STORE_WRITER_THREAD: writerThread } });
    const authors = Array.from({ length: 4 }, () => new Author());
    const acked: string[] = [];
    const clients = await Promise.all(authors.map(() => Client.open(relay.url)));
    let stop = false;
    const writers = clients.map(async (c, i) => {
      for (let n = 0; !stop && n < 5000; n++) {
        const batch = Array.from({ length: 20 }, (_, k) => authors[i].sign({ content: `${n}-${k}` }));
        for (const ev of batch) c.send(['EVENT', ev]);
        for (const ev of batch) {
          try {
            const m = await c.next((m) => m[0] === 'OK' && m[1] === ev.id, 5000);
            if (m[2] === true) acked.push(ev.id);
          } catch {
            return; // connection gone: the relay was killed
          }
        }
      }
    });
    while (acked.length < 400) await new Promise((r) => setTimeout(r, 20));
    await relay.kill();
    stop = true;
    await Promise.all(writers);
    const again = await startRelayProcess({ dataDir });
    const c = await Client.open(again.url);
    const missing: string[] = [];
    for (let i = 0; i < acked.length; i += 200) {
      const chunk = acked.slice(i, i + 200);
      const { events } = await c.query({ ids: chunk, limit: chunk.length });
      const have = new Set(events.map((e) => e.id));
      for (const id of chunk) if (!have.has(id)) missing.push(id);
    }
    c.close();
    await again.stop();
    assert.ok(acked.length >= 400);
    assert.deepEqual(missing, [], `${missing.length} of ${acked.length} acknowledged events lost`);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
