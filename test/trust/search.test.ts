// NIP-50 search ranked by trust, on a real relay process: impersonators with the same name (newer
// than the real profile, so recency alone would put them first) rank below the person whose
// followers the roots trust, for the whole name and for typeahead prefixes; a sybil ring does not
// lift its target above them; a scored-but-untrusted profile is left out unless include:spam; a
// profile the ranking never scored is shown (unranked is not spam).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startRelayProcess, type RelayProcess } from '../helpers/relay-process.js';
import { Author, Client, sleep } from '../helpers/client.js';
import type { NostrEvent } from '../../src/nostr/event.js';
import { waitForRanks } from './helpers.js';

const relays: RelayProcess[] = [];
after(async () => { await Promise.all(relays.map((r) => r.cleanup())); });

const NAME = 'Satoshi Nakaboto';


test('search ranked by trust: the person before same-name impersonators, sybil ring, include:spam', async () => {
  const roots = [new Author(), new Author()];
  const relay = await startRelayProcess({ env: { ORBWEAVER_TRUST_ROOTS: roots.map((r) => r.pk).join(','), ORBWEAVER_TRUST_DEBOUNCE: '100ms', ORBWEAVER_TRUST_INTERVAL: '0' } });
  relays.push(relay);
  const c = await Client.open(relay.url);
  const pub = async (e: NostrEvent) => assert.equal((await c.publish(e)).ok, true);
  const t0 = Math.floor(Date.now() / 1000) - 1000;

  const friends = Array.from({ length: 4 }, () => new Author());
  const person = new Author();
  const ringTarget = new Author(); // same name, followed by a ring of fresh keys
  const scoredNobody = new Author(); // same name, in the graph (follows someone) but nobody trusted follows it
  const strangers = Array.from({ length: 12 }, () => new Author()); // same name, in no list at all: unranked
  const ring = Array.from({ length: 30 }, () => new Author());

  await pub(person.sign({ kind: 0, created_at: t0, content: JSON.stringify({ name: NAME, about: 'the real one' }) }));
  for (const [i, a] of [ringTarget, scoredNobody, ...strangers].entries()) await pub(a.sign({ kind: 0, created_at: t0 + 10 + i, content: JSON.stringify({ name: NAME, about: 'totally the real one' }) }));

  for (const r of roots) await pub(r.sign({ kind: 3, tags: friends.map((f) => ['p', f.pk]) }));
  for (const f of friends.slice(0, 3)) await pub(f.sign({ kind: 3, tags: [['p', person.pk]] }));
  await pub(friends[3]!.sign({ kind: 3, tags: [['p', ring[0]!.pk]] }));
  for (const [i, s] of ring.entries()) await pub(s.sign({ kind: 3, tags: [['p', ringTarget.pk], ['p', ring[(i + 1) % ring.length]!.pk]] }));
  await pub(scoredNobody.sign({ kind: 3, tags: [['p', friends[0]!.pk]] }));
  const meta = await waitForRanks(relay, 8 + 3 + 1 + 60 + 1);
  assert.equal(meta.mode, 'rooted');

  const ids = async (search: string, limit: number) => (await c.query({ kinds: [0], search, limit })).events.map((e) => e.pubkey);
  // the whole name: the person first, then the ring's target (it has some trusted mass), then the unranked
  for (const q of [NAME, NAME.toLowerCase(), 'satoshi nakaboto', 'Sato', 'sat', 'nakab']) {
    const got = await ids(q, 5);
    assert.equal(got[0], person.pk, `${q}: the person first`);
    assert.ok(!got.includes(scoredNobody.pk), `${q}: a profile the roots do not reach is left out`);
  }
  const all = await ids(NAME, 100);
  assert.deepEqual(all.slice(0, 2), [person.pk, ringTarget.pk]);
  assert.equal(all.length, 2 + strangers.length, 'unscored profiles are shown');
  for (const s of strangers) assert.ok(all.includes(s.pk));
  // include:spam brings it back (below the person)
  const spam = await ids(`${NAME} include:spam`, 100);
  assert.equal(spam[0], person.pk);
  assert.ok(spam.includes(scoredNobody.pk));
  assert.equal(spam.length, 3 + strangers.length);
  // COUNT agrees with REQ
  assert.deepEqual((await c.count({ kinds: [0], search: NAME }))[2], { count: 2 + strangers.length });
  assert.deepEqual((await c.count({ kinds: [0], search: `${NAME} include:spam` }))[2], { count: 3 + strangers.length });

  // live searches follow the same rule: a new profile of the untrusted author reaches only the
  // subscription that says include:spam; the person's update reaches both
  const live = await Client.open(relay.url);
  live.send(['REQ', 'plain', { kinds: [0], search: NAME, limit: 0 }]);
  live.send(['REQ', 'spam', { kinds: [0], search: `${NAME} include:spam`, limit: 0 }]);
  await live.next((m) => m[0] === 'EOSE' && m[1] === 'plain');
  await live.next((m) => m[0] === 'EOSE' && m[1] === 'spam');
  const now = Math.floor(Date.now() / 1000);
  const nobodyV2 = scoredNobody.sign({ kind: 0, created_at: now, content: JSON.stringify({ name: NAME, about: 'still the real one' }) });
  const personV2 = person.sign({ kind: 0, created_at: now, content: JSON.stringify({ name: NAME, about: 'the real one, updated' }) });
  await pub(nobodyV2);
  await pub(personV2);
  // delivered in the order stored: the first event each subscription gets after its EOSE tells
  const first = async (sub: string) => ((await live.next((m) => m[0] === 'EVENT' && m[1] === sub))[2] as NostrEvent).id;
  assert.equal(await first('plain'), personV2.id, 'the live search leaves the untrusted author out');
  assert.equal(await first('spam'), nobodyV2.id, 'include:spam delivers the untrusted author too');
  assert.equal(await first('spam'), personV2.id);
  live.close();
  c.close();
});

test('search with the defaults (a global rank, no roots): a trusted person whose name starts with the query before an exact name nobody follows, a ring-lifted impersonator below', async () => {
  // a small graph needs few seeds: with the default 100 every list holder here would be one
  const relay = await startRelayProcess({ env: { ORBWEAVER_TRUST_DEBOUNCE: '100ms', ORBWEAVER_TRUST_INTERVAL: '0', ORBWEAVER_TRUST_GLOBAL_SEEDS: '3' } });
  relays.push(relay);
  const c = await Client.open(relay.url);
  const pub = async (e: NostrEvent) => assert.equal((await c.publish(e)).ok, true);
  const t0 = Math.floor(Date.now() / 1000) - 1000;
  const hubs = Array.from({ length: 4 }, () => new Author());
  const fans = Array.from({ length: 20 }, () => new Author());
  const person = new Author();
  const exact = new Author(); // named exactly the typed word, followed by nobody
  const impersonator = new Author(); // the person's name, lifted by a ring of fresh keys
  const ring = Array.from({ length: 30 }, () => new Author());
  await pub(person.sign({ kind: 0, created_at: t0, content: JSON.stringify({ name: 'Lukas Prefixman' }) }));
  await pub(exact.sign({ kind: 0, created_at: t0 + 1, content: JSON.stringify({ name: 'Lukas' }) }));
  await pub(impersonator.sign({ kind: 0, created_at: t0 + 2, content: JSON.stringify({ name: 'Lukas Prefixman' }) }));
  // each hub is followed by five fans: the most followed list holders, the rank's seeds
  for (const [i, f] of fans.entries()) await pub(f.sign({ kind: 3, tags: [['p', hubs[i % hubs.length]!.pk]] }));
  for (const h of hubs) await pub(h.sign({ kind: 3, tags: [['p', person.pk], ...hubs.filter((x) => x !== h).map((x) => ['p', x.pk])] }));
  for (const [i, s] of ring.entries()) await pub(s.sign({ kind: 3, tags: [['p', impersonator.pk], ['p', ring[(i + 1) % ring.length]!.pk]] }));
  const meta = await waitForRanks(relay, fans.length + hubs.length * hubs.length + ring.length * 2);
  assert.equal(meta.mode, 'global');

  const ids = async (search: string) => (await c.query({ kinds: [0], search, limit: 5 })).events.map((e) => e.pubkey);
  for (const q of ['lukas', 'Luka', 'lukas prefixman', 'prefix']) {
    const got = await ids(q);
    assert.equal(got[0], person.pk, `${q}: the trusted person first`);
    assert.ok(got.includes(impersonator.pk) && got.indexOf(impersonator.pk) > 0, `${q}: the impersonator shown, below`);
  }
  const lukas = await ids('lukas');
  assert.ok(lukas.indexOf(exact.pk) > 0, 'the exact name nobody follows: shown, not first');
  // 60 newer profiles whose names come first in the index's key order ("lukas a…") and share the
  // word: the trusted person is still found, by rank, beyond the search window (40)
  for (let i = 0; i < 60; i++) await pub(new Author().sign({ kind: 0, created_at: t0 + 10 + i, content: JSON.stringify({ name: `Lukas A${i}` }) }));
  for (const q of ['lukas', 'luk', 'lukas p']) assert.equal((await ids(q))[0], person.pk, `${q}: the trusted person first among 60 more matches`);
  c.close();
});

test('search with trust.enabled off: recency order, nothing hidden', async () => {
  const roots = [new Author()];
  const relay = await startRelayProcess({ env: { ORBWEAVER_TRUST_ENABLED: 'false', ORBWEAVER_TRUST_ROOTS: roots[0]!.pk } });
  relays.push(relay);
  const c = await Client.open(relay.url);
  const person = new Author();
  const other = new Author();
  const t0 = Math.floor(Date.now() / 1000) - 100;
  await c.publish(person.sign({ kind: 0, created_at: t0, content: JSON.stringify({ name: NAME }) }));
  await c.publish(other.sign({ kind: 0, created_at: t0 + 1, content: JSON.stringify({ name: NAME }) }));
  await c.publish(roots[0]!.sign({ kind: 3, tags: [['p', person.pk]] }));
  await sleep(300);
  const got = (await c.query({ kinds: [0], search: NAME, limit: 1 })).events;
  assert.equal(got[0]!.pubkey, other.pk, 'the newest first');
  c.close();
});

test('an account repeating a far more trusted, older account\'s name is marked and comes after every unmarked match, even one nobody ranks', async () => {
  // rooted: root -> 10 friends -> the person; friend 1 also follows a ring of 10 fresh keys that
  // follow the impersonator (trusted followers: the person ~8.2, the impersonator ~0.23, under a
  // tenth); another Jeff and a look-alike in no list at all (unranked)
  const root = new Author();
  const relay = await startRelayProcess({ env: { ORBWEAVER_TRUST_ROOTS: root.pk, ORBWEAVER_TRUST_DEBOUNCE: '100ms', ORBWEAVER_TRUST_INTERVAL: '0', ORBWEAVER_TRUST_HIDE_BELOW: '0' } });
  relays.push(relay);
  const c = await Client.open(relay.url);
  const pub = async (e: NostrEvent) => assert.equal((await c.publish(e)).ok, true);
  const t0 = Math.floor(Date.now() / 1000) - 1000;
  const friends = Array.from({ length: 10 }, () => new Author());
  const ring = Array.from({ length: 10 }, () => new Author());
  const person = new Author();
  const impersonator = new Author();
  const other = new Author();
  const lookalike = new Author();
  await pub(person.sign({ kind: 0, created_at: t0, content: JSON.stringify({ name: 'Jeff Gee' }) }));
  await pub(other.sign({ kind: 0, created_at: t0 + 1, content: JSON.stringify({ name: 'Jeff Other' }) }));
  await pub(impersonator.sign({ kind: 0, created_at: t0 + 2, content: JSON.stringify({ name: 'Jeff Gee', display_name: 'Jeff Gee' }) }));
  await pub(lookalike.sign({ kind: 0, created_at: t0 + 3, content: JSON.stringify({ display_name: 'JEFF GEE ⚡️1' }) }));
  await pub(root.sign({ kind: 3, tags: friends.map((f) => ['p', f.pk]) }));
  for (const [i, f] of friends.entries()) await pub(f.sign({ kind: 3, tags: [['p', person.pk], ...(i === 0 ? [ring[0]!, ...friends.slice(1, 4)].map((x) => ['p', x.pk]) : [])] }));
  for (const [i, s] of ring.entries()) await pub(s.sign({ kind: 3, tags: [['p', impersonator.pk], ['p', ring[(i + 1) % ring.length]!.pk]] }));
  await waitForRanks(relay, 10 + 10 + 4 + 20);

  const ids = async (search: string) => (await c.query({ kinds: [0], search, limit: 10 })).events.map((e) => e.pubkey);
  assert.deepEqual(await ids('jeff'), [person.pk, other.pk, impersonator.pk, lookalike.pk], 'the person, the unranked namesake-free Jeff, then the marked ones');
  assert.deepEqual(await ids('Jeff Gee'), [person.pk, impersonator.pk, lookalike.pk]);
  c.close();
});
