// Values read with lmdb's getBinaryFast live in one reused buffer whose `length` property is set to
// the value's size; since Node 24, Buffer methods given no end read to the real end of that memory
// (zeros after the value). Every reader of stored values must stay within the value on every Node
// line: the event's JSON (tag filters beyond the indexed one, negentropy's visibility check of
// protected kinds), the search index's documents and the follow graph's pubkey of an id (on Node 24
// it came back as the whole 16 MB buffer in hex: the import's follower counts and the follower
// counters' lookups spent seconds per list on it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { open } from 'lmdb';
import { encodeValue, jsonOf } from '../../src/store/codec.js';
import { visibleValue } from '../../src/relay/handlers/neg-items.js';
import { parseFilter } from '../../src/nostr/filter.js';
import { idPubkey, pubkeyId } from '../../src/store/graph.js';
import { storeDbs } from '../../src/store/schema.js';
import { ev, hex, put, tmpDir, withStore } from './helpers.js';

test('jsonOf on a getBinaryFast buffer is exactly the stored JSON, with and without an expiration', async () => {
  const dir = tmpDir();
  const env = open({ path: dir, mapSize: 64 * 1024 ** 2 });
  const db = env.openDB<Buffer, string>({ name: 'v', encoding: 'binary' });
  try {
    const plain = ev({ content: 'short' });
    const expiring = ev({ tags: [['expiration', '2000000000']], content: 'x'.repeat(300) });
    await db.put('a', encodeValue(plain, JSON.stringify(plain), null));
    await db.put('b', encodeValue(expiring, JSON.stringify(expiring), 2_000_000_000));
    for (const [key, e] of [['b', expiring], ['a', plain]] as const) {
      const value = db.getBinaryFast(key)!;
      assert.equal(jsonOf(value), JSON.stringify(e), `value ${key}`);
    }
  } finally {
    await env.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('queries that read stored JSON: a second tag condition, a DM offered by negentropy to its recipient, a search', async () => {
  await withStore(async (store) => {
    const bob = hex();
    const note = hex();
    const dm = ev({ kind: 4, tags: [['p', bob], ['e', note]], content: 'secret' });
    const profile = ev({ kind: 0, content: JSON.stringify({ name: 'alice wonderland', nip05: 'alice@example.com' }) });
    for (const e of [dm, profile, ev({ kind: 4, tags: [['p', bob]] })]) assert.equal((await put(store, e)).status, 'stored');
    const opts = { defaultLimit: 100, maxLimit: 100 };
    const parse = (f: object) => parseFilter(f, { maxFilterValues: 100, maxTagFilters: 4, searchKinds: [0] });

    const tagged = await store.query([parse({ '#p': [bob], '#e': [note] })], opts);
    assert.deepEqual(tagged.map((j) => JSON.parse(j).id), [dm.id], 'the #e condition is checked on the stored JSON');

    const items = await store.negentropyItems(parse({ kinds: [4], '#e': [note] }), { maxItems: 100, accept: visibleValue({ kinds: [4], authed: [bob] }) });
    assert.equal(items.count, 1, 'the recipient is offered the DM');
    const hidden = await store.negentropyItems(parse({ kinds: [4], '#e': [note] }), { maxItems: 100, accept: visibleValue({ kinds: [4], authed: [hex()] }) });
    assert.equal(hidden.count, 0, 'anyone else is not');

    for (const search of ['alice', 'domain:example.com']) {
      const found = await store.query([parse({ kinds: [0], search })], opts);
      assert.deepEqual(found.map((j) => JSON.parse(j).id), [profile.id], `search ${search} (domain: reads the document's end)`);
    }
  });
});

test('the follow graph reads a pubkey back from its id, and a follower COUNT uses the counter it names', async () => {
  await withStore(async (store) => {
    const bob = hex();
    const fans = [ev({ kind: 3, tags: [['p', bob]] }), ev({ kind: 3, tags: [['p', bob], ['p', hex()]] })];
    for (const e of fans) assert.equal((await put(store, e)).status, 'stored');
    const dbs = storeDbs(store);
    const id = pubkeyId(dbs, bob);
    assert.ok(id !== undefined, 'bob has an id');
    assert.equal(idPubkey(dbs, id), bob, 'the id reads back as bob, 64 hex characters');
    assert.equal(await store.count([parseFilter({ kinds: [3], '#p': [bob] }, { maxFilterValues: 100, maxTagFilters: 4, searchKinds: [0] })]), 2);
  });
});
