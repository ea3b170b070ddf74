// nostr-tools (the relay's own dependency, and the base of many apps) against a relay started with
// the default settings: publish, read back by id, author, kind and tag, NIP-50 search, NIP-45 COUNT,
// a live subscription — exact ids — and no AUTH challenge for any of it. Then a DM: a stranger's
// kind 4 subscription is closed `auth-required:` with the challenge already in hand, relay.auth()
// answers it, and the retried subscription gets the DM.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { Relay, useWebSocketImplementation } from 'nostr-tools/relay';
import { finalizeEvent } from 'nostr-tools/pure';
import type { Filter } from 'nostr-tools/filter';
import { startRelayProcess, type RelayProcess } from '../helpers/relay-process.js';
import { Author } from '../helpers/client.js';
import { ConsoleWatch, corpus, newestFirst, within } from './fixture.js';
import { challengesSent } from './relay-status.js';

useWebSocketImplementation(WebSocket); // Node 20 has no global WebSocket

let relay: RelayProcess;
before(async () => { relay = await startRelayProcess(); });
after(async () => { await relay?.cleanup(); });

/** Stored events until EOSE, or the CLOSED reason. */
function fetchAll(r: Relay, filters: Filter[]): Promise<{ events: Array<{ id: string; created_at: number }>; closed?: string }> {
  return within(new Promise((resolve) => {
    const events: Array<{ id: string; created_at: number }> = [];
    const sub = r.subscribe(filters, {
      onevent: (e) => events.push(e),
      oneose: () => { resolve({ events }); sub.close(); },
      onclose: (reason) => resolve({ events, closed: reason }),
    });
  }), `nostr-tools REQ ${JSON.stringify(filters)}`);
}

test('nostr-tools: publish, read back by id/author/kind/tag, search, COUNT, live; no AUTH challenge', async () => {
  const c = corpus('nostr-tools');
  const watch = new ConsoleWatch().start();
  const r = await Relay.connect(relay.url);
  try {
    for (const e of [...c.notes, c.profile]) assert.equal(await within(r.publish(e), 'publish'), '');
    const ids = newestFirst(c.notes);
    assert.deepEqual((await fetchAll(r, [{ ids: [c.notes[1]!.id] }])).events.map((e) => e.id), [c.notes[1]!.id]);
    assert.deepEqual((await fetchAll(r, [{ authors: [c.author.pk], kinds: [1] }])).events.map((e) => e.id), ids);
    assert.deepEqual((await fetchAll(r, [{ kinds: [1], '#t': [c.topic] }])).events.map((e) => e.id), ids);
    assert.deepEqual((await fetchAll(r, [{ kinds: [1], '#t': [c.topic], limit: 2 }])).events.map((e) => e.id), ids.slice(0, 2));
    assert.deepEqual((await fetchAll(r, [{ kinds: [0], search: c.word }])).events.map((e) => e.id), [c.profile.id]);
    assert.equal(await within(r.count([{ kinds: [1], '#t': [c.topic] }], {}), 'COUNT'), 3);

    const live = c.live();
    const got = new Promise<string>((resolve) => {
      const sub = r.subscribe([{ kinds: [1], '#t': [c.topic], limit: 0 }], {
        onevent: (e) => { resolve(e.id); sub.close(); },
        oneose: () => { void r.publish(live); },
      });
    });
    assert.equal(await within(got, 'live event'), live.id);
  } finally {
    r.close();
    watch.stop();
  }
  watch.assertQuiet('nostr-tools');
  assert.equal(await challengesSent(relay), 0, 'the relay sent no AUTH challenge');
});

test('nostr-tools: a stranger reading DMs gets auth-required: with the challenge in hand; after relay.auth() as the recipient the DM is served', async () => {
  const alice = new Author();
  const bob = new Author();
  const w = await Relay.connect(relay.url);
  const dm = alice.sign({ kind: 4, tags: [['p', bob.pk]], content: 'hello bob?iv=abc' });
  assert.equal(await within(w.publish(dm), 'publish DM'), '', 'publishing a DM needs no AUTH');
  w.close();

  const r = await Relay.connect(relay.url);
  try {
    const filters = [{ kinds: [4], '#p': [bob.pk] }];
    const first = await fetchAll(r, filters);
    assert.deepEqual(first.events, []);
    assert.match(first.closed ?? '', /^auth-required: /);
    // relay.auth() throws "no challenge was received" unless the challenge came before the CLOSED
    const ok = await within(r.auth(async (t) => finalizeEvent(t, bob.sk)), 'AUTH');
    assert.equal(ok, '');
    const again = await fetchAll(r, filters);
    assert.equal(again.closed, undefined);
    assert.deepEqual(again.events.map((e) => e.id), [dm.id]);
  } finally {
    r.close();
  }
});
