// @welshman/net (the networking layer of Coracle and Flotilla) against a relay started with the
// default settings: publish, read back by id, author, kind and tag, search, a live subscription
// and a NIP-77 pull, exact ids. A challenge it has not answered makes it hold every EOSE (its auth
// buffer): with one sent on connect, request({autoClose: true}) did not resolve on EOSE and pull()
// ended only on its 30 s fallback. Here each wait is bounded well below those fallbacks, so a
// request that resolves only by a fallback fails. The library has no COUNT. Then a DM read by a
// stranger: the relay closes it auth-required: with the challenge, welshman holds the request,
// the socket authenticates, and the held request gets the DM.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { AuthStateEvent, AuthStatus, Pool, PublishStatus, pull, publish, request } from '@welshman/net';
import { finalizeEvent } from 'nostr-tools/pure';
import { startRelayProcess, type RelayProcess } from '../helpers/relay-process.js';
import { Author, Client } from '../helpers/client.js';
import { ConsoleWatch, corpus, exitSoon, newestFirst, sortedIds, within, publishedDm } from './fixture.js';
import { challengesSent } from './relay-status.js';

/** Below @welshman/net's own 30 s fallbacks (autoClose requests, the NIP-77 diff). */
const BELOW_FALLBACK_MS = 15_000;

let relay: RelayProcess;
before(async () => { relay = await startRelayProcess(); });
after(async () => {
  Pool.get().clear();
  await relay?.cleanup();
  exitSoon(); // pull() leaves its 30 s fallback timer running
});

const fetchIds = async (filter: Record<string, unknown>) =>
  within(request({ relays: [relay.url], filters: [filter as never], autoClose: true }), `welshman request ${JSON.stringify(filter)}`, BELOW_FALLBACK_MS);

test('@welshman/net: publish, read back by id/author/kind/tag, search, live; autoClose requests resolve on EOSE; no AUTH challenge', async () => {
  const c = corpus('welshman');
  const watch = new ConsoleWatch().start();
  try {
    for (const e of [...c.notes, c.profile]) {
      const res = await within(publish({ event: e as never, relays: [relay.url] }), 'publish');
      assert.equal(Object.values(res)[0]?.status, PublishStatus.Success);
    }
    const ids = newestFirst(c.notes);
    assert.deepEqual(sortedIds(await fetchIds({ ids: [c.notes[1]!.id] })), [c.notes[1]!.id]);
    assert.deepEqual(newestFirst(await fetchIds({ authors: [c.author.pk], kinds: [1] })), ids);
    assert.deepEqual(newestFirst(await fetchIds({ kinds: [1], '#t': [c.topic] })), ids);
    assert.deepEqual(sortedIds(await fetchIds({ kinds: [0], search: c.word })), [c.profile.id]);

    const live = c.live();
    const ctrl = new AbortController();
    const got = await within(new Promise<string>((resolve) => {
      void request({
        relays: [relay.url],
        filters: [{ kinds: [1], '#t': [c.topic], limit: 0 }],
        signal: ctrl.signal,
        onEose: () => { void publish({ event: live as never, relays: [relay.url] }); },
        onEvent: (e) => resolve(e.id),
      });
    }), 'live event');
    ctrl.abort();
    assert.equal(got, live.id);
  } finally {
    watch.stop();
  }
  watch.assertQuiet('@welshman/net');
  assert.equal(Pool.get().get(relay.url).auth.status, AuthStatus.None, 'the socket was never asked to authenticate');
  assert.equal(await challengesSent(relay), 0, 'the relay sent no AUTH challenge');
});

test('@welshman/net NIP-77 pull: completes (before its fallback) with exactly the events we lack', async () => {
  const c = corpus('welshman-pull');
  const w = await Client.open(relay.url);
  for (const e of c.notes) assert.equal((await w.publish(e)).ok, true);
  w.close();
  const got = await within(pull({ relays: [relay.url], filters: [{ kinds: [1], '#t': [c.topic] }], events: [c.notes[0] as never] }), 'pull', BELOW_FALLBACK_MS);
  assert.deepEqual(sortedIds(got), [c.notes[1]!.id, c.notes[2]!.id].sort());
  assert.equal(await challengesSent(relay), 0, 'the relay sent no AUTH challenge');
});

test('@welshman/net: a stranger\'s DM request is held after auth-required: with the challenge; once the socket authenticates it gets the DM', async () => {
  const { bob, dm } = await publishedDm(relay.url);

  Pool.get().clear(); // a new connection: this one has not authenticated
  const socket = Pool.get().get(relay.url);
  const pending = within(request({ relays: [relay.url], filters: [{ kinds: [4], '#p': [bob.pk] }], autoClose: true }), 'the DM request', BELOW_FALLBACK_MS);
  await within(new Promise<void>((resolve) => {
    if (socket.auth.status === AuthStatus.Requested) resolve();
    socket.auth.on(AuthStateEvent.Status, (s: AuthStatus) => { if (s === AuthStatus.Requested) resolve(); });
  }), 'the challenge');
  await within(socket.auth.attemptAuth(async (t) => finalizeEvent(t, bob.sk) as never), 'AUTH');
  assert.equal(socket.auth.status, AuthStatus.Ok, socket.auth.details);
  assert.deepEqual(sortedIds(await pending), [dm.id]);
});
