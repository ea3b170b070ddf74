// Attacks on NIP-77 (issue 29, item 2). A NEG-OPEN with 20 `{}` filters used to union its filters'
// records on the main thread after collecting them all (filters not de-duplicated, caps checked
// after); a 37-byte NEG-MSG asking for every id was answered at once, every time, outside the
// per-address budgets; and one address could hold all of negentropy.maxTotalRecords. Now the union
// is merged in the query worker, capped while collecting; NEG-MSG answers wait for a query slot and
// are charged to read.resultBytesPerIp like REQ results; each address gets negentropy.maxRecordsPerIp.
// The attacker connects from 127.0.0.2 (and .4), the other clients from 127.0.0.1 and 127.0.0.3.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startRelayProcess, type RelayProcess } from '../helpers/relay-process.js';
import { Client, now } from '../helpers/client.js';
import { accessFigures, signedEvents } from './helpers.js';
import { loadPaced } from '../../bench/lib/sockets.js';
import { NtNegentropy, NtStorage } from '../negentropy/nostr-tools-nip77.js';
import type { NostrEvent } from '../../src/nostr/event.js';

const N = 2000;
let relay: RelayProcess;
let evs: NostrEvent[];
before(async () => {
  relay = await startRelayProcess({
    env: {
      // small budgets so a test of a few thousand events reaches them: 100 KB/s of results per
      // address (bursts of 200 KB), an address may hold 2500 records, the relay 5000
      ORBWEAVER_READ_RESULT_BYTES_PER_IP: '100000',
      ORBWEAVER_NEGENTROPY_MAX_RECORDS_PER_IP: '2500',
      ORBWEAVER_NEGENTROPY_MAX_TOTAL_RECORDS: '5000',
    },
  });
  const t = now();
  evs = await signedEvents('neg-work', N, (i) => ({ kind: 1000 + (i % 20), created_at: t - i, tags: [], content: `n${i}` }), 20);
  assert.equal((await loadPaced(relay.url, evs)).stored, N);
});
after(async () => { await relay.cleanup(); });

const empty = (): string => {
  const st = new NtStorage();
  st.seal();
  return new NtNegentropy(st).initiate();
};
const isNeg = (sub: string) => (m: unknown[]) => (m[0] === 'NEG-MSG' || m[0] === 'NEG-ERR') && m[1] === sub;

/** Runs a whole reconciliation from an empty set; returns the ids the relay has. */
async function syncAll(c: Client, sub: string, filter: unknown): Promise<string[] | string> {
  const st = new NtStorage();
  st.seal();
  const neg = new NtNegentropy(st, 60_000);
  c.send(['NEG-OPEN', sub, filter, neg.initiate()]);
  const need: string[] = [];
  for (;;) {
    const m = await c.next(isNeg(sub), 30_000, `NEG-MSG ${sub}`);
    if (m[0] === 'NEG-ERR') return String(m[2]);
    const next = neg.reconcile(m[2] as string, () => {}, (id) => need.push(id));
    if (next === null) break;
    c.send(['NEG-MSG', sub, next]);
  }
  c.send(['NEG-CLOSE', sub]);
  return need;
}

test('a 20-filter NEG-OPEN is answered (duplicates read once) while another connection\'s REQ is answered first', async () => {
  const attacker = await Client.open(relay.url, { localAddress: '127.0.0.2' });
  const other = await Client.open(relay.url, { localAddress: '127.0.0.1' });
  // 20 filters (the most a request may have): 16 kinds of 100 events each, then 4 copies of a
  // filter matching all 2,000 events. Their union is 2,000 records, within the address's 2,500;
  // counted filter by filter it is 9,600, past both caps: a union that did not de-duplicate while
  // collecting would refuse this with NEG-ERR.
  const all = { kinds: Array.from({ length: 20 }, (_, k) => 1000 + k) };
  const filters = [...Array.from({ length: 16 }, (_, k) => ({ kinds: [1000 + k] })), all, all, all, all];
  const order: string[] = [];
  const synced = syncAll(attacker, 'many', filters).then((r) => { order.push('neg'); return r; });
  other.send(['REQ', 'q', { ids: [evs[0].id] }]);
  await other.next((m) => m[0] === 'EOSE' && m[1] === 'q', 10_000, 'EOSE');
  order.push('req');
  const got = await synced;
  assert.ok(Array.isArray(got), `NEG-ERR ${String(got)}`);
  assert.equal(got.length, N, 'each record once');
  assert.deepEqual(new Set(got), new Set(evs.map((e) => e.id)));
  assert.equal(order[0], 'req', 'the other connection was answered before the union was done');
  attacker.close();
  other.close();
});

test('NEG-MSG answers to one address are paced by its result bytes; other addresses are served and can sync meanwhile', async () => {
  // two sessions of 1000 records ask, again and again, for every id (an empty id list over the
  // whole range): 64 KB of hex per answer; 2 x 4 asks = 512 KB, 5 s of this address's budget
  const attacker = await Client.open(relay.url, { localAddress: '127.0.0.2' });
  const ask = empty();
  const half = { kinds: [1000, 1001, 1002, 1003, 1004, 1005, 1006, 1007, 1008, 1009] };
  for (let s = 0; s < 2; s++) attacker.send(['NEG-OPEN', `a${s}`, half, ask]);
  for (let s = 0; s < 2; s++) assert.equal((await attacker.next(isNeg(`a${s}`), 10_000, 'NEG-OPEN answer'))[0], 'NEG-MSG');
  let answers = 0;
  attacker.ws.on('message', (d: Buffer) => { if (d.subarray(0, 12).toString().startsWith('["NEG-MSG"')) answers++; });
  for (let k = 0; k < 4; k++) for (let s = 0; s < 2; s++) attacker.send(['NEG-MSG', `a${s}`, ask]);
  // the address's answers wait in its own queue ...
  let waiting = 0;
  for (let i = 0; i < 200 && waiting === 0; i++) {
    waiting = (await accessFigures(relay)).queriesWaiting;
    if (waiting === 0) await new Promise((r) => setTimeout(r, 20));
  }
  assert.ok(waiting > 0, 'NEG-MSGs of the flooding address waited for its budget');
  // ... while another address reads, and a third syncs the whole set
  const reader = await Client.open(relay.url, { localAddress: '127.0.0.1' });
  const q = await reader.query({ ids: [evs[5].id] });
  assert.equal(q.events.length, 1);
  const syncer = await Client.open(relay.url, { localAddress: '127.0.0.3' });
  const got = await syncAll(syncer, 's', {});
  assert.ok(Array.isArray(got), `NEG-ERR ${String(got)}`);
  assert.equal(got.length, N);
  assert.ok(answers < 8, `the flooding address got ${answers} of its 8 answers by then`);
  attacker.close();
  reader.close();
  syncer.close();
});

test('one address cannot hold the relay-wide record cap: it is refused past its share, another address still syncs', async () => {
  const attacker = await Client.open(relay.url, { localAddress: '127.0.0.4' });
  const refusals: string[] = [];
  // sessions of 1000 records each (kinds 1-10): the address may hold 2500
  for (let s = 0; s < 4; s++) {
    attacker.send(['NEG-OPEN', `h${s}`, { kinds: [1000, 1001, 1002, 1003, 1004, 1005, 1006, 1007, 1008, 1009] }, empty()]);
    const m = await attacker.next(isNeg(`h${s}`), 10_000, 'NEG-OPEN answer');
    if (m[0] === 'NEG-ERR') refusals.push(String(m[2]));
  }
  assert.equal(refusals.length, 2);
  assert.match(refusals[0], /^rate-limited: your IP address holds 2000 records/);
  const other = await Client.open(relay.url, { localAddress: '127.0.0.3' });
  const got = await syncAll(other, 'all', {});
  assert.ok(Array.isArray(got), `NEG-ERR ${String(got)}`);
  assert.equal(got.length, N);
  attacker.close();
  other.close();
});
