// Attack: thousands of live subscriptions holding short id/author prefixes. Prefix filters used to
// sit in a list checked against every published event (~70 ms per publish with 7.2 M prefixes);
// they are now filed by prefix length, so a publish looks up each length in use once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LiveIndex, type LiveSub } from '../../src/relay/live-index.js';
import { matchAny, parseFilter } from '../../src/nostr/filter.js';
import type { NostrEvent } from '../../src/nostr/event.js';
import { startRelayProcess } from '../helpers/relay-process.js';
import { Author, Client } from '../helpers/client.js';
import { metric } from './helpers.js';

let seed = 7;
const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) % n);
const hex = (len: number) => Array.from({ length: len }, () => '0123456789abcdef'[rnd(16)]).join('');

test('prefix filters of every length match exactly what a full scan matches', () => {
  const idx = new LiveIndex<number>();
  const base = ['0a1b', '0a1c', 'ff', '0'].map((p) => p + hex(64 - p.length));
  const pick = () => base[rnd(base.length)];
  const subs: LiveSub<number>[] = [];
  for (let i = 0; i < 600; i++) {
    const prefix = () => pick().slice(0, 1 + rnd(64));
    const w: Record<string, unknown> = {};
    const r = rnd(5);
    if (r === 0) w.ids = [prefix(), prefix()];
    else if (r === 1) w.authors = [prefix()];
    else if (r === 2) w.ids = [pick(), prefix()]; // full and prefix mixed
    else if (r === 3) { w.authors = [prefix()]; w.kinds = [rnd(2)]; }
    else { w.ids = [prefix()]; w['#t'] = ['x']; }
    const s = { conn: i, subId: String(i), filters: [parseFilter(w)] };
    subs.push(s);
    idx.add(s);
  }
  for (let i = 0; i < 600; i += 4) idx.remove(subs[i]);
  const alive = subs.filter((_, i) => i % 4 !== 0);
  for (let i = 0; i < 1500; i++) {
    const ev: NostrEvent = { id: pick(), pubkey: pick(), kind: rnd(2), created_at: 1, tags: rnd(2) ? [['t', 'x']] : [], content: '', sig: '' };
    const want = alive.filter((s) => matchAny(s.filters, ev)).map((s) => s.subId).sort();
    assert.deepEqual(idx.match(ev).map((s) => s.subId).sort(), want);
  }
});

test('a publish checks no prefix filter that cannot match it, however many are held', () => {
  const idx = new LiveIndex<number>();
  for (let i = 0; i < 5000; i++) {
    const f = parseFilter({ [i % 2 ? 'ids' : 'authors']: [`${'0'.repeat(1 + (i % 7))}${hex(1 + (i % 9))}`, `1${hex(i % 12)}`] });
    idx.add({ conn: i, subId: String(i), filters: [f] });
  }
  const ev: NostrEvent = { id: 'f'.repeat(64), pubkey: 'e'.repeat(64), kind: 1, created_at: 1, tags: [], content: '', sig: '' };
  const before = idx.checks;
  assert.deepEqual(idx.match(ev), []);
  assert.equal(idx.checks - before, 0);
});

test('against the relay: 1,980 prefix filters held by one client add nothing to what a publish checks', async () => {
  const relay = await startRelayProcess();
  try {
    const conns = await Promise.all(Array.from({ length: 6 }, () => Client.open(relay.url)));
    // 99 subscriptions of 20 filters on 6 connections: just under the per-IP cap of 2,000 filters
    // (the subscriber below shares the address), each with 40 ids or authors prefixes of 5-7 hex
    // characters (81,000 filter values)
    // the 20 events are signed first and no prefix held matches them: with ~13,000 prefixes of 5
    // characters a random id would match one every few runs, and that check would be right
    const a = new Author();
    const events = Array.from({ length: 20 }, (_, i) => a.sign({ content: `publish ${i}` }));
    const prefix = (): string => {
      for (;;) {
        const p = hex(5 + rnd(3));
        if (!a.pk.startsWith(p) && !events.some((e) => e.id.startsWith(p))) return p;
      }
    };
    let open = 0;
    for (const [i, c] of conns.entries()) {
      for (let k = 0; k < 17 && open < 99; k++) {
        const filters = Array.from({ length: 20 }, (_, j) => ({ [j % 2 ? 'ids' : 'authors']: Array.from({ length: 40 }, prefix), limit: 0 }));
        c.send(['REQ', `p${i}-${k}`, ...filters]);
        const m = await c.next((m) => (m[0] === 'EOSE' || m[0] === 'CLOSED') && m[1] === `p${i}-${k}`, 10_000);
        assert.equal(m[0], 'EOSE', String(m[2]));
        open++;
      }
    }
    assert.equal(open, 99);
    const pub = await Client.open(relay.url);
    const before = await metric(relay, 'orbweaver_live_filter_checks');
    for (const e of events) assert.equal((await pub.publish(e)).ok, true);
    const checks = (await metric(relay, 'orbweaver_live_filter_checks')) - before;
    // a prefix of 5+ hex characters matches a random id with probability < 1e-6: nothing should
    // be checked (a pass over the prefix filters would be 1,980 checks per publish)
    assert.ok(checks <= 5, `${checks} filters checked for 20 publishes`);
    // and one live subscription still gets its event
    const sub = await Client.open(relay.url);
    assert.equal((await sub.query({ authors: [a.pk.slice(0, 6)], limit: 0 }, 'mine', false)).closed, undefined);
    const ev = a.sign({ content: 'to the prefix subscriber' });
    await pub.publish(ev);
    await sub.next((m) => m[0] === 'EVENT' && m[1] === 'mine' && (m[2] as NostrEvent).id === ev.id, 5000, 'the live event');
    for (const c of [...conns, pub, sub]) c.close();
  } finally {
    await relay.cleanup();
  }
});
