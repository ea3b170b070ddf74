// Live delivery against a relay with default limits: the REQ's scan and the live stream together
// deliver every event exactly once, with scans on the main thread and in the query pool.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startRelayProcess, type RelayProcess } from '../helpers/relay-process.js';
import { Author, Client, ids, now, sleep } from '../helpers/client.js';

const relays: RelayProcess[] = [];
after(async () => { await Promise.all(relays.map((r) => r.cleanup())); });

for (const queryThreads of ['0', '2']) {
test(`events stored while a scan runs are delivered once: stored before EOSE or live after it (queryThreads ${queryThreads})`, async () => {
  const relay = await startRelayProcess({ env: { ORBWEAVER_QUERY_THREADS: queryThreads } });
  relays.push(relay);
  const c = await Client.open(relay.url);
  const s = await Client.open(relay.url);
  for (let round = 0; round < 30; round++) {
    const a = new Author(); // a fresh author each round keeps every event inside the default limit
    const evs = Array.from({ length: 30 }, (_, i) => a.sign({ created_at: now() - 60 + i, content: `${round}-${i}` }));
    const pubs = evs.map((e) => s.publish(e));
    const subId = `mid${round}`;
    c.send(['REQ', subId, { authors: [a.pk], since: now() - 3600 }]);
    await Promise.all(pubs);
    await c.next((m) => m[0] === 'EOSE' && m[1] === subId, 5000);
    await sleep(50);
    const got = c.inbox.filter((m) => m[0] === 'EVENT' && m[1] === subId).map((m) => (m[2] as { id: string }).id);
    const want = new Set(ids(evs));
    const fromRound = got.filter((id) => want.has(id));
    assert.equal(new Set(fromRound).size, fromRound.length, 'no event delivered twice');
    assert.equal(fromRound.length, evs.length, 'every event delivered, stored or live');
    c.send(['CLOSE', subId]);
  }
  c.close();
  s.close();
});
}
