// NIP-45 over the wire: a follower count answers {"count", "hll"} with the registers of the
// followers' pubkeys, exact through unfollows, from the query threads and from the main thread.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startRelayProcess } from '../helpers/relay-process.js';
import { Author, Client } from '../helpers/client.js';
import { oracleRegisters } from '../store/helpers.js';

for (const threads of ['2', '0']) {
  test(`COUNT {kinds:[3], #p:[pk]} returns the exact count and the NIP-45 hll (queryThreads ${threads})`, async () => {
    const relay = await startRelayProcess({ env: { ORBWEAVER_QUERY_THREADS: threads } });
    const c = await Client.open(relay.url);
    try {
      const target = new Author();
      const other = new Author();
      const followers = Array.from({ length: 12 }, () => new Author());
      let t = Math.floor(Date.now() / 1000) - 1000;
      for (const a of followers) assert.equal((await c.publish(a.sign({ kind: 3, created_at: t++, tags: [['p', target.pk], ['p', other.pk]] }))).ok, true);
      const f = { kinds: [3], '#p': [target.pk] };
      const expect = (who: Author[]) => ({ count: who.length, hll: oracleRegisters({ tags: [['p', [target.pk]]] }, who.map((a) => ({ pubkey: a.pk }))) });

      assert.deepEqual((await c.count(f))[2], expect(followers));
      // four unfollow (a newer follow list without the target): their registers must go
      for (const a of followers.slice(0, 4)) await c.publish(a.sign({ kind: 3, created_at: t++, tags: [['p', other.pk]] }));
      for (let i = 0; i < 3; i++) assert.deepEqual((await c.count(f))[2], expect(followers.slice(4)), `after unfollows, asked ${i + 1}x`);
      // filters the counters do not answer: counted, without hll
      assert.deepEqual((await c.count({ kinds: [3], '#p': [target.pk, other.pk] }))[2], { count: 12 });
      assert.deepEqual((await c.count({ '#p': [target.pk] }))[2], { count: 8 });
      assert.deepEqual((await c.count({ kinds: [3], '#p': [new Author().pk] }))[2], { count: 0, hll: '00'.repeat(256) });
    } finally {
      c.close();
      await relay.cleanup();
    }
  });
}
