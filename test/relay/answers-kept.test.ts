// Kept answers (store/answer-cache.ts) through the real relay: a followers REQ asked again is
// answered from the query thread's kept answer (orbweaver_req_answers_kept on /metrics counts it),
// and what clients publish after it shows in the next answer: a follower who unfollows leaves it,
// a new follower and a re-published list come first, a list deleted by NIP-09 goes.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import WebSocket from 'ws';
import { startRelayProcess, type RelayProcess } from '../helpers/relay-process.js';
import { Author, Client, ids, now } from '../helpers/client.js';
import type { NostrEvent } from '../../src/nostr/event.js';

let relay: RelayProcess;
const target = randomBytes(32).toString('hex');
/** ~40 other follows make each list ~3 KB, so 60 of them are well over the 64 KiB kept */
const filler = Array.from({ length: 40 }, () => randomBytes(32).toString('hex'));
const followers = Array.from({ length: 60 }, () => new Author());
const listOf = (a: Author, created_at: number, withTarget = true): NostrEvent =>
  a.sign({ kind: 3, created_at, tags: [...(withTarget ? [['p', target]] : []), ...filler.map((p) => ['p', p])], content: '' });

before(async () => {
  relay = await startRelayProcess({ env: { ORBWEAVER_QUERY_THREADS: '2' } });
  const c = await Client.open(relay.url);
  const t = now() - 10_000;
  for (let i = 0; i < followers.length; i++) assert.equal((await c.publish(listOf(followers[i]!, t + i))).ok, true);
  c.close();
});
after(async () => { await relay.cleanup(); });

async function kept(): Promise<number> {
  const text = await (await fetch(`${relay.httpUrl}/metrics`)).text();
  const m = /^orbweaver_req_answers_kept (\d+)$/m.exec(text);
  assert.ok(m, 'orbweaver_req_answers_kept is on /metrics');
  return Number(m[1]);
}

test('a followers REQ asked again is a kept answer, and every change clients publish shows in the next one', async () => {
  const c = await Client.open(relay.url);
  const q = [{ kinds: [3], '#p': [target], limit: 100 }];
  const followersNow = async (): Promise<string[]> => (await c.query(q)).events.map((e) => e.pubkey);
  try {
    const first = ids((await c.query(q)).events);
    assert.equal(first.length, 60);
    const before = await kept();
    for (let i = 0; i < 4; i++) assert.deepEqual(ids((await c.query(q)).events), first);
    assert.ok((await kept()) - before >= 3, 'asked again, the answer was kept and given');

    // an unfollow: the list is replaced by one without the target
    const t = now();
    assert.equal((await c.publish(listOf(followers[5]!, t, false))).ok, true);
    let got = await followersNow();
    assert.equal(got.length, 59);
    assert.ok(!got.includes(followers[5]!.pk));

    // a new follower comes first (newest)
    const fresh = new Author();
    assert.equal((await c.publish(listOf(fresh, t + 1))).ok, true);
    got = await followersNow();
    assert.equal(got.length, 60);
    assert.equal(got[0], fresh.pk);

    // asked again without a change: kept once more
    const k = await kept();
    assert.deepEqual(await followersNow(), got);
    assert.deepEqual(await followersNow(), got);
    assert.ok((await kept()) > k);

    // an unchanged re-publication moves its author to the front
    assert.equal((await c.publish(listOf(followers[9]!, t + 2))).ok, true);
    got = await followersNow();
    assert.equal(got[0], followers[9]!.pk);
    assert.equal(got.length, 60);

    // a NIP-09 deletion of one list takes it out
    const listId = (await c.query([{ kinds: [3], authors: [followers[20]!.pk] }])).events[0]!.id;
    assert.equal((await c.publish(followers[20]!.sign({ kind: 5, created_at: t + 3, tags: [['e', listId]], content: '' }))).ok, true);
    got = await followersNow();
    assert.equal(got.length, 59);
    assert.ok(!got.includes(followers[20]!.pk));
  } finally {
    c.close();
  }
});

test('one kept answer lent to many REQs at once carries each REQ\'s own subscription id', async () => {
  const c = await Client.open(relay.url);
  // five lists of ~23 KB among them: frames of 16 KiB and more go out by another way in uWS
  // (ws-send.ts), and a lent frame must keep its prefix on that way too
  const long = Array.from({ length: 330 }, () => randomBytes(32).toString('hex'));
  for (let i = 0; i < 5; i++) {
    const a = new Author();
    assert.equal((await c.publish(a.sign({ kind: 3, created_at: now() - 100 + i, tags: [['p', target], ...long.map((p) => ['p', p])], content: '' }))).ok, true);
  }
  const q = { kinds: [3], '#p': [target], limit: 100 };
  const want = ids((await c.query([q])).events);
  assert.ok(want.length >= 60);
  await c.query([q]); // asked twice: kept from now on
  c.close();
  // eight connections, each with REQs of subscription ids of different lengths, all sent at once
  const conns = await Promise.all(Array.from({ length: 8 }, async () => {
    const ws = new WebSocket(relay.url);
    await new Promise((resolve, reject) => { ws.once('open', resolve); ws.once('error', reject); });
    return ws;
  }));
  const before = await kept();
  try {
    const answers = await Promise.all(conns.flatMap((ws, i) => Array.from({ length: 3 }, (_, j) => {
      const sub = `s${i}-${j}-${'z'.repeat((i * 7 + j * 13) % 60)}`;
      return new Promise<string[]>((resolve, reject) => {
        const got: string[] = [];
        const onMessage = (data: Buffer): void => {
          const m = JSON.parse(data.toString()) as unknown[];
          if (m[1] !== sub) return;
          if (m[0] === 'EVENT') got.push((m[2] as NostrEvent).id);
          else if (m[0] === 'EOSE') {
            ws.off('message', onMessage);
            resolve(got);
          } else reject(new Error(`unexpected ${data.toString().slice(0, 200)}`));
        };
        ws.on('message', onMessage);
        ws.send(JSON.stringify(['REQ', sub, q]));
      });
    })));
    for (const got of answers) assert.deepEqual(got, want);
    assert.ok((await kept()) - before >= 20, 'most of the 24 REQs were given the kept answer');
  } finally {
    for (const ws of conns) ws.close();
  }
});
