// nostr-fetch against a relay started with the default settings. It only reads (no publish, COUNT
// or live subscription in its API), so the events are published with the test client; nostr-fetch
// then reads them back by id, author, kind and tag, with a limit, and by NIP-50 search, exact ids,
// and prints nothing: with a challenge on every connection it printed
// "unsupported R2C message type: AUTH" as an error each time.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import * as nostrFetch from 'nostr-fetch';
import { startRelayProcess, type RelayProcess } from '../helpers/relay-process.js';
import { Client } from '../helpers/client.js';
import { ConsoleWatch, corpus, exitSoon, newestFirst, sortedIds, within } from './fixture.js';
import { challengesSent } from './relay-status.js';

// nostr-fetch's type declarations import their own files without extensions, which TypeScript's
// NodeNext resolution does not follow: the part of its API used here, typed by hand.
type Ev = { id: string; created_at: number };
interface Fetcher {
  fetchAllEvents(relays: string[], filter: object, range: object, opts?: { sort?: boolean }): Promise<Ev[]>;
  fetchLatestEvents(relays: string[], filter: object, limit: number): Promise<Ev[]>;
  fetchLastEvent(relays: string[], filter: object): Promise<Ev | undefined>;
  shutdown(): void;
}
const { NostrFetcher } = nostrFetch as unknown as { NostrFetcher: { init(o: { webSocketConstructor: unknown }): Fetcher } };

let relay: RelayProcess;
before(async () => { relay = await startRelayProcess(); });
after(async () => { await relay?.cleanup(); exitSoon(); });

test('nostr-fetch: reads back by id/author/kind/tag, latest N, search; prints nothing, no AUTH challenge', async () => {
  const c = corpus('nostr-fetch');
  const w = await Client.open(relay.url);
  for (const e of [...c.notes, c.profile]) assert.equal((await w.publish(e)).ok, true);
  w.close();

  const watch = new ConsoleWatch().start();
  // Node 20 has no global WebSocket: nostr-fetch takes one (as its README says for Node < 22)
  const fetcher = NostrFetcher.init({ webSocketConstructor: WebSocket });
  const urls = [relay.url];
  try {
    const ids = newestFirst(c.notes);
    assert.deepEqual(sortedIds(await within(fetcher.fetchAllEvents(urls, { ids: [c.notes[0]!.id] }, {}), 'by id')), [c.notes[0]!.id]);
    assert.deepEqual(sortedIds(await within(fetcher.fetchAllEvents(urls, { authors: [c.author.pk], kinds: [1] }, {}), 'by author')), [...ids].sort());
    assert.deepEqual(newestFirst(await within(fetcher.fetchAllEvents(urls, { kinds: [1], '#t': [c.topic] }, {}, { sort: true }), 'by tag')), ids);
    assert.deepEqual((await within(fetcher.fetchLatestEvents(urls, { kinds: [1], '#t': [c.topic] }, 2), 'latest 2')).map((e) => e.id), ids.slice(0, 2));
    assert.equal((await within(fetcher.fetchLastEvent(urls, { authors: [c.author.pk], kinds: [0] }), 'last profile'))?.id, c.profile.id);
    assert.deepEqual(sortedIds(await within(fetcher.fetchAllEvents(urls, { kinds: [0], search: c.word }, {}), 'search')), [c.profile.id]);
  } finally {
    fetcher.shutdown();
    watch.stop();
  }
  watch.assertQuiet('nostr-fetch');
  assert.equal(await challengesSent(relay), 0, 'the relay sent no AUTH challenge');
});
