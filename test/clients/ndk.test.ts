// NDK (@nostr-dev-kit/ndk, and @nostr-dev-kit/sync for NIP-77) against a relay started with the
// default settings: publish, read back by id, author, kind and tag, search, COUNT, a live
// subscription and a NIP-77 sync, exact ids, with the relay never leaving NDK in AUTH_REQUESTED
// nor emitting `auth`. Then a DM read by a stranger with NDK's sign-in auth policy: CLOSED
// auth-required:, NDK authenticates with the challenge that came with it, and the DM is served.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import NDK, { NDKEvent, NDKPrivateKeySigner, NDKRelayAuthPolicies, NDKRelayStatus, NDKRelaySet, matchFilter, type NDKCacheAdapter, type NDKFilter, type NDKRelay, type NDKSubscription } from '@nostr-dev-kit/ndk';
import { NDKSync } from '@nostr-dev-kit/sync';
import { startRelayProcess, type RelayProcess } from '../helpers/relay-process.js';
import { Author } from '../helpers/client.js';
import { ConsoleWatch, corpus, exitSoon, newestFirst, sortedIds, within } from './fixture.js';
import { challengesSent } from './relay-status.js';

// NDK opens connections with the global WebSocket, which Node 20 lacks (Node 22 has one)
(globalThis as { WebSocket?: unknown }).WebSocket ??= WebSocket;

let relay: RelayProcess;
const ndks: NDK[] = [];
/** every message NDK received from the relay, as text */
const received: string[] = [];
before(async () => { relay = await startRelayProcess(); });
after(async () => {
  for (const n of ndks) for (const r of n.pool.relays.values()) r.disconnect();
  await relay?.cleanup();
  exitSoon();
});

async function connected(opts: ConstructorParameters<typeof NDK>[0] = {}): Promise<{ ndk: NDK; relay: NDKRelay }> {
  const ndk = new NDK({
    explicitRelayUrls: [relay.url],
    // no outbox pool (NDK would connect to public relays for it) and nothing but this relay
    enableOutboxModel: false, outboxRelayUrls: [], autoConnectUserRelays: false,
    relayConnectionFilter: (u) => u.startsWith('ws://127.0.0.1:'),
    netDebug: (msg, _relay, direction) => { if (direction === 'recv') received.push(msg); },
    ...opts,
  });
  ndks.push(ndk);
  await within(ndk.connect(10_000), 'NDK connect');
  const r = [...ndk.pool.relays.values()][0]!;
  if (r.status < NDKRelayStatus.CONNECTED) await within(new Promise((resolve) => r.once('ready', () => resolve(undefined))), 'NDK relay ready');
  return { ndk, relay: r };
}

const fetchIds = async (ndk: NDK, f: NDKFilter) => [...(await within(ndk.fetchEvents(f, { closeOnEose: true, groupable: false }), `NDK fetchEvents ${JSON.stringify(f)}`))];

test('NDK: publish, read back by id/author/kind/tag, search, COUNT, live; never AUTH_REQUESTED', async () => {
  const c = corpus('ndk');
  const watch = new ConsoleWatch().start();
  const { ndk, relay: r } = await connected();
  const authEvents: string[] = [];
  r.on('auth', (challenge: string) => authEvents.push(challenge));
  const statuses: number[] = [];
  const sample = () => statuses.push(r.status);
  try {
    for (const e of [...c.notes, c.profile]) {
      const to = await within(new NDKEvent(ndk, e).publish(), 'NDK publish');
      assert.deepEqual([...to].map((x) => x.url), [r.url]);
    }
    sample();
    const ids = newestFirst(c.notes);
    assert.deepEqual((await fetchIds(ndk, { ids: [c.notes[2]!.id] })).map((e) => e.id), [c.notes[2]!.id]);
    assert.deepEqual(sortedIds(await fetchIds(ndk, { authors: [c.author.pk], kinds: [1] })), [...ids].sort());
    assert.deepEqual(sortedIds(await fetchIds(ndk, { kinds: [1], '#t': [c.topic] })), [...ids].sort());
    assert.deepEqual((await fetchIds(ndk, { kinds: [0], search: c.word })).map((e) => e.id), [c.profile.id]);
    const n = await within(ndk.count({ kinds: [1], '#t': [c.topic] }), 'NDK count');
    assert.equal(n.count, 3);
    sample();

    const live = c.live();
    let sub: NDKSubscription | undefined;
    const got = await within(new Promise<string>((resolve) => {
      sub = ndk.subscribe({ kinds: [1], '#t': [c.topic], limit: 0 }, { closeOnEose: false, groupable: false });
      sub.on('event', (e: NDKEvent) => resolve(e.id));
      sub.on('eose', () => { void new NDKEvent(ndk, live).publish(); });
    }), 'NDK live event');
    sub?.stop();
    assert.equal(got, live.id);
    sample();
  } finally {
    watch.stop();
  }
  assert.deepEqual(received.filter((m) => m.startsWith('["AUTH"')), [], 'no AUTH message reached NDK');
  assert.deepEqual(authEvents, [], 'NDK emitted no auth event');
  assert.ok(statuses.every((s) => s === NDKRelayStatus.CONNECTED), `the relay stayed CONNECTED (5), never AUTH_REQUESTED (6): ${statuses.join(', ')}`);
  watch.assertQuiet('NDK');
  assert.equal(await challengesSent(relay), 0, 'the relay sent no AUTH challenge');
});

/** The smallest cache NDK's sync accepts: events in memory, queried by NDK's own filter matching. */
class MemoryCache implements NDKCacheAdapter {
  locking = false;
  ready = true;
  readonly events: NDKEvent[] = [];
  query(sub: NDKSubscription): NDKEvent[] {
    return this.events.filter((e) => sub.filters.some((f) => matchFilter(f, e.rawEvent() as never)));
  }
  async setEvent(e: NDKEvent): Promise<void> {
    if (!this.events.some((x) => x.id === e.id)) this.events.push(e);
  }
}

test('NDK sync (NIP-77): the relay reconciles, the events we lack are exactly the ones fetched', async () => {
  const c = corpus('ndk-sync');
  const seed = await connected();
  for (const e of c.notes) await within(new NDKEvent(seed.ndk, e).publish(), 'NDK publish');
  const cache = new MemoryCache();
  const { ndk } = await connected({ cacheAdapter: cache });
  await cache.setEvent(new NDKEvent(ndk, c.notes[0]!)); // we hold the oldest already
  const watch = new ConsoleWatch().start();
  let result;
  try {
    result = await within(new NDKSync(ndk).sync({ kinds: [1], '#t': [c.topic] }, { relaySet: NDKRelaySet.fromRelayUrls([relay.url], ndk) }), 'NDK sync');
  } finally {
    watch.stop();
  }
  watch.assertQuiet('NDK sync');
  const lacking = [c.notes[1]!.id, c.notes[2]!.id].sort();
  // `need` is filled by negentropy only: NDK's fallback for relays without NIP-77 leaves it empty
  assert.deepEqual([...result.need].sort(), lacking, 'NIP-77 found what we lack');
  assert.deepEqual([...result.have], []);
  assert.deepEqual(sortedIds(result.events), lacking, 'and fetched exactly those');
  assert.equal(await challengesSent(relay), 0, 'the relay sent no AUTH challenge');
});

test('NDK with a sign-in auth policy: a stranger\'s DM subscription is closed auth-required:, NDK authenticates, the DM is then served', async () => {
  const alice = new Author();
  const bob = new Author();
  const seed = await connected();
  const dm = alice.sign({ kind: 4, tags: [['p', bob.pk]], content: 'for bob?iv=abc' });
  await within(new NDKEvent(seed.ndk, dm).publish(), 'NDK publish DM');

  const signer = new NDKPrivateKeySigner(Buffer.from(bob.sk).toString('hex'));
  const { ndk, relay: r } = await connected({ signer });
  ndk.relayAuthDefaultPolicy = NDKRelayAuthPolicies.signIn({ ndk, signer });
  const authed = new Promise<void>((resolve) => r.once('authed', () => resolve()));
  const filter = { kinds: [4], '#p': [bob.pk] };
  const closed = await within(new Promise<string>((resolve) => {
    const sub = ndk.subscribe(filter, { closeOnEose: true, groupable: false });
    sub.on('closed', (_r: NDKRelay, reason: string) => resolve(reason));
    sub.on('eose', () => resolve('EOSE'));
  }), 'NDK CLOSED');
  assert.match(closed, /^auth-required: /);
  await within(authed, 'NDK authenticated');
  assert.deepEqual((await fetchIds(ndk, filter)).map((e) => e.id), [dm.id]);
});
