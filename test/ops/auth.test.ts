// NIP-42 AUTH, auth modes, when the challenge is sent (auth.challenge: on demand by default, on
// connect where reading needs AUTH), DMs, seals and gift wraps readable only by their author or recipient, NIP-70
// protected events: real relay processes, real WebSocket clients.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startRelayProcess, type RelayProcess } from '../helpers/relay-process.js';
import { Author, Client, ids, now, sleep } from '../helpers/client.js';

let relay: RelayProcess;
let strict: RelayProcess;
let eager: RelayProcess;
const PUBLIC_URL = 'wss://Relay.Example.COM/';

before(async () => {
  // one after another: on a loaded machine three starting at once can each miss the start-up wait
  relay = await startRelayProcess();
  strict = await startRelayProcess({ env: { ORBWEAVER_AUTH_REQUIRED: 'all', ORBWEAVER_PUBLIC_URL: PUBLIC_URL } });
  eager = await startRelayProcess({ env: { ORBWEAVER_AUTH_CHALLENGE: 'connect' } });
});
after(async () => { await Promise.all([relay, strict, eager].map((r) => r?.cleanup())); });

type Msg = unknown[];
const isAuth = (m: Msg) => m[0] === 'AUTH';
/** Index in `received` of the first message matching `pred` (-1: none). */
const at = (c: Client, pred: (m: Msg) => boolean) => c.received.findIndex(pred);

test('defaults: no challenge until something needs it; reading, writing, COUNT and refusals of other kinds bring none', async () => {
  const c = await Client.open(relay.url);
  const a = new Author();
  const note = a.sign({ content: 'plain' });
  assert.equal((await c.publish(note)).ok, true);
  assert.deepEqual(ids((await c.query({ authors: [a.pk] })).events), [note.id]);
  assert.equal((await c.count({ authors: [a.pk] }))[0], 'COUNT');
  assert.match((await c.query({ kinds: [-1] })).closed!, /^invalid: /, 'a refusal that is not auth-required:');
  const bad = { ...a.sign({ content: 'x' }), sig: '00'.repeat(64) };
  assert.match((await c.publish(bad)).message, /^invalid: /);
  // the relay answers a connection's messages in order, and an on-connect challenge would have been
  // its first message: nothing before these answers means nothing was sent
  assert.equal(at(c, isAuth), -1, `no AUTH message: ${JSON.stringify(c.received)}`);
  const info = (await (await fetch(relay.httpUrl, { headers: { Accept: 'application/nostr+json' } })).json()) as { supported_nips: number[]; limitation: Record<string, unknown> };
  assert.ok(info.supported_nips.includes(42));
  assert.equal(info.limitation.auth_required, false);
  c.close();
});

test('on demand: an AUTH before any challenge is answered with the challenge, then OK false auth-required:; the challenge then works', async () => {
  const c = await Client.open(relay.url);
  const a = new Author();
  // a well-signed AUTH naming this relay, with a made-up challenge: nothing can be granted before a challenge was sent
  const early = a.sign({ kind: 22242, tags: [['relay', relay.url], ['challenge', 'guess']] });
  c.send(['AUTH', early]);
  const ok = await c.next((m) => m[0] === 'OK' && m[1] === early.id);
  assert.equal(ok[2], false);
  assert.match(ok[3] as string, /^auth-required: /);
  const iAuth = at(c, isAuth);
  assert.ok(iAuth >= 0 && iAuth < at(c, (m) => m[0] === 'OK' && m[1] === early.id), 'the challenge comes before the refusal');
  const challenge = await c.challenge(5000, false);
  assert.match(challenge, /^[0-9a-f]{32}$/);
  assert.deepEqual(await c.authenticate(a, relay.url), { ok: true, message: '' });
  const d = await Client.open(relay.url);
  assert.notEqual(await d.challenge(), challenge, 'every connection gets its own challenge');
  assert.equal(c.received.filter(isAuth).length, 1, 'one challenge per connection');
  // asking again (an AUTH without a challenge tag) gets the same challenge again, and grants nothing
  const ask = new Author().sign({ kind: 22242, tags: [['relay', relay.url]] });
  c.send(['AUTH', ask]);
  const again = await c.next((m) => m[0] === 'OK' && m[1] === ask.id);
  assert.equal(again[2], false);
  assert.match(again[3] as string, /^auth-required: /);
  assert.deepEqual(c.received.filter(isAuth).map((m) => m[1]), [challenge, challenge]);
  c.close();
  d.close();
});

test('auth.challenge=connect, and auth.required=all (auto): the challenge is the first message on every connection', async () => {
  for (const r of [eager, strict]) {
    const c = await Client.open(r.url);
    const first = await c.next(() => true, 5000, 'the first message');
    assert.equal(first[0], 'AUTH');
    assert.match(first[1] as string, /^[0-9a-f]{32}$/);
    c.close();
  }
  const c = await Client.open(eager.url);
  const a = new Author();
  assert.deepEqual(await c.authenticate(a, eager.url), { ok: true, message: '' });
  c.close();
});

test('the status page says which challenge mode is in use', async () => {
  const mode = async (r: RelayProcess) => ((await (await fetch(`${r.httpUrl}/status.json?directory=0`)).json()) as { auth: { required: string; challenge: string } }).auth;
  assert.deepEqual(await mode(relay), { required: 'off', challenge: 'on-demand' });
  assert.deepEqual(await mode(strict), { required: 'all', challenge: 'connect' });
  assert.deepEqual(await mode(eager), { required: 'off', challenge: 'connect' });
});

test('AUTH refused: stale, wrong relay, wrong challenge, wrong kind, bad signature', async () => {
  const c = await Client.open(relay.url);
  const a = new Author();
  let r = await c.authenticate(a, relay.url, { created_at: now() - 3600 });
  assert.equal(r.ok, false);
  assert.match(r.message, /^invalid: .*created_at/);
  r = await c.authenticate(a, relay.url, { created_at: now() + 3600 });
  assert.equal(r.ok, false);
  r = await c.authenticate(a, 'wss://some.other.relay');
  assert.equal(r.ok, false);
  assert.match(r.message, /^invalid: .*relay tag/);
  r = await c.authenticate(a, relay.url, { challenge: 'not-the-challenge' });
  assert.equal(r.ok, false);
  assert.match(r.message, /^invalid: .*challenge/);
  r = await c.authenticate(a, relay.url, { kind: 1 });
  assert.equal(r.ok, false);
  assert.match(r.message, /^invalid: .*22242/);
  const ev = a.sign({ kind: 22242, tags: [['relay', relay.url], ['challenge', await c.challenge()]] });
  c.send(['AUTH', { ...ev, sig: ev.sig.replace(/^./, (x) => (x === '0' ? '1' : '0')) }]);
  const m = await c.next((m) => m[0] === 'OK' && m[1] === ev.id, 5000);
  assert.equal(m[2], false);
  assert.match(m[3] as string, /^invalid: /);
  // a challenge from another connection does not work here
  const other = await Client.open(relay.url);
  r = await c.authenticate(a, relay.url, { challenge: await other.challenge() });
  assert.equal(r.ok, false);
  other.close();
  c.close();
});

test('auth.required=all: EVENT gets auth-required:, REQ and COUNT get CLOSED auth-required:; after AUTH (public URL normalised) all work', async () => {
  const c = await Client.open(strict.url);
  const a = new Author();
  const ev = a.sign({ content: 'needs auth' });
  let r = await c.publish(ev);
  assert.equal(r.ok, false);
  assert.match(r.message, /^auth-required: /);
  const q = await c.query({ kinds: [1] });
  assert.match(q.closed!, /^auth-required: /);
  const cnt = await c.count({ kinds: [1] });
  assert.equal(cnt[0], 'CLOSED');
  assert.match(cnt[2] as string, /^auth-required: /);
  // the relay tag must name the configured public URL, not the address we connected to
  assert.equal((await c.authenticate(a, strict.url)).ok, false);
  r = await c.authenticate(a, 'wss://relay.example.com');
  assert.deepEqual(r, { ok: true, message: '' });
  assert.equal((await c.publish(ev)).ok, true);
  const q2 = await c.query({ ids: [ev.id] });
  assert.equal(q2.closed, undefined);
  assert.deepEqual(ids(q2.events), [ev.id]);
  const info = (await (await fetch(strict.httpUrl, { headers: { Accept: 'application/nostr+json' } })).json()) as { supported_nips: number[]; limitation: Record<string, unknown> };
  for (const nip of [13, 42, 70, 86]) assert.ok(info.supported_nips.includes(nip), `NIP-${nip} advertised`);
  assert.equal(info.limitation.auth_required, true);
  assert.equal(info.limitation.restricted_writes, true);
  c.close();
});

test('DMs (kind 4) and gift wraps (1059) are unreadable without auth, readable by their author and recipient, also live', async () => {
  const alice = new Author();
  const bob = new Author();
  const eve = new Author();
  const w = await Client.open(relay.url);
  assert.equal((await w.authenticate(alice, relay.url)).ok, true);
  const dm = alice.sign({ kind: 4, tags: [['p', bob.pk]], content: 'secret?iv=abc' });
  const wrap = eve.sign({ kind: 1059, tags: [['p', bob.pk]], content: 'wrapped' });
  const note = alice.sign({ kind: 1, content: 'public' });
  for (const e of [dm, wrap, note]) assert.equal((await w.publish(e)).ok, true, 'stored');

  const anon = await Client.open(relay.url);
  let r = await anon.query({ kinds: [4], '#p': [bob.pk] });
  assert.match(r.closed!, /^auth-required: /, 'a DM filter without auth is refused so the client knows to AUTH');
  const closedAt = at(anon, (m) => m[0] === 'CLOSED' && /^auth-required: /.test(m[2] as string));
  assert.ok(at(anon, isAuth) >= 0 && at(anon, isAuth) < closedAt, 'the challenge comes right before the auth-required: CLOSED');
  r = await anon.query({ authors: [alice.pk] });
  assert.deepEqual(ids(r.events), [note.id], 'a broad filter returns the public note but not the DM');
  r = await anon.query({ ids: [dm.id, wrap.id] });
  assert.deepEqual(r.events, []);
  let cnt = await anon.count({ authors: [alice.pk] });
  assert.deepEqual(cnt[2], { count: 1 }, 'COUNT does not count hidden DMs');

  // someone else, authenticated: restricted
  const eveC = await Client.open(relay.url);
  assert.equal((await eveC.authenticate(eve, relay.url)).ok, true);
  r = await eveC.query({ kinds: [4], '#p': [bob.pk] });
  assert.match(r.closed!, /^restricted: /);
  r = await eveC.query({ kinds: [1059] , '#p': [eve.pk] });
  assert.deepEqual(r.events, []);
  r = await eveC.query({ ids: [dm.id, wrap.id] });
  assert.deepEqual(ids(r.events), [wrap.id], 'eve authored the wrap, so she sees it; not the DM');

  // the recipient and the author
  const bobC = await Client.open(relay.url);
  assert.equal((await bobC.authenticate(bob, relay.url)).ok, true);
  r = await bobC.query({ kinds: [4, 1059], '#p': [bob.pk] });
  assert.deepEqual(ids(r.events).sort(), [dm.id, wrap.id].sort());
  cnt = await bobC.count({ kinds: [4, 1059], '#p': [bob.pk] });
  assert.deepEqual(cnt[2], { count: 2 });
  r = await w.query({ kinds: [4], authors: [alice.pk] });
  assert.deepEqual(ids(r.events), [dm.id]);

  // live delivery: an unauthenticated broad subscription does not get the next DM; bob does
  await anon.query({ authors: [alice.pk], limit: 0 }, 'live-anon', false);
  await bobC.query({ '#p': [bob.pk], limit: 0 }, 'live-bob', false);
  const dm2 = alice.sign({ kind: 4, tags: [['p', bob.pk]], content: 'second' });
  const note2 = alice.sign({ kind: 1, content: 'public 2' });
  assert.equal((await w.publish(dm2)).ok, true);
  assert.equal((await w.publish(note2)).ok, true);
  assert.ok(await anon.arrives((m) => m[0] === 'EVENT' && m[1] === 'live-anon' && (m[2] as { id: string }).id === note2.id, 5000));
  assert.ok(await bobC.arrives((m) => m[0] === 'EVENT' && m[1] === 'live-bob' && (m[2] as { id: string }).id === dm2.id, 5000));
  await sleep(100);
  assert.ok(!anon.inbox.some((m) => m[0] === 'EVENT' && (m[2] as { id: string }).id === dm2.id), 'the DM was not delivered live to the anonymous reader');
  for (const c of [w, anon, eveC, bobC]) c.close();
});

test('seals (kind 13, NIP-59) follow the DM rules: without AUTH nothing, not even by id or live; after AUTH only their author', async () => {
  // NIP-59: a seal is signed by the real sender, its tags are empty; a gift wrap carries it to the
  // recipient. Published on its own, it says who wrote (to whom, if the reader holds the wrap)
  const alice = new Author();
  const eve = new Author();
  const pub = await Client.open(relay.url);
  const seal = alice.sign({ kind: 13, tags: [], content: 'sealed rumor' });
  const note = alice.sign({ kind: 1, content: 'public' });
  for (const e of [seal, note]) assert.equal((await pub.publish(e)).ok, true, 'stored');

  const anon = await Client.open(relay.url);
  let r = await anon.query({ kinds: [13] });
  assert.match(r.closed!, /^auth-required: kinds 13 /, 'a seal filter without auth is refused so the client knows to AUTH');
  assert.deepEqual(r.events, []);
  r = await anon.query({ kinds: [13], authors: [alice.pk] });
  assert.match(r.closed!, /^auth-required: /);
  r = await anon.query({ ids: [seal.id] });
  assert.deepEqual(r.events, [], 'not by id');
  r = await anon.query({ authors: [alice.pk] });
  assert.deepEqual(ids(r.events), [note.id], 'a broad filter gets the note, not the seal');
  assert.deepEqual((await anon.count({ authors: [alice.pk] }))[2], { count: 1 }, 'COUNT does not count the seal');

  // someone else, authenticated: refused, and nothing by id
  const eveC = await Client.open(relay.url);
  assert.equal((await eveC.authenticate(eve, relay.url)).ok, true);
  assert.match((await eveC.query({ kinds: [13], authors: [alice.pk] })).closed!, /^restricted: /);
  assert.deepEqual((await eveC.query({ ids: [seal.id] })).events, []);

  // the author, authenticated: her seal, stored and live
  const aliceC = await Client.open(relay.url);
  assert.equal((await aliceC.authenticate(alice, relay.url)).ok, true);
  assert.deepEqual(ids((await aliceC.query({ kinds: [13], authors: [alice.pk] })).events), [seal.id]);
  await anon.query({ authors: [alice.pk], limit: 0 }, 'live-anon', false);
  await aliceC.query({ kinds: [13], authors: [alice.pk], limit: 0 }, 'live-alice', false);
  const seal2 = alice.sign({ kind: 13, tags: [], content: 'second' });
  const note2 = alice.sign({ kind: 1, content: 'public 2' });
  assert.equal((await pub.publish(seal2)).ok, true);
  assert.equal((await pub.publish(note2)).ok, true);
  assert.ok(await anon.arrives((m) => m[0] === 'EVENT' && m[1] === 'live-anon' && (m[2] as { id: string }).id === note2.id, 5000));
  assert.ok(await aliceC.arrives((m) => m[0] === 'EVENT' && m[1] === 'live-alice' && (m[2] as { id: string }).id === seal2.id, 5000));
  await sleep(100);
  assert.ok(!anon.inbox.some((m) => m[0] === 'EVENT' && (m[2] as { id: string }).id === seal2.id), 'the seal was not delivered live to the anonymous reader');
  for (const c of [pub, anon, eveC, aliceC]) c.close();
});

test('a stranger asking for DMs: auth-required: plus one challenge (REQ, COUNT, NEG-OPEN); after AUTH as a party the DM is served', async () => {
  const alice = new Author();
  const bob = new Author();
  const w = await Client.open(relay.url);
  assert.equal((await w.authenticate(alice, relay.url)).ok, true);
  const dm = alice.sign({ kind: 4, tags: [['p', bob.pk]], content: 'for bob?iv=abc' });
  assert.equal((await w.publish(dm)).ok, true);
  w.close();

  const c = await Client.open(relay.url);
  let r = await c.query({ kinds: [4] });
  assert.match(r.closed!, /^auth-required: /);
  const cnt = await c.count({ kinds: [4] });
  assert.equal(cnt[0], 'CLOSED');
  assert.match(cnt[2] as string, /^auth-required: /);
  c.send(['NEG-OPEN', 'neg1', { kinds: [4] }, '6100000200']);
  const err = await c.next((m) => m[0] === 'NEG-ERR' && m[1] === 'neg1');
  assert.match(err[2] as string, /^auth-required: /);
  const challenges = c.received.filter(isAuth);
  assert.equal(challenges.length, 1, 'the challenge is sent once, with the first auth-required:');
  assert.ok(at(c, isAuth) < at(c, (m) => m[0] === 'CLOSED'), 'before the first refusal');
  // the client answers the challenge it holds (it does not ask for one) and retries
  assert.deepEqual(await c.authenticate(bob, relay.url, { challenge: challenges[0]![1] as string }), { ok: true, message: '' });
  r = await c.query({ kinds: [4], '#p': [bob.pk] });
  assert.equal(r.closed, undefined);
  assert.deepEqual(ids(r.events), [dm.id]);
  assert.deepEqual((await c.count({ kinds: [4], '#p': [bob.pk] }))[2], { count: 1 });
  assert.equal(c.received.filter(isAuth).length, 1);
  c.close();
});

test('NIP-70: a protected event is accepted only from its authenticated author', async () => {
  const a = new Author();
  const b = new Author();
  const ev = a.sign({ tags: [['-']], content: 'protected' });
  const c = await Client.open(relay.url);
  let r = await c.publish(ev);
  assert.equal(r.ok, false);
  assert.match(r.message, /^auth-required: /);
  assert.ok(at(c, isAuth) >= 0 && at(c, isAuth) < at(c, (m) => m[0] === 'OK'), 'the challenge comes right before the auth-required: OK');
  assert.equal((await c.authenticate(b, relay.url)).ok, true);
  r = await c.publish(ev);
  assert.equal(r.ok, false);
  assert.match(r.message, /^restricted: /);
  assert.equal((await c.authenticate(a, relay.url)).ok, true);
  r = await c.publish(ev);
  assert.equal(r.ok, true);
  c.close();
});
