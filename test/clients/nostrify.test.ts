// @nostrify/nostrify (NRelay1) against a relay started with the default settings: publish, read
// back by id, author, kind and tag, search, COUNT, a live subscription, exact ids, and no AUTH in
// its log. NRelay1 has no NIP-77. Then DMs: without an `auth` callback a stranger's query ends empty;
// with one, NRelay1 answers the challenge that came right before the auth-required: CLOSED and
// sends the REQ again, and the DM is served in the same query() call.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { NRelay1 } from '@nostrify/nostrify';
import { finalizeEvent } from 'nostr-tools/pure';
import { startRelayProcess, type RelayProcess } from '../helpers/relay-process.js';
import { Author, Client } from '../helpers/client.js';
import { ConsoleWatch, corpus, exitSoon, newestFirst, sortedIds, within, publishedDm } from './fixture.js';
import { challengesSent } from './relay-status.js';

// NRelay1 opens connections with the global WebSocket, which Node 20 lacks (Node 22 has one)
(globalThis as { WebSocket?: unknown }).WebSocket ??= WebSocket;

let relay: RelayProcess;
const opened: NRelay1[] = [];
before(async () => { relay = await startRelayProcess(); });
after(async () => {
  await Promise.all(opened.map((r) => r.close()));
  await relay?.cleanup();
  exitSoon();
});

type Log = { level: string; ns: string; data?: unknown };
type Filter = Parameters<NRelay1['query']>[0][number];
const logs: Log[] = [];
const open = (opts: ConstructorParameters<typeof NRelay1>[1] = {}): NRelay1 => {
  const r = new NRelay1(relay.url, { backoff: false, log: (l) => { logs.push(l as Log); }, ...opts });
  opened.push(r);
  return r;
};

test('@nostrify/nostrify: publish, read back by id/author/kind/tag, search, COUNT, live; no AUTH challenge', async () => {
  const c = corpus('nostrify');
  const watch = new ConsoleWatch().start();
  const r = open();
  try {
    for (const e of [...c.notes, c.profile]) await within(r.event(e), 'publish');
    const ids = newestFirst(c.notes);
    const q = (f: Filter) => within(r.query([f]), `query ${JSON.stringify(f)}`);
    assert.deepEqual((await q({ ids: [c.notes[2]!.id] })).map((e) => e.id), [c.notes[2]!.id]);
    assert.deepEqual(newestFirst(await q({ authors: [c.author.pk], kinds: [1] })), ids);
    assert.deepEqual(newestFirst(await q({ kinds: [1], '#t': [c.topic] })), ids);
    assert.deepEqual((await q({ kinds: [1], '#t': [c.topic], limit: 2 })).map((e) => e.id).sort(), ids.slice(0, 2).sort());
    assert.deepEqual(sortedIds(await q({ kinds: [0], search: c.word })), [c.profile.id]);
    assert.equal((await within(r.count([{ kinds: [1], '#t': [c.topic] }]), 'COUNT')).count, 3);

    const live = c.live();
    const ctrl = new AbortController();
    const got = await within((async () => {
      for await (const m of r.req([{ kinds: [1], '#t': [c.topic], limit: 0 }], { signal: ctrl.signal })) {
        if (m[0] === 'EOSE') void r.event(live);
        if (m[0] === 'EVENT') return m[2].id;
      }
      return 'ended';
    })(), 'live event');
    ctrl.abort();
    assert.equal(got, live.id);
  } finally {
    watch.stop();
  }
  // NRelay1 adds an abort listener to one AbortSignal per request, and Node prints a warning past
  // ten: the library's own bookkeeping, not about this relay
  watch.ignore(/MaxListenersExceededWarning: Possible EventTarget memory leak detected\. \d+ abort listeners added to \[AbortSignal\]/);
  watch.assertQuiet('@nostrify/nostrify');
  const received = logs.filter((l) => l.ns === 'relay.ws.message' && Array.isArray(l.data)).map((l) => (l.data as unknown[])[0]);
  assert.ok(received.includes('EOSE'), 'the log shows the messages received');
  assert.ok(!received.includes('AUTH'), 'no AUTH message was received');
  assert.deepEqual(logs.filter((l) => l.level === 'warn' || l.level === 'error'), [], 'no warning logged');
  assert.equal(await challengesSent(relay), 0, 'the relay sent no AUTH challenge');
});

test('@nostrify/nostrify: a stranger\'s DM query ends empty; with an auth callback NRelay1 answers the challenge, retries and gets the DM', async () => {
  const { bob, dm } = await publishedDm(relay.url);
  const filter = { kinds: [4], '#p': [bob.pk] };

  // without an auth callback the CLOSED ends the query empty
  assert.deepEqual(await within(open().query([filter]), 'query without auth'), []);
  const challenges: string[] = [];
  const r = open({ auth: async (challenge) => { challenges.push(challenge); return finalizeEvent({ kind: 22242, created_at: Math.floor(Date.now() / 1000), tags: [['relay', relay.url], ['challenge', challenge]], content: '' }, bob.sk); } });
  assert.deepEqual((await within(r.query([filter]), 'query with auth')).map((e) => e.id), [dm.id]);
  assert.equal(challenges.length, 1);
});
