// NIP-50 through a real relay process over WebSocket: NIP-11 lists 50, REQ and COUNT with search
// (scans in the query threads), kinds that are not indexed refused with CLOSED, live subscriptions
// that match new profiles like the index does, replaced and deleted profiles gone, and what was
// acknowledged before kill -9 searchable after a restart.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { startRelayProcess, tempDir, type RelayProcess } from '../helpers/relay-process.js';
import { Author, Client, sleep } from '../helpers/client.js';
import type { NostrEvent } from '../../src/nostr/event.js';
import { profile, type Profile } from '../../bench/lib/profiles.js';
import { bruteTier } from './brute.js';

const relays: RelayProcess[] = [];
after(async () => { await Promise.all(relays.map((r) => r.cleanup())); });

const names = (evs: NostrEvent[]) => evs.map((e) => (JSON.parse(e.content) as Profile).name);

test('search over WebSocket: ranked REQ, COUNT, refusals, live matches, replaced and deleted profiles', async () => {
  const relay = await startRelayProcess();
  relays.push(relay);
  const info = (await (await fetch(relay.httpUrl, { headers: { Accept: 'application/nostr+json' } })).json()) as { supported_nips: number[] };
  assert.ok(info.supported_nips.includes(50), 'NIP-50 advertised');

  const c = await Client.open(relay.url);
  const authors = Array.from({ length: 150 }, () => new Author());
  const profiles = authors.map((_, i) => profile(3, i));
  const evs = authors.map((a, i) => a.sign({ kind: 0, content: JSON.stringify(profiles[i]) }));
  await Promise.all(evs.map((e) => c.publish(e).then((r) => assert.equal(r.ok, true, r.message))));
  const alice = new Author();
  const exact = alice.sign({ kind: 0, content: JSON.stringify({ name: 'Alice', about: 'the one and only' }) });
  assert.equal((await c.publish(exact)).ok, true);
  profiles.push({ name: 'Alice', about: 'the one and only' });
  evs.push(exact);

  for (const q of ['alice', 'ali', 'zoe', 'さと', 'bitcoin', 'domain:iris.to']) {
    const want = new Map(evs.map((e, i) => [e.id, bruteTier(q, profiles[i])]).filter(([, t]) => (t as number) >= 0) as Array<[string, number]>);
    const { events, closed } = await c.query({ kinds: [0], search: q, limit: 500 });
    assert.equal(closed, undefined);
    assert.deepEqual(new Set(events.map((e) => e.id)), new Set(want.keys()), `search ${q}`);
    const tiers = events.map((e) => want.get(e.id)!);
    assert.deepEqual(tiers, [...tiers].sort((a, b) => a - b), `search ${q}: best matches first`);
    const counted = await c.count({ kinds: [0], search: q });
    assert.deepEqual(counted[2], { count: want.size }, `COUNT ${q}`);
  }
  const top = (await c.query({ search: 'ALICE', limit: 1 })).events; // no kinds: the indexed ones
  assert.equal(top[0].id, exact.id, 'the exact name first');

  // a kind that is not indexed: a clear refusal, not an empty answer
  c.send(['REQ', 'k1', { kinds: [1], search: 'alice' }]);
  const refused = await c.next((m) => m[0] === 'CLOSED' && m[1] === 'k1');
  assert.match(refused[2] as string, /^invalid: search \(NIP-50\) covers kind 0 on this relay, not 1/);
  c.send(['COUNT', 'k2', { kinds: [0, 1], search: 'alice' }]);
  assert.match((await c.next((m) => m[0] === 'CLOSED' && m[1] === 'k2'))[2] as string, /^invalid: search/);

  // live: new profiles that match arrive after EOSE, others do not; the index then agrees
  const s = await Client.open(relay.url);
  s.send(['REQ', 'live', { kinds: [0], search: 'quentin', limit: 0 }]);
  await s.next((m) => m[0] === 'EOSE' && m[1] === 'live');
  const fresh = [{ name: 'Quentin' }, { name: 'Quentín Blake' }, { name: 'Q', about: 'not quentin' }, { name: 'Quincy' }, { display_name: 'QUENTINO' }];
  const freshEvs = fresh.map((p) => new Author().sign({ kind: 0, content: JSON.stringify(p) }));
  for (const e of freshEvs) assert.equal((await c.publish(e)).ok, true);
  await sleep(200);
  const delivered = s.inbox.filter((m) => m[0] === 'EVENT' && m[1] === 'live').map((m) => (m[2] as NostrEvent).id);
  const stored = (await c.query({ kinds: [0], search: 'quentin' })).events.map((e) => e.id);
  assert.equal(delivered.length, 4);
  assert.deepEqual(new Set(delivered), new Set(stored), 'live delivery matches what the index returns');

  // replaced and deleted profiles leave the results
  const renamed = alice.sign({ kind: 0, created_at: exact.created_at + 1, content: JSON.stringify({ name: 'Alicia Keys' }) });
  assert.equal((await c.publish(renamed)).ok, true);
  assert.deepEqual((await c.query({ kinds: [0], search: 'alice' })).events.filter((e) => e.pubkey === alice.pk), []);
  assert.deepEqual((await c.query({ kinds: [0], search: 'alicia keys' })).events.map((e) => e.id)[0], renamed.id);
  assert.equal((await c.publish(alice.sign({ kind: 5, tags: [['e', renamed.id]] }))).ok, true);
  assert.deepEqual((await c.query({ kinds: [0], search: 'alicia keys' })).events.filter((e) => e.pubkey === alice.pk), []);
  s.close();
  c.close();
});

test('profiles acknowledged before kill -9 are searchable after restart', async () => {
  const dataDir = tempDir();
  try {
    const relay = await startRelayProcess({ dataDir });
    const writers = Array.from({ length: 4 }, () => Client.open(relay.url));
    const clients = await Promise.all(writers);
    const acked: string[] = [];
    let stop = false;
    const runs = clients.map(async (c, w) => {
      for (let n = 0; !stop && n < 2000; n++) {
        const name = `zq${w}x${n}`;
        const e = new Author().sign({ kind: 0, content: JSON.stringify({ name, about: 'durable' }) });
        try {
          if ((await c.publish(e)).ok) acked.push(name);
        } catch {
          return; // the relay was killed
        }
      }
    });
    while (acked.length < 150) await sleep(20);
    await relay.kill();
    stop = true;
    await Promise.all(runs);
    const again = await startRelayProcess({ dataDir });
    relays.push(again);
    const c = await Client.open(again.url);
    const missing: string[] = [];
    for (let i = 0; i < acked.length; i += 20) {
      const chunk = acked.slice(i, i + 20);
      const { events } = await c.query(chunk.map((name) => ({ kinds: [0], search: name, limit: 1 })));
      const found = new Set(names(events));
      for (const n of chunk) if (!found.has(n)) missing.push(n);
    }
    c.close();
    assert.ok(acked.length >= 150);
    assert.deepEqual(missing, [], `${missing.length} of ${acked.length} acknowledged profiles not searchable`);
    assert.ok(!again.logs.some((l) => String(l.msg).startsWith('search index: rebuilding')), 'the index was not rebuilt');
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
