// Attack: REQs whose filters hold thousands of distinct values, on many connections, kept open
// with limit 0. Every value held in the live index costs memory; before the per-client budgets one
// script took the relay from 0.1 to 4.5 GB and out of heap. Now what a client holds is charged to
// its connection and its address: over a cap the REQ gets CLOSED rate-limited: (or restricted: for
// one REQ too large), the connection keeps working, and memory stays bounded. Default settings.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startRelayProcess, type RelayProcess } from '../helpers/relay-process.js';
import { Author, Client } from '../helpers/client.js';
import { accessFigures, rssMb, values } from './helpers.js';

let relay: RelayProcess;
before(async () => { relay = await startRelayProcess(); });
after(async () => { await relay.cleanup(); });

// defaults (src/config/relay.ts): 10,000 values per REQ, 25,000 per connection, 100,000 per IP
const PER_REQ = 10_000;
const PER_CONN = 25_000;
const PER_IP = 100_000;

/** Two filters of 4,499 distinct #t values each: 9,000 filter values (each filter counts one more). */
const heavy = (tag: string) => [{ '#t': values(`${tag}a`, 4499), limit: 0 }, { '#t': values(`${tag}b`, 4499), limit: 0 }];
const HEAVY = 9000;

/**
 * Sends a REQ and returns its CLOSED message (null for EOSE). Past rateLimits.bytesPerIp (1 MiB/s)
 * the relay drops messages unread with a NOTICE: the attacker then waits and sends again.
 */
async function req(c: Client, subId: string, filters: object[]): Promise<string | null> {
  for (;;) {
    c.send(['REQ', subId, ...filters]);
    const m = await c.next((m) => ((m[0] === 'EOSE' || m[0] === 'CLOSED') && m[1] === subId) || (m[0] === 'NOTICE' && /^rate-limited: too many messages/.test(m[1] as string)), 10_000, `answer to ${subId}`);
    if (m[0] === 'NOTICE') {
      await new Promise((r) => setTimeout(r, 500));
      continue;
    }
    return m[0] === 'EOSE' ? null : (m[2] as string);
  }
}

test('filter values are budgeted per REQ, per connection and per IP; refusals say rate-limited:/restricted:; memory stays bounded', async () => {
  const conns = await Promise.all(Array.from({ length: 12 }, () => Client.open(relay.url)));
  const rssBefore = rssMb(relay.proc.pid!);

  // one REQ over the per-REQ cap: 4 filters x 4,000 values
  const tooBig = ['a', 'b', 'c', 'd'].map((p) => ({ '#t': values(p, 4000), limit: 0 }));
  const r = await req(conns[0], 'too-big', tooBig);
  assert.match(r ?? '', /^restricted: .*more than 10000/);

  // every connection asks for 5 heavy subscriptions (540,000 values in all)
  const refusals: string[] = [];
  const accepted: number[] = conns.map(() => 0);
  for (let i = 0; i < conns.length; i++) {
    for (let k = 0; k < 5; k++) {
      const why = await req(conns[i], `s${k}`, heavy(`${i}-${k}-`));
      if (why === null) accepted[i]++;
      else refusals.push(why);
    }
  }
  const total = accepted.reduce((a, b) => a + b, 0);
  assert.equal(total, Math.floor(PER_IP / HEAVY), `accepted per connection: ${accepted.join(',')}`);
  for (const n of accepted) assert.ok(n <= Math.floor(PER_CONN / HEAVY));
  assert.ok(refusals.length > 0 && refusals.every((m) => m.startsWith('rate-limited: ')), refusals.find((m) => !m.startsWith('rate-limited: ')));
  assert.ok(refusals.some((m) => /this connection/.test(m)) && refusals.some((m) => /your IP address/.test(m)));
  const held = await accessFigures(relay);
  assert.equal(held.filterValuesHeld, total * HEAVY);

  // memory: what is held is ~100k values; without the budget this run holds 540k (~250 MB more)
  const grown = rssMb(relay.proc.pid!) - rssBefore;
  assert.ok(grown < 180, `RSS grew ${grown.toFixed(0)} MB`);

  // the connections keep working: a small REQ fits beside what conns[0] holds
  assert.equal(await req(conns[0], 'small', [{ kinds: [1], limit: 1 }]), null);
  // closing subscriptions gives the budget back: the last connection may now subscribe
  await new Promise((r) => setTimeout(r, 1000)); // the byte allowance refills, so the CLOSEs are read
  for (let k = 0; k < 5; k++) conns[0].send(['CLOSE', `s${k}`]);
  conns[0].send(['CLOSE', 'small']);
  assert.equal(await req(conns[11], 'after-close', heavy('late-')), null);

  // another client is served as usual
  const victim = await Client.open(relay.url);
  const a = new Author();
  const ev = a.sign({ content: 'still here' });
  assert.deepEqual(await victim.publish(ev), { ok: true, message: '' });
  assert.deepEqual((await victim.query({ ids: [ev.id] })).events.map((e) => e.id), [ev.id]);
  for (const c of [...conns, victim]) c.close();
  assert.ok(PER_REQ > HEAVY);
});
