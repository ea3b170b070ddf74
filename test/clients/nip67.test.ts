// With NIP-67 on (nip67 true), a client library that ignores the EOSE's third element keeps working:
// nostr-tools reads its stored events to EOSE, whole answers and cut ones alike. (nostr-fetch 0.17
// and @nostrify/nostrify 0.54 do not ignore it: they drop such an EOSE as malformed and their
// queries never end, which is why nip67 is off by default: docs/queries.md, "NIP-67".)
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { Relay, useWebSocketImplementation } from 'nostr-tools/relay';
import type { Filter } from 'nostr-tools/filter';
import { startRelayProcess, type RelayProcess } from '../helpers/relay-process.js';
import { corpus, newestFirst, within } from './fixture.js';

useWebSocketImplementation(WebSocket);

let relay: RelayProcess;
before(async () => { relay = await startRelayProcess({ env: { ORBWEAVER_NIP67: 'true' } }); });
after(async () => { await relay?.cleanup(); });

function fetchAll(r: Relay, filters: Filter[]): Promise<string[]> {
  return within(new Promise((resolve) => {
    const ids: string[] = [];
    const sub = r.subscribe(filters, { onevent: (e) => ids.push(e.id), oneose: () => { resolve(ids); sub.close(); } });
  }), `nostr-tools REQ ${JSON.stringify(filters)}`);
}

test('nostr-tools reads to EOSE from a relay that sends ["finish"]', async () => {
  const c = corpus('nip67');
  const r = await Relay.connect(relay.url);
  const raw = new WebSocket(relay.url);
  const opened = within(new Promise((resolve) => raw.once('open', resolve)), 'open');
  try {
    for (const e of c.notes) assert.equal(await within(r.publish(e), 'publish'), '');
    const ids = newestFirst(c.notes);
    assert.deepEqual(await fetchAll(r, [{ authors: [c.author.pk], kinds: [1] }]), ids, 'a whole answer');
    assert.deepEqual(await fetchAll(r, [{ authors: [c.author.pk], kinds: [1], limit: 2 }]), ids.slice(0, 2), 'a cut one');
    // what went over the wire for the whole answer: EOSE with the hint
    await opened;
    const eose = new Promise<unknown[]>((resolve) => raw.on('message', (d) => { const m = JSON.parse(String(d)) as unknown[]; if (m[0] === 'EOSE') resolve(m); }));
    raw.send(JSON.stringify(['REQ', 'w', { authors: [c.author.pk], kinds: [1] }]));
    assert.deepEqual(await within(eose, 'EOSE'), ['EOSE', 'w', ['finish']]);
  } finally {
    r.close();
    raw.terminate();
  }
});
