// One address's live searches for the words of the profiles it publishes: each publication would be
// sent to every one of them, all on the main thread. The live events one address's subscriptions
// receive are budgeted (rateLimits.liveEventsPerIp): past it, the subscription that would get one
// more is closed with CLOSED rate-limited:, the relay answers as before, and once the bucket has
// refilled a new subscription gets live events again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startRelayProcess } from '../helpers/relay-process.js';
import { Author, Client, sleep } from '../helpers/client.js';

test('live fan-out budgeted per address: over it, subscriptions are closed with rate-limited:, the relay goes on', async () => {
  const relay = await startRelayProcess({ env: { ORBWEAVER_RATE_LIMITS_LIVE_EVENTS_PER_IP: '50', ORBWEAVER_RATE_LIMITS_BURST_SECONDS: '2' } });
  try {
    const subscriber = await Client.open(relay.url);
    const subs = Array.from({ length: 30 }, (_, i) => `s${i}`);
    for (const id of subs) subscriber.send(['REQ', id, { kinds: [0], search: 'weaverbudget' }]);
    for (const id of subs) await subscriber.next((m) => m[0] === 'EOSE' && m[1] === id);

    const publisher = await Client.open(relay.url);
    const t0 = Date.now();
    for (let i = 0; i < 16; i++) {
      const r = await publisher.publish(new Author().sign({ kind: 0, content: JSON.stringify({ name: `weaverbudget ${i}` }) }));
      assert.equal(r.ok, true, r.message);
    }
    const seconds = (Date.now() - t0) / 1000;
    // 16 x 30 = 480 live events wanted, 100 in the bucket (50/s, 2 s of burst) plus what refills while
    // they are published: most subscriptions end, each saying why; none gets more than its share
    await sleep(300);
    const closed = subscriber.received.filter((m) => m[0] === 'CLOSED');
    assert.ok(closed.length >= 20, `${closed.length} of 30 subscriptions closed`);
    for (const m of closed) assert.match(String(m[2]), /^rate-limited: the live events for this address's subscriptions exceeded 50 a second; this subscription was closed/);
    const delivered = subscriber.inbox.filter((m) => m[0] === 'EVENT').length;
    assert.ok(delivered <= 100 + 50 * seconds + 30, `${delivered} live events delivered in ${seconds.toFixed(1)} s: within the budget`);
    assert.ok(delivered >= 90, `${delivered} live events delivered: the bucket's worth`);

    // the relay answers as before, and a new subscription gets live events once the bucket refilled
    assert.equal((await publisher.query([{ kinds: [0], search: 'weaverbudget', limit: 50 }])).events.length, 16);
    await sleep(2200);
    subscriber.send(['REQ', 'again', { kinds: [0], search: 'weaverbudget', since: Math.floor(Date.now() / 1000) }]);
    await subscriber.next((m) => m[0] === 'EOSE' && m[1] === 'again');
    const late = new Author().sign({ kind: 0, content: JSON.stringify({ name: 'weaverbudget late' }) });
    assert.equal((await publisher.publish(late)).ok, true);
    const got = await subscriber.next((m) => m[0] === 'EVENT' && m[1] === 'again');
    assert.equal((got[2] as { id: string }).id, late.id);
    subscriber.close();
    publisher.close();
  } finally {
    await relay.stop();
  }
});
