// applesauce (applesauce-relay, RxJS) against a relay started with the default settings: publish,
// read back by id, author, kind and tag, search, COUNT, a live subscription, and NIP-77 (its
// negentropy reconcile and sync), exact ids, no challenge. Then a DM read by a stranger: the relay
// closes the request auth-required: with the challenge sent just before, applesauce holds the
// request, relay.authenticate() answers the challenge, and the held request gets the DM.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { filter as filter$, firstValueFrom, lastValueFrom, toArray } from 'rxjs';
import { Relay } from 'applesauce-relay';
import { finalizeEvent } from 'nostr-tools/pure';
import { startRelayProcess, type RelayProcess } from '../helpers/relay-process.js';
import { Author, Client } from '../helpers/client.js';
import type { NostrEvent } from '../../src/nostr/event.js';
import { ConsoleWatch, corpus, exitSoon, newestFirst, sortedIds, within, publishedDm } from './fixture.js';
import { challengesSent } from './relay-status.js';

let relay: RelayProcess;
const opened: Relay[] = [];
before(async () => { relay = await startRelayProcess(); });
after(async () => {
  for (const r of opened) r.close();
  await relay?.cleanup();
  exitSoon();
});

// Node 20 has no global WebSocket: applesauce takes one as an option
const open = (): Relay => {
  const r = new Relay(relay.url, { WebSocket: WebSocket as never });
  opened.push(r);
  return r;
};
const request = async (r: Relay, filter: Record<string, unknown>): Promise<Array<{ id: string; created_at: number }>> =>
  within(lastValueFrom(r.request(filter as never).pipe(toArray())), `applesauce request ${JSON.stringify(filter)}`);

test('applesauce: publish, read back by id/author/kind/tag, search, COUNT, live; no AUTH challenge', async () => {
  const c = corpus('applesauce');
  const watch = new ConsoleWatch().start();
  const r = open();
  try {
    for (const e of [...c.notes, c.profile]) assert.deepEqual(await within(r.publish(e as never), 'publish'), { ok: true, message: '', from: relay.url });
    const ids = newestFirst(c.notes);
    assert.deepEqual((await request(r, { ids: [c.notes[1]!.id] })).map((e) => e.id), [c.notes[1]!.id]);
    assert.deepEqual((await request(r, { authors: [c.author.pk], kinds: [1] })).map((e) => e.id), ids);
    assert.deepEqual((await request(r, { kinds: [1], '#t': [c.topic] })).map((e) => e.id), ids);
    assert.deepEqual((await request(r, { kinds: [0], search: c.word })).map((e) => e.id), [c.profile.id]);
    assert.equal((await within(firstValueFrom(r.count({ kinds: [1], '#t': [c.topic] })), 'COUNT')).count, 3);

    const live = c.live();
    const got = await within(new Promise<string>((resolve, reject) => {
      const sub = r.subscription({ kinds: [1], '#t': [c.topic], limit: 0 }).subscribe({
        next: (m) => {
          if (m === 'EOSE') void r.publish(live as never);
          else { resolve(m.id); sub.unsubscribe(); }
        },
        error: reject,
      });
    }), 'live event');
    assert.equal(got, live.id);
  } finally {
    watch.stop();
  }
  watch.assertQuiet('applesauce');
  assert.equal(r.challenge, null, 'applesauce holds no challenge');
  assert.equal(await challengesSent(relay), 0, 'the relay sent no AUTH challenge');
});

test('applesauce NIP-77: negentropy finds exactly what we lack, sync() fetches it', async () => {
  const c = corpus('applesauce-neg');
  const w = await Client.open(relay.url);
  for (const e of c.notes) assert.equal((await w.publish(e)).ok, true);
  w.close();
  const r = open();
  const mine: NostrEvent[] = [c.notes[0]!]; // we hold the oldest already
  const filter = { kinds: [1], '#t': [c.topic] };
  let lacking: string[] = [];
  let extra: string[] = [];
  const done = await within(r.negentropy(mine as never, filter, async (have, need) => { extra = extra.concat(have); lacking = lacking.concat(need); }), 'negentropy');
  assert.equal(done, true);
  assert.deepEqual(lacking.sort(), [c.notes[1]!.id, c.notes[2]!.id].sort());
  assert.deepEqual(extra, []);
  const fetched = await within(lastValueFrom(r.sync(mine as never, filter).pipe(toArray())), 'sync');
  assert.deepEqual(sortedIds(fetched), [c.notes[1]!.id, c.notes[2]!.id].sort());
  assert.equal(await challengesSent(relay), 0, 'the relay sent no AUTH challenge');
});

test('applesauce: a stranger\'s DM request is held after auth-required: with the challenge in hand; after authenticate() it gets the DM', async () => {
  const { bob, dm } = await publishedDm(relay.url);

  const r = open();
  const filter = { kinds: [4], '#p': [bob.pk] };
  // applesauce holds a request the relay closed auth-required: and sends it again once authenticated
  const pending = request(r, filter);
  const challenge = await within(firstValueFrom(r.challenge$.pipe(filter$((x): x is string => x !== null))), 'the challenge');
  assert.match(challenge, /^[0-9a-f]{32}$/);
  assert.equal(await within(firstValueFrom(r.authRequiredForRead$.pipe(filter$((x) => x))), 'auth-required: seen'), true);
  assert.deepEqual(await within(r.authenticate({ signEvent: (t) => finalizeEvent(t, bob.sk) as never }), 'authenticate'), { ok: true, message: '', from: relay.url });
  assert.deepEqual((await pending).map((e) => e.id), [dm.id]);
});
