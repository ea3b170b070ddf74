// Attack: many connections each run scans as long as the budget allows. With only a per-connection
// cap, 128 connections of one client kept 512 scans interleaved on the two query threads and
// another client's small REQ waited 1.2 s. Now one address (IPv6: one /64) runs at most
// read.maxConcurrentQueriesPerIp scans at once and the rest wait in its own queue; and the scan
// budget also counts planning and opening index ranges, so a REQ of 80,000 empty ranges is cut.
// Default settings; the attacker connects from 127.0.0.2, the other client from 127.0.0.1.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startRelayProcess, type RelayProcess } from '../helpers/relay-process.js';
import { Client, now } from '../helpers/client.js';
import { loadPaced } from '../../bench/lib/sockets.js';
import { accessFigures, signedEvents } from './helpers.js';

const ATTACKER = { localAddress: '127.0.0.2' };
let relay: RelayProcess;
before(async () => {
  relay = await startRelayProcess();
  const t = now();
  const evs = await signedEvents('scans', 3_000, (i) => ({ kind: 1, created_at: t - i, tags: [['t', `x${i % 10}`]], content: `event ${i}` }));
  const r = await loadPaced(relay.url, evs); // within the default per-address message rate
  assert.equal(r.stored, 3_000);
});
after(async () => { await relay.cleanup(); });

test('one address runs at most 4 scans at once however many connections it opens; the rest wait their turn', async () => {
  const defaults = 4; // read.maxConcurrentQueriesPerIp
  const attackers = await Promise.all(Array.from({ length: 32 }, () => Client.open(relay.url, ATTACKER)));
  const victim = await Client.open(relay.url);
  let maxRunning = 0;
  let maxWaiting = 0;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const f = await accessFigures(relay);
      maxRunning = Math.max(maxRunning, f.queriesRunning);
      maxWaiting = Math.max(maxWaiting, f.queriesWaiting);
      await new Promise((r) => setTimeout(r, 5));
    }
  })();
  // authors: ["ab"] is too short a prefix for the author indexes: a scan of the whole store
  const scans = attackers.flatMap((c, i) => [0, 1].map((k) => c.query({ authors: ['ab'] }, `scan${i}-${k}`)));
  let attackDone = false;
  const all = Promise.all(scans).then((r) => { attackDone = true; return r; });
  await new Promise((r) => setTimeout(r, 50));
  const mine = await victim.query({ kinds: [1], limit: 10 });
  assert.equal(mine.events.length, 10);
  const victimBeforeEnd = !attackDone;
  const results = await all;
  sampling = false;
  await sampler;
  assert.ok(results.every((r) => r.closed === undefined && r.events.length === 0), 'every attacking scan ended with EOSE');
  assert.ok(maxRunning >= 1 && maxRunning <= defaults + 1, `at most ${defaults} attacking scans (+ the other client's) ran at once; saw ${maxRunning}`);
  assert.ok(maxWaiting > 0, 'the rest waited');
  assert.ok(victimBeforeEnd, 'the other client was answered while the attack still had scans waiting');
  for (const c of [...attackers, victim]) c.close();
});

test('planning and opening index ranges count toward the scan budget', async () => {
  const c = await Client.open(relay.url, ATTACKER);
  const hex = (i: number, k: number) => `${i.toString(16).padStart(8, '0')}${k.toString(16).padStart(8, '0')}`;
  // 20 filters x 64 author prefixes x 64 kinds = 81,920 (empty) index ranges, 2,580 filter values
  const filters = Array.from({ length: 20 }, (_, i) => ({ authors: Array.from({ length: 64 }, (_, k) => hex(i, k)), kinds: Array.from({ length: 64 }, (_, k) => 1000 + k) }));
  const q = await c.query(filters);
  assert.match(q.closed ?? '', /^error: the query read more index entries than this relay allows/);
  const n = await c.count(filters);
  assert.equal(n[0], 'CLOSED');
  assert.match(n[2] as string, /^error: the count read more index entries/);
  // a narrower request of the same shape is answered
  assert.equal((await c.query(filters.slice(0, 2))).closed, undefined);
  c.close();
});
