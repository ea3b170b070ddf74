// rx-nostr against a relay started with the default settings: publish, read back by id, author,
// kind and tag, search, a live (forward) subscription, exact ids, and no AUTH among the messages it
// saw. rx-nostr has no COUNT and no NIP-77. Then the protected cases with its authenticator: a DM
// REQ closed auth-required: and a NIP-70 protected event refused auth-required: are both sent
// again by rx-nostr once it answered the challenge that came with the refusal.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { filter as filter$, firstValueFrom, lastValueFrom, toArray } from 'rxjs';
import { createRxForwardReq, createRxNostr, createRxOneshotReq, type MessagePacket, type RxNostr } from 'rx-nostr';
import { finalizeEvent, verifyEvent } from 'nostr-tools/pure';
import { startRelayProcess, type RelayProcess } from '../helpers/relay-process.js';
import { Author, Client, now } from '../helpers/client.js';
import type { NostrEvent } from '../../src/nostr/event.js';
import { ConsoleWatch, corpus, exitSoon, newestFirst, sortedIds, within, publishedDm } from './fixture.js';
import { challengesSent } from './relay-status.js';

let relay: RelayProcess;
const made: RxNostr[] = [];
before(async () => { relay = await startRelayProcess(); });
after(async () => {
  for (const r of made) r.dispose();
  await relay?.cleanup();
  exitSoon();
});

/** An rx-nostr signer for a test key (rx-nostr's own signers need a browser extension or @rx-nostr/crypto). */
const signerOf = (a: Author) => ({
  signEvent: async (p: { kind: number; content: string; tags?: string[][]; created_at?: number }) =>
    finalizeEvent({ kind: p.kind, content: p.content, tags: p.tags ?? [], created_at: p.created_at ?? now() }, a.sk) as never,
  getPublicKey: async () => a.pk,
});

function open(as?: Author): { rx: RxNostr; messages: MessagePacket[] } {
  const rx = createRxNostr({
    verifier: async (e) => verifyEvent(e as never),
    websocketCtor: WebSocket as never, // Node 20 has no global WebSocket
    skipFetchNip11: true,
    retry: { strategy: 'off' },
    ...(as ? { authenticator: { signer: signerOf(as) } } : {}),
  });
  rx.setDefaultRelays([relay.url]);
  made.push(rx);
  const messages: MessagePacket[] = [];
  rx.createAllMessageObservable().subscribe((m) => messages.push(m));
  return { rx, messages };
}

const oneshot = (rx: RxNostr, f: Record<string, unknown>) =>
  within(lastValueFrom(rx.use(createRxOneshotReq({ filters: f as never })).pipe(toArray()), { defaultValue: [] }), `rx-nostr oneshot ${JSON.stringify(f)}`).then((ps) => ps.map((p) => p.event));

const publish = (rx: RxNostr, e: NostrEvent) =>
  within(firstValueFrom(rx.send(e as never).pipe(filter$((p) => p.done))), `rx-nostr send ${e.id}`);

test('rx-nostr: publish, read back by id/author/kind/tag, search, live; no AUTH challenge', async () => {
  const c = corpus('rx-nostr');
  const watch = new ConsoleWatch().start();
  const { rx, messages } = open();
  try {
    for (const e of [...c.notes, c.profile]) {
      const ok = await publish(rx, e);
      assert.equal(ok.ok, true, ok.notice);
    }
    const ids = newestFirst(c.notes);
    assert.deepEqual(sortedIds(await oneshot(rx, { ids: [c.notes[0]!.id] })), [c.notes[0]!.id]);
    assert.deepEqual(newestFirst(await oneshot(rx, { authors: [c.author.pk], kinds: [1] })), ids);
    assert.deepEqual(newestFirst(await oneshot(rx, { kinds: [1], '#t': [c.topic] })), ids);
    assert.deepEqual(sortedIds(await oneshot(rx, { kinds: [0], search: c.word })), [c.profile.id]);

    const live = c.live();
    const req = createRxForwardReq();
    const got = firstValueFrom(rx.use(req).pipe(filter$((p) => p.event.id === live.id)));
    // publish once the relay has the subscription: its EOSE (rx-nostr does not pass it on to use())
    const eose = firstValueFrom(rx.createAllMessageObservable().pipe(filter$((m) => m.type === 'EOSE')));
    req.emit({ kinds: [1], '#t': [c.topic], limit: 0 });
    await within(eose, 'EOSE of the live subscription');
    assert.equal((await publish(rx, live)).ok, true);
    assert.equal((await within(got, 'live event')).event.id, live.id);
  } finally {
    watch.stop();
  }
  watch.assertQuiet('rx-nostr');
  assert.ok(messages.some((m) => m.type === 'EOSE'), 'rx-nostr saw the relay\'s messages');
  assert.deepEqual(messages.filter((m) => m.type === 'AUTH'), [], 'no AUTH message');
  assert.equal(await challengesSent(relay), 0, 'the relay sent no AUTH challenge');
});

test('rx-nostr with an authenticator: a DM REQ closed auth-required: and a NIP-70 event refused auth-required: are sent again after AUTH and succeed', async () => {
  const { bob, dm } = await publishedDm(relay.url);

  const { rx, messages } = open(bob);
  assert.deepEqual(sortedIds(await oneshot(rx, { kinds: [4], '#p': [bob.pk] })), [dm.id]);
  const types = messages.map((m) => m.type);
  const closedAt = messages.findIndex((m) => m.type === 'CLOSED');
  assert.ok(closedAt > 0 && types.indexOf('AUTH') >= 0 && types.indexOf('AUTH') < closedAt, `AUTH came before the CLOSED: ${types.join(' ')}`);

  const mine = bob.sign({ kind: 1, tags: [['-']], content: 'protected (NIP-70)' });
  const b2 = open(bob);
  const ok = await publish(b2.rx, mine);
  assert.equal(ok.ok, true, ok.notice);
  const notices = b2.messages.filter((m) => m.type === 'OK').map((m) => (m.message as unknown[])[3]);
  assert.ok(notices.some((n) => typeof n === 'string' && n.startsWith('auth-required: ')), `first refused auth-required: ${JSON.stringify(notices)}`);
});
