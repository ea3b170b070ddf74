// NIP-77 served by the real relay process: an independent initiator (nostr-tools' nip77 port of
// the reference) reconciles exactly against it over a WebSocket, on both query paths (worker
// threads and main thread); every limit answers NEG-ERR with a NIP-01 prefix and the connection
// keeps working; protected kinds stay hidden from readers who may not see them; NIP-11 lists 77
// unless negentropy is disabled.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startRelayProcess, startRelayProcesses, type RelayProcess } from '../helpers/relay-process.js';
import { Author, Client } from '../helpers/client.js';
import type { NostrEvent } from '../../src/nostr/event.js';
import { NtNegentropy, NtStorage } from './nostr-tools-nip77.js';
import { idOf, setDifference, sorted, type TestItem } from './helpers.js';

const BASE = 1_700_000_000;
const isNeg = (sub: string) => (m: unknown[]) => (m[0] === 'NEG-MSG' || m[0] === 'NEG-ERR') && m[1] === sub;

/** Runs a whole reconciliation as the initiator over the connection; throws on NEG-ERR. */
async function reconcile(c: Client, sub: string, filter: object, mine: TestItem[], frame = 60_000): Promise<{ have: string[]; need: string[]; answers: string[] }> {
  const st = new NtStorage();
  for (const it of mine) st.insert(it.timestamp, it.id);
  st.seal();
  const neg = new NtNegentropy(st, frame);
  const have: string[] = [];
  const need: string[] = [];
  const answers: string[] = [];
  c.send(['NEG-OPEN', sub, filter, neg.initiate()]);
  for (;;) {
    const m = await c.next(isNeg(sub), 10_000, `NEG-MSG ${sub}`);
    if (m[0] === 'NEG-ERR') throw new Error(`NEG-ERR ${String(m[2])}`);
    answers.push(m[2] as string);
    const next = neg.reconcile(m[2] as string, (id) => have.push(id), (id) => need.push(id));
    if (next === null) break;
    c.send(['NEG-MSG', sub, next]);
  }
  c.send(['NEG-CLOSE', sub]);
  return { have: [...new Set(have)], need: [...new Set(need)], answers };
}

async function negErr(c: Client, sub: string, send: unknown[]): Promise<unknown[]> {
  c.send(send);
  const m = await c.next(isNeg(sub), 10_000, `answer to ${sub}`);
  assert.equal(m[0], 'NEG-ERR', `expected NEG-ERR, got ${JSON.stringify(m).slice(0, 100)}`);
  return m;
}

const items = (evs: NostrEvent[]): TestItem[] => evs.map((e) => ({ timestamp: e.created_at, id: e.id }));

async function publishAll(c: Client, evs: NostrEvent[]): Promise<void> {
  for (const e of evs) assert.equal((await c.publish(e)).ok, true);
}

async function negMetrics(r: RelayProcess): Promise<{ sessions: number; records: number }> {
  const text = await (await fetch(`${r.httpUrl}/metrics`)).text();
  const value = (name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1]);
  return { sessions: value('orbweaver_negentropy_sessions'), records: value('orbweaver_negentropy_records') };
}

async function nip11(r: RelayProcess): Promise<{ supported_nips: number[] }> {
  const res = await fetch(r.httpUrl, { headers: { Accept: 'application/nostr+json' } });
  return (await res.json()) as { supported_nips: number[] };
}

for (const threads of ['2', '0']) {
  describe(`negentropy served (queryThreads ${threads})`, () => {
    let relay: RelayProcess;
    let c: Client;
    const alice = new Author();
    const bob = new Author();
    const evs: NostrEvent[] = [];
    before(async () => {
      relay = await startRelayProcess({ env: { ORBWEAVER_QUERY_THREADS: threads } });
      c = await Client.open(relay.url);
      for (let i = 0; i < 150; i++) {
        // 60 events share one second; the rest spread over ~90 seconds
        const who = i % 3 === 0 ? bob : alice;
        evs.push(who.sign({ kind: i % 5 === 0 ? 7 : 1, created_at: i < 60 ? BASE : BASE + i, content: `e${i}` }));
      }
      await publishAll(c, evs);
    });
    after(async () => {
      c?.close();
      await relay?.cleanup();
    });

    test('NIP-11 lists 77', async () => {
      assert.ok((await nip11(relay)).supported_nips.includes(77));
    });

    test('an independent initiator learns exactly what it has and lacks, for several filters', async () => {
      // ours: half of the relay's events plus 40 the relay does not have (some in the crowded second)
      const extra: TestItem[] = Array.from({ length: 40 }, (_, i) => ({ timestamp: i < 20 ? BASE : BASE + 500 + i, id: idOf(`extra${i}`) }));
      const cases: Array<[object, NostrEvent[]]> = [
        [{}, evs],
        [{ kinds: [1] }, evs.filter((e) => e.kind === 1)],
        [{ authors: [bob.pk] }, evs.filter((e) => e.pubkey === bob.pk)],
        [{ since: BASE, until: BASE }, evs.filter((e) => e.created_at === BASE)],
      ];
      for (const [i, [filter, remote]] of cases.entries()) {
        const mine = [...items(remote.filter((_, k) => k % 2 === 0)), ...extra];
        const r = await reconcile(c, `s${i}`, filter, mine);
        assert.deepEqual({ have: sorted(r.have), need: sorted(r.need) }, setDifference(mine, items(remote)), JSON.stringify(filter));
      }
      // identical sets: one round trip, nothing to do
      const same = await reconcile(c, 'same', {}, items(evs));
      assert.deepEqual([same.have, same.need, same.answers.length], [[], [], 1]);
      // a filter as a one-element list (strfry's sync sends --filter '[...]' as given)
      const listed = await reconcile(c, 'listed', [{ kinds: [7] }], []);
      assert.deepEqual(sorted(listed.need), sorted(evs.filter((e) => e.kind === 7).map((e) => e.id)));
    });

    test('a newer protocol version is answered with the version we speak', async () => {
      c.send(['NEG-OPEN', 'v2', {}, '62aabb']);
      const m = await c.next(isNeg('v2'));
      assert.deepEqual(m, ['NEG-MSG', 'v2', '61']);
      c.send(['NEG-CLOSE', 'v2']);
    });
  });
}

describe('negentropy limits and refusals', () => {
  let relay: RelayProcess;
  let c: Client;
  const a = new Author();
  const evs: NostrEvent[] = [];
  before(async () => {
    relay = await startRelayProcess({
      env: {
        ORBWEAVER_NEGENTROPY_MAX_RECORDS: '200',
        ORBWEAVER_NEGENTROPY_MAX_TOTAL_RECORDS: '250',
        ORBWEAVER_NEGENTROPY_MAX_SESSIONS: '2',
        ORBWEAVER_NEGENTROPY_IDLE_TIMEOUT: '1s',
        ORBWEAVER_NEGENTROPY_FRAME_SIZE_LIMIT: '4096',
      },
    });
    c = await Client.open(relay.url);
    // 150 of kind 1 (more ids than one 4096-byte frame holds), 110 of kind 7
    for (let i = 0; i < 260; i++) evs.push(a.sign({ kind: i < 150 ? 1 : 7, created_at: BASE + (i % 100), content: `l${i}` }));
    await publishAll(c, evs);
  });
  after(async () => {
    c?.close();
    await relay?.cleanup();
  });

  test('more records than maxRecords: NEG-ERR blocked: with the maximum', async () => {
    const st = new NtStorage();
    st.seal();
    const m = await negErr(c, 'big', ['NEG-OPEN', 'big', {}, new NtNegentropy(st).initiate()]);
    assert.match(m[2] as string, /^blocked: .*more than 200 events/);
    assert.equal(m[3], 200);
  });

  test('frames stay within frameSizeLimit and the result is exact', async () => {
    const remote = evs.filter((e) => e.kind === 1);
    const mine = Array.from({ length: 3000 }, (_, i) => ({ timestamp: BASE + (i % 120), id: idOf(`f${i}`) }));
    const r = await reconcile(c, 'frames', { kinds: [1] }, mine, 4096);
    assert.deepEqual({ have: sorted(r.have), need: sorted(r.need) }, setDifference(mine, items(remote)));
    assert.ok(r.answers.length > 1, 'the answer came in several frames');
    for (const hex of r.answers) assert.ok(hex.length / 2 <= 4096, `frame of ${hex.length / 2} bytes`);
  });

  test('sessions per connection, records held by all sessions, idle sessions', async () => {
    const empty = () => {
      const st = new NtStorage();
      st.seal();
      return new NtNegentropy(st).initiate();
    };
    const open = async (sub: string, filter: object) => {
      c.send(['NEG-OPEN', sub, filter, empty()]);
      return c.next(isNeg(sub), 10_000, sub);
    };
    assert.equal((await open('k1', { kinds: [1] }))[0], 'NEG-MSG'); // 150 records held
    const t = await open('k7', { kinds: [7] }); // 110 more would pass maxTotalRecords (250)
    assert.equal(t[0], 'NEG-ERR');
    assert.match(t[2] as string, /^rate-limited: /);
    assert.equal((await open('k1b', { kinds: [1], limit: 10 }))[0], 'NEG-MSG'); // 10 more: fine
    const third = await open('k3', { kinds: [1], limit: 1 });
    assert.equal(third[0], 'NEG-ERR');
    assert.match(third[2] as string, /^blocked: too many open negentropy sessions/);
    c.send(['NEG-CLOSE', 'k1b']);
    assert.equal((await open('k3b', { kinds: [1], limit: 1 }))[0], 'NEG-MSG', 'a closed session frees its place');
    assert.deepEqual(await negMetrics(relay), { sessions: 2, records: 151 });
    // both open sessions go idle: closed after idleTimeout
    const idle = await c.next((m) => m[0] === 'NEG-ERR' && m[1] === 'k1', 5000, 'idle NEG-ERR');
    assert.match(idle[2] as string, /^closed: /);
    await c.next((m) => m[0] === 'NEG-ERR' && m[1] === 'k3b', 5000, 'idle NEG-ERR');
    c.send(['NEG-MSG', 'k1', '6100000200']);
    assert.match((await c.next(isNeg('k1')))[2] as string, /^closed: /, 'an idle-closed session is gone');
    assert.equal((await open('k7b', { kinds: [7] }))[0], 'NEG-MSG', 'records of closed sessions are released');
    c.send(['NEG-CLOSE', 'k7b']);
    await c.query({ limit: 1 }); // NEG-CLOSE has no answer: a REQ round trip orders it
    assert.deepEqual(await negMetrics(relay), { sessions: 0, records: 0 });
  });

  test('malformed NEG messages get NEG-ERR invalid:/closed:, and the connection keeps working', async () => {
    const cases: Array<[string, unknown[], RegExp]> = [
      ['h1', ['NEG-OPEN', 'h1', {}, 'zz'], /^invalid: .*hex/],
      ['h2', ['NEG-OPEN', 'h2', { kinds: [1], limit: 5 }, '6101'], /^invalid: negentropy message/],
      ['h3', ['NEG-OPEN', 'h3', {}], /^invalid: NEG-OPEN takes 3 elements/],
      ['h4', ['NEG-OPEN', 'h4', { kinds: 'x' }, '6100000200'], /^invalid: kinds/],
      ['h5', ['NEG-OPEN', 'h5', {}, 42], /^invalid: NEG-OPEN needs a hex/],
      ['h6', ['NEG-MSG', 'h6', '6100000200'], /^closed: no open negentropy session/],
      ['h7', ['NEG-OPEN', 'h7', [{}, { kinds: 'x' }], '6100000200'], /^invalid: /],
    ];
    for (const [sub, msg, re] of cases) {
      const m = await negErr(c, sub, msg);
      assert.match(m[2] as string, re, sub);
    }
    // a session whose NEG-MSG is garbage is dropped
    c.send(['NEG-OPEN', 'g', { kinds: [1], limit: 5 }, '6100000200']);
    assert.equal((await c.next(isNeg('g')))[0], 'NEG-MSG');
    assert.match((await negErr(c, 'g', ['NEG-MSG', 'g', '61ff']))[2] as string, /^invalid: /);
    assert.match((await negErr(c, 'g', ['NEG-MSG', 'g', '6100000200']))[2] as string, /^closed: /);
    const q = await c.query({ kinds: [1], limit: 3 });
    assert.equal(q.events.length, 3, 'REQ still answered on the same connection');
  });
});

describe('negentropy and protected kinds (DMs), and turned off', () => {
  let relay: RelayProcess;
  let off: RelayProcess;
  const alice = new Author();
  const bob = new Author();
  before(async () => {
    [relay, off] = await startRelayProcesses({}, { env: { ORBWEAVER_NEGENTROPY_ENABLED: 'false' } });
  });
  after(async () => {
    await relay?.cleanup();
    await off?.cleanup();
  });

  test('a DM is offered only to its author or recipient, as with REQ', async () => {
    const c = await Client.open(relay.url);
    const note = alice.sign({ kind: 1, content: 'public' });
    const dm = alice.sign({ kind: 4, tags: [['p', bob.pk]], content: 'secret' });
    await publishAll(c, [note, dm]);
    assert.deepEqual((await reconcile(c, 'anon', {}, [])).need, [note.id]);
    const refused = await negErr(c, 'dms', ['NEG-OPEN', 'dms', { kinds: [4] }, '6100000200']);
    assert.match(refused[2] as string, /^auth-required: /);
    assert.equal((await c.authenticate(bob, relay.url)).ok, true);
    assert.deepEqual(sorted((await reconcile(c, 'bob', {}, [])).need), sorted([note.id, dm.id]));
    c.close();
  });

  test('negentropy.enabled=false: NEG-OPEN is refused with blocked:, NIP-11 does not list 77', async () => {
    assert.equal((await nip11(off)).supported_nips.includes(77), false);
    const c = await Client.open(off.url);
    assert.match((await negErr(c, 'x', ['NEG-OPEN', 'x', {}, '6100000200']))[2] as string, /^blocked: .*disabled/);
    c.close();
  });
});

