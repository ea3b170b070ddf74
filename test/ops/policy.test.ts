// Write policies and rate limits against the real relay: proof of work (global and per kind),
// size limits, kind and pubkey lists, EVENT floods from one IP (rate-limited:) while a client on
// another loopback address (127.0.0.2) is unaffected, and the connections-per-IP cap.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { finalizeEvent } from 'nostr-tools/pure';
import { startRelayProcesses, type RelayProcess } from '../helpers/relay-process.js';
import { Author, Client } from '../helpers/client.js';
import { leadingZeroBits } from '../../src/nostr/kinds.js';
import type { NostrEvent } from '../../src/nostr/event.js';

let relay: RelayProcess;
let limited: RelayProcess;
const banned = new Author();

before(async () => {
  [relay, limited] = await startRelayProcesses(
    {
      env: {
        ORBWEAVER_POLICY_MIN_POW: '8',
        ORBWEAVER_POLICY_POW_KINDS: '0:0,7:0',
        ORBWEAVER_POLICY_KIND_DENY: '7,20000-20010',
        ORBWEAVER_POLICY_PUBKEY_DENY: banned.pk,
        ORBWEAVER_LIMITS_MAX_EVENT_BYTES: '2000',
        ORBWEAVER_LIMITS_MAX_EVENT_TAGS: '5',
        ORBWEAVER_LIMITS_MAX_CONTENT_LENGTH: '1000',
      },
    },
    {
      env: {
        ORBWEAVER_RATE_LIMITS_PER_IP_EVENT: '2',
        ORBWEAVER_RATE_LIMITS_BURST_SECONDS: '5',
        ORBWEAVER_RATE_LIMITS_MAX_CONNECTIONS_PER_IP: '3',
      },
    },
  );
});
after(async () => { await Promise.all([relay.cleanup(), limited.cleanup()]); });

function mine(a: Author, bits: number, content = 'mined'): NostrEvent {
  const created_at = Math.floor(Date.now() / 1000);
  for (let nonce = 0; ; nonce++) {
    const e = finalizeEvent({ kind: 1, created_at, tags: [['nonce', String(nonce), String(bits)]], content }, a.sk);
    if (leadingZeroBits(e.id) >= bits) return { id: e.id, pubkey: e.pubkey, created_at: e.created_at, kind: e.kind, tags: e.tags, content: e.content, sig: e.sig };
  }
}

test('NIP-13: events below the minimum difficulty get pow:, mined ones pass, per-kind overrides apply, NIP-11 says so', async () => {
  const c = await Client.open(relay.url);
  const a = new Author();
  let ev = a.sign({ content: 'no work' });
  while (leadingZeroBits(ev.id) >= 8) ev = a.sign({ content: 'no work ' + Math.random() });
  let r = await c.publish(ev);
  assert.equal(r.ok, false);
  assert.match(r.message, /^pow: difficulty \d+ is less than 8/);
  r = await c.publish(mine(a, 8));
  assert.deepEqual(r, { ok: true, message: '' });
  r = await c.publish(a.sign({ kind: 0, content: '{}' }));
  assert.equal(r.ok, true, 'kind 0 needs no work (powKinds 0:0)');
  const info = (await (await fetch(relay.httpUrl, { headers: { Accept: 'application/nostr+json' } })).json()) as { limitation: Record<string, unknown> };
  assert.equal(info.limitation.min_pow_difficulty, 8);
  assert.equal(info.limitation.restricted_writes, true);
  c.close();
});

test('size, tag and content limits, denied kinds and banned pubkeys are refused with the right prefix', async () => {
  const c = await Client.open(relay.url);
  const a = new Author();
  const cases: Array<[NostrEvent, RegExp]> = [
    [a.sign({ kind: 0, content: 'x'.repeat(1500) }), /^invalid: content is longer/],
    [a.sign({ kind: 0, content: 'x'.repeat(900), tags: [['t', 'y'.repeat(900)]] }), /^invalid: event is larger than 2000 bytes/],
    [a.sign({ kind: 0, tags: [['t', '1'], ['t', '2'], ['t', '3'], ['t', '4'], ['t', '5'], ['t', '6']] }), /^invalid: more than 5 tags/],
    [a.sign({ kind: 7, content: '+' }), /^blocked: kind 7 /],
    [a.sign({ kind: 20005 }), /^blocked: kind 20005 /],
    [banned.sign({ kind: 0, content: '{}' }), /^blocked: this pubkey is banned/],
  ];
  for (const [ev, re] of cases) {
    const r = await c.publish(ev);
    assert.equal(r.ok, false, `refused: ${re}`);
    assert.match(r.message, re);
  }
  c.close();
});

test('an EVENT flood from 127.0.0.1 gets rate-limited: while a client on 127.0.0.2 is unaffected', async () => {
  const flooder = await Client.open(limited.url);
  const a = new Author();
  const evs = Array.from({ length: 100 }, (_, i) => a.sign({ content: `flood ${i}` }));
  for (const e of evs) flooder.send(['EVENT', e]);
  const oks = await Promise.all(evs.map((e) => flooder.next((m) => m[0] === 'OK' && m[1] === e.id, 20000)));
  const refused = oks.filter((m) => m[2] === false);
  assert.ok(refused.length > 0, 'some events were refused');
  for (const m of refused) assert.match(m[3] as string, /^rate-limited: /);
  assert.ok(oks.some((m) => m[2] === true), 'the burst allowance was accepted');

  const other = await Client.open(limited.url, { localAddress: '127.0.0.2' });
  const b = new Author();
  for (let i = 0; i < 5; i++) assert.deepEqual(await other.publish(b.sign({ content: `calm ${i}` })), { ok: true, message: '' });
  // the flooder's own IP is still limited: a second burst outruns what its bucket refilled meanwhile
  // (2 per second, however slow the machine was)
  const more = Array.from({ length: 30 }, (_, i) => a.sign({ content: `one more ${i}` }));
  for (const e of more) flooder.send(['EVENT', e]);
  const again = await Promise.all(more.map((e) => flooder.next((m) => m[0] === 'OK' && m[1] === e.id, 20000)));
  const limitedAgain = again.filter((m) => m[2] === false);
  assert.ok(limitedAgain.length > 0, 'the second burst was limited too');
  for (const m of limitedAgain) assert.match(m[3] as string, /^rate-limited: /);
  flooder.close();
  other.close();
});

test('connections per IP are capped; another IP can still connect', async () => {
  const mine: Client[] = [];
  for (let i = 0; i < 3; i++) mine.push(await Client.open(limited.url, { localAddress: '127.0.0.3' }));
  await assert.rejects(Client.open(limited.url, { localAddress: '127.0.0.3' }), /429/);
  const other = await Client.open(limited.url, { localAddress: '127.0.0.4' });
  assert.equal(other.closed, false);
  mine[0].close();
  // once one closes, a new connection from that IP is accepted again (bounded wait)
  let ok: Client | null = null;
  for (let i = 0; i < 50 && !ok; i++) {
    ok = await Client.open(limited.url, { localAddress: '127.0.0.3' }).catch(() => null);
    if (!ok) await new Promise((r) => setTimeout(r, 100));
  }
  assert.ok(ok, 'a slot was freed');
  for (const c of [...mine, other, ok!]) c.close();
});
