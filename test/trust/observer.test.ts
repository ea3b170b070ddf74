// Search ranked as seen from one reader (NIP-50 observer:, or the AUTHed pubkey with
// trust.observerAuth), on a relay process with a constructed graph: two communities each follow
// their own "Alice"; the second Alice is the more followed overall, so the global rank puts her
// first. A reader in each community gets the Alice their follows trust first; a reader the graph
// does not know, and a search without observer:, get the global order; COUNT and hiding do not change.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startRelayProcess, type RelayProcess } from '../helpers/relay-process.js';
import { Author, Client } from '../helpers/client.js';
import type { NostrEvent } from '../../src/nostr/event.js';
import { npubEncode } from 'nostr-tools/nip19';
import { waitForRanks } from './helpers.js';

const relays: RelayProcess[] = [];
after(async () => { await Promise.all(relays.map((r) => r.cleanup())); });

interface World {
  readerA: Author;
  readerB: Author;
  aliceA: Author;
  aliceB: Author;
  edges: number;
  events: NostrEvent[];
}

/** Community A: readerA follows 5 people who follow aliceA. Community B: readerB follows 8 who follow aliceB. */
function world(): World {
  const t0 = Math.floor(Date.now() / 1000) - 1000;
  const readerA = new Author();
  const readerB = new Author();
  const aliceA = new Author();
  const aliceB = new Author();
  const a = Array.from({ length: 5 }, () => new Author());
  const b = Array.from({ length: 8 }, () => new Author());
  const events: NostrEvent[] = [
    aliceA.sign({ kind: 0, created_at: t0, content: JSON.stringify({ name: 'Alice' }) }),
    aliceB.sign({ kind: 0, created_at: t0, content: JSON.stringify({ name: 'Alice', about: 'the other one' }) }),
    readerA.sign({ kind: 3, created_at: t0, tags: a.map((x) => ['p', x.pk]) }),
    readerB.sign({ kind: 3, created_at: t0, tags: b.map((x) => ['p', x.pk]) }),
    // within each community everyone follows the next one too, so it is one community
    ...a.map((x, i) => x.sign({ kind: 3, created_at: t0, tags: [['p', aliceA.pk], ['p', a[(i + 1) % a.length]!.pk]] })),
    ...b.map((x, i) => x.sign({ kind: 3, created_at: t0, tags: [['p', aliceB.pk], ['p', b[(i + 1) % b.length]!.pk]] })),
  ];
  return { readerA, readerB, aliceA, aliceB, events, edges: a.length + b.length + 2 * a.length + 2 * b.length };
}

test('observer: each reader gets the Alice its follows trust first; unknown readers and plain searches the global order', async () => {
  const w = world();
  const relay = await startRelayProcess({ env: { ORBWEAVER_TRUST_DEBOUNCE: '100ms', ORBWEAVER_TRUST_INTERVAL: '0', ORBWEAVER_TRUST_GLOBAL_SEEDS: '0' } });
  relays.push(relay);
  const c = await Client.open(relay.url);
  for (const e of w.events) assert.equal((await c.publish(e)).ok, true);
  await waitForRanks(relay, w.edges);
  const ids = async (search: string) => (await c.query({ kinds: [0], search, limit: 5 })).events.map((e) => e.pubkey);

  assert.deepEqual(await ids('alice'), [w.aliceB.pk, w.aliceA.pk], 'globally: the more followed Alice');
  assert.deepEqual(await ids(`alice observer:${w.readerA.pk}`), [w.aliceA.pk, w.aliceB.pk], 'reader A: the Alice its follows follow');
  assert.deepEqual(await ids(`alice observer:${w.readerB.pk}`), [w.aliceB.pk, w.aliceA.pk], 'reader B: its own');
  assert.deepEqual(await ids(`ali observer:${npubEncode(w.readerA.pk)}`), [w.aliceA.pk, w.aliceB.pk], 'typeahead, observer as npub');
  assert.deepEqual(await ids(`alice observer:${new Author().pk}`), [w.aliceB.pk, w.aliceA.pk], 'a reader the graph does not know: the global order');
  assert.deepEqual(await ids('alice observer:nonsense'), [w.aliceB.pk, w.aliceA.pk], 'not a pubkey: ignored');
  // the same answer twice (cached, and the walks are seeded by reader and pass)
  assert.deepEqual(await ids(`alice observer:${w.readerA.pk}`), [w.aliceA.pk, w.aliceB.pk]);
  // ordering only: COUNT and the other matches are the same
  assert.deepEqual((await c.count({ kinds: [0], search: `alice observer:${w.readerA.pk}` }))[2], { count: 2 });
  assert.deepEqual(await ids(`other observer:${w.readerA.pk}`), [w.aliceB.pk], 'about matches as without observer:');
  // NIP-11 says so
  const info = await (await fetch(relay.url.replace('ws', 'http'), { headers: { accept: 'application/nostr+json' } })).json() as { nip50?: { extensions: string[]; observer?: { auth_default: boolean } } };
  assert.ok(info.nip50?.extensions.includes('observer'));
  assert.equal(info.nip50?.observer?.auth_default, false);
  c.close();
});

test('observerAuth: an AUTHed reader\'s searches are ranked as seen from it; observer: still wins; off, AUTH changes nothing', async () => {
  const w = world();
  const relay = await startRelayProcess({ env: { ORBWEAVER_TRUST_DEBOUNCE: '100ms', ORBWEAVER_TRUST_INTERVAL: '0', ORBWEAVER_TRUST_GLOBAL_SEEDS: '0', ORBWEAVER_TRUST_OBSERVER_AUTH: 'true' } });
  relays.push(relay);
  const pub = await Client.open(relay.url);
  for (const e of w.events) assert.equal((await pub.publish(e)).ok, true);
  await waitForRanks(relay, w.edges);
  const c = await Client.open(relay.url);
  await c.challenge();
  assert.deepEqual(await c.authenticate(w.readerA, relay.url), { ok: true, message: '' });
  const ids = async (cl: Client, search: string) => (await cl.query({ kinds: [0], search, limit: 5 })).events.map((e) => e.pubkey);
  assert.deepEqual(await ids(c, 'alice'), [w.aliceA.pk, w.aliceB.pk], 'AUTHed as reader A');
  assert.deepEqual(await ids(c, `alice observer:${w.readerB.pk}`), [w.aliceB.pk, w.aliceA.pk], 'observer: names another reader');
  assert.deepEqual(await ids(pub, 'alice'), [w.aliceB.pk, w.aliceA.pk], 'not AUTHed: the global order');
  c.close();
  pub.close();
});
