// NIP-67: EOSE carries ["finish"] only when every stored event matching the REQ's filters was sent.
// Over the stored-answer shapes (ids, authors, a limit above, at and below the stored count, several
// filters, lookups, the relay's own max_limit, an answer sent in pieces, random filters), a finish
// is never sent when a match was left out, and it is sent where the answer is plainly whole. Off by
// default (nip67): then no EOSE has a third element and NIP-11 does not list 67. ["more"] comes only
// when the relay's own limit (the default, or max_limit for a larger one) left a match out.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startRelayProcess, type RelayProcess } from '../helpers/relay-process.js';
import { Author, Client, now } from '../helpers/client.js';
import type { NostrEvent } from '../../src/nostr/event.js';
import { matchFilter } from 'nostr-tools/filter';

let relay: RelayProcess;
let c: Client;
const a = new Author();
const b = new Author();
const stored: NostrEvent[] = [];
const T = now() - 1000;

before(async () => {
  // max_limit 20: the relay's own cap; pieces of 64 KiB: an answer of several pieces
  relay = await startRelayProcess({ env: { ORBWEAVER_NIP67: 'true', ORBWEAVER_LIMITS_MAX_LIMIT: '20', ORBWEAVER_LIMITS_DEFAULT_LIMIT: '20', ORBWEAVER_READ_ANSWER_PIECE_BYTES: '65536', ORBWEAVER_RATE_LIMITS_BYTES_PER_IP: '0' } });
  c = await Client.open(relay.url);
  const evs: NostrEvent[] = [];
  for (let i = 0; i < 15; i++) evs.push(a.sign({ kind: 1, created_at: T + (i % 5), tags: [['t', i % 2 ? 'odd' : 'even']], content: `a${i}` }));
  for (let i = 0; i < 8; i++) evs.push(b.sign({ kind: 1, created_at: T + i, tags: [['t', 'odd']], content: `b${i} ${'x'.repeat(20_000)}` }));
  evs.push(a.sign({ kind: 0, created_at: T, content: '{"name":"a"}' }), b.sign({ kind: 0, created_at: T, content: '{"name":"b"}' }));
  evs.push(a.sign({ kind: 10002, created_at: T, tags: [['r', 'wss://a.example']] }));
  for (const e of evs) {
    const ok = await c.publish(e);
    assert.equal(ok.ok, true, ok.message);
    stored.push(e);
  }
});
after(async () => { c.close(); await relay.cleanup(); });

/** A REQ's stored events and whether its EOSE said finish. */
async function ask(filters: object[], subId: string): Promise<{ ids: Set<string>; finish: boolean; more: boolean }> {
  c.send(['REQ', subId, ...filters]);
  const ids = new Set<string>();
  for (;;) {
    const m = await c.next((m) => (m[0] === 'EVENT' || m[0] === 'EOSE' || m[0] === 'CLOSED') && m[1] === subId, 10_000, `EOSE of ${subId}`);
    if (m[0] === 'CLOSED') throw new Error(`CLOSED ${String(m[2])}`);
    if (m[0] === 'EVENT') { ids.add((m[2] as NostrEvent).id); continue; }
    c.send(['CLOSE', subId]);
    const hints = m[2];
    if (hints !== undefined) assert.ok(Array.isArray(hints), 'the third element is an array of hints');
    return { ids, finish: Array.isArray(hints) && hints.includes('finish'), more: Array.isArray(hints) && hints.includes('more') };
  }
}

const matches = (filters: object[]): Set<string> => new Set(stored.filter((e) => filters.some((f) => matchFilter(f as never, e as never))).map((e) => e.id));

/** Asks; asserts that a finish comes only with every match, and returns whether it came. */
async function finishOnlyWhenWhole(filters: object[], subId: string): Promise<boolean> {
  const r = await ask(filters, subId);
  const all = matches(filters.map((f) => ({ ...f, limit: undefined })));
  if (r.finish) assert.deepEqual([...r.ids].sort(), [...all].sort(), `finish with a match left out: ${JSON.stringify(filters)}`);
  if (r.more) assert.ok(r.ids.size < all.size, `more, but every match was sent: ${JSON.stringify(filters)}`);
  assert.ok(!(r.finish && r.more), 'finish and more at once');
  return r.finish;
}

test('NIP-11 lists 67 when it is on; off by default, no EOSE has a third element', async () => {
  const info = (await (await fetch(relay.httpUrl, { headers: { Accept: 'application/nostr+json' } })).json()) as { supported_nips: number[] };
  assert.ok(info.supported_nips.includes(67));
  const plain = await startRelayProcess();
  try {
    const off = (await (await fetch(plain.httpUrl, { headers: { Accept: 'application/nostr+json' } })).json()) as { supported_nips: number[] };
    assert.ok(!off.supported_nips.includes(67));
    const pc = await Client.open(plain.url);
    pc.send(['REQ', 'p', { ids: ['f'.repeat(64)] }]);
    const eose = await pc.next((m) => m[0] === 'EOSE', 5000, 'EOSE');
    assert.equal(eose.length, 2);
    pc.close();
  } finally {
    await plain.cleanup();
  }
});

test('finish where every match was sent; never where one was left out', async () => {
  // whole answers: a limit above the stored count, ids (one unknown), a lookup of replaceable kinds
  assert.equal(await finishOnlyWhenWhole([{ authors: [a.pk], kinds: [1], limit: 20 }], 'above'), true);
  assert.equal(await finishOnlyWhenWhole([{ ids: [stored[0]!.id, stored[3]!.id, 'f'.repeat(64)] }], 'ids'), true);
  assert.equal(await finishOnlyWhenWhole([{ authors: [a.pk, b.pk], kinds: [0, 10002] }], 'lookup'), true);
  assert.equal(await finishOnlyWhenWhole([{ kinds: [7] }], 'none'), true, 'no match at all is a whole answer');
  // a limit below the stored count, and the relay's own cap (20 of 23 notes)
  assert.equal(await finishOnlyWhenWhole([{ authors: [a.pk], kinds: [1], limit: 5 }], 'below'), false);
  assert.equal(await finishOnlyWhenWhole([{ kinds: [1], limit: 100 }], 'cap'), false);
  assert.equal(await finishOnlyWhenWhole([{ kinds: [1] }], 'default'), false);
  // limit 0 asks for none of its matches
  assert.equal(await finishOnlyWhenWhole([{ kinds: [1], limit: 0 }], 'zero'), false);
  // several filters: whole only when each is
  assert.equal(await finishOnlyWhenWhole([{ authors: [b.pk], kinds: [1] }, { ids: [stored[1]!.id] }], 'both'), true);
  assert.equal(await finishOnlyWhenWhole([{ authors: [b.pk], kinds: [1] }, { authors: [a.pk], kinds: [1], limit: 2 }], 'one-short'), false);
  // b's notes are ~20 KB each: 160 KB in pieces of 64 KiB, still whole
  assert.equal(await finishOnlyWhenWhole([{ authors: [b.pk], kinds: [1], limit: 20 }], 'pieces'), true);
  assert.equal(await finishOnlyWhenWhole([{ '#t': ['odd'], limit: 20 }], 'tag'), true);
});

test('random filters: a finish never leaves a match out', async () => {
  let seed = 67;
  const rnd = (n: number) => { seed = (seed * 1103515245 + 12345) % 2 ** 31; return seed % n; };
  let finishes = 0;
  for (let i = 0; i < 60; i++) {
    const f: Record<string, unknown> = {};
    if (rnd(2)) f.authors = rnd(2) ? [a.pk] : [a.pk, b.pk];
    if (rnd(2)) f.kinds = rnd(3) ? [1] : [0, 1];
    if (rnd(3) === 0) f['#t'] = [rnd(2) ? 'odd' : 'even'];
    if (rnd(3) === 0) f.since = T + rnd(5);
    if (rnd(3) === 0) f.until = T + rnd(8);
    if (rnd(2)) f.limit = 1 + rnd(25);
    const filters = rnd(4) === 0 ? [f, { kinds: [0] }] : [f];
    if (await finishOnlyWhenWhole(filters, `r${i}`)) finishes++;
  }
  assert.ok(finishes > 10, `${finishes} finishes`);
});

test('more where the relay\'s own limit left matches out; not for the client\'s own limit, nor a whole answer', async () => {
  // 23 notes: max_limit 20 and the default limit 20 are the relay's own limits
  assert.equal((await ask([{ kinds: [1], limit: 100 }], 'm-cap')).more, true, 'a larger limit than max_limit');
  assert.equal((await ask([{ kinds: [1] }], 'm-default')).more, true, 'no limit: the default');
  assert.equal((await ask([{ authors: [a.pk], kinds: [1], limit: 5 }], 'm-own')).more, false, 'the client\'s own limit: it knows');
  assert.equal((await ask([{ authors: [a.pk], kinds: [1], limit: 100 }], 'm-whole')).more, false, '15 of a: all sent');
  assert.equal((await ask([{ authors: [a.pk], kinds: [1], limit: 5 }, { kinds: [1], limit: 50 }], 'm-two')).more, true, 'the second filter was capped');
  // a's notes share 5 seconds (runs of equal created_at): a cap inside a run still knows
  assert.equal((await ask([{ authors: [a.pk, b.pk], kinds: [1], '#t': ['odd'], limit: 30 }], 'm-run')).more, false, '11 odd notes: all sent');
});
