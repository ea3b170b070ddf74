// NIP-45 counts from the maintained counters (store/counters.ts) against a brute-force oracle: the
// count of the events the store kept that match, and the HLL registers computed from their pubkeys
// by the NIP's own words (written out again here, not with src/nostr/nip45.ts), through follows,
// unfollows (replaced kind 3), reactions, deletions and expirations.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { NostrEvent } from '../../src/nostr/event.js';
import type { Filter } from '../../src/nostr/filter.js';
import { expirationOf } from '../../src/nostr/kinds.js';
import { hllAdd, hllAddHex, hllEstimate, hllOffset, hllPointCode, HLL_REGISTERS } from '../../src/nostr/nip45.js';
import { CounterUndo } from '../../src/store/counters.js';
import { openStore } from '../../src/store/index.js';
import { ev, hex, oracleRegisters, put, tmpDir, withStore } from './helpers.js';
import { rmSync } from 'node:fs';
import { prng as rng } from '../../bench/lib/events.js';


const matches = (f: Filter, e: NostrEvent, now: number): boolean => {
  const x = expirationOf(e);
  if (x !== null && x <= now) return false;
  if (f.kinds && !f.kinds.includes(e.kind)) return false;
  for (const [name, values] of f.tags ?? []) if (!e.tags.some((t) => t[0] === name && values.includes(t[1]!))) return false;
  return true;
};

test('NIP-45 counters: counts and HLL registers equal a brute-force scan through follows, unfollows, reactions, deletions and expiry', () =>
  withStore(async (s, dir) => {
    const r = rng(Number(process.env.STORE_SEED ?? 45));
    const int = (n: number): number => Math.floor(r() * n);
    const NOW = Math.floor(Date.now() / 1000);
    const people = Array.from({ length: 60 }, () => hex());
    const popular = people.slice(0, 6);
    const live = new Map<string, NostrEvent>();
    const notes: NostrEvent[] = [];
    const apply = async (e: NostrEvent): Promise<void> => {
      const res = await put(s, e);
      if (res.status === 'stored') live.set(e.id, e);
      for (const id of res.removed ?? []) live.delete(id);
    };
    let t = 1_700_000_000;
    for (let round = 0; round < 4; round++) {
      // everyone (re)publishes a follow list: popular accounts more often, some unfollowed each round
      for (const pk of people) {
        const follows = new Set<string>();
        for (let i = 0, n = int(25); i < n; i++) follows.add(int(3) ? popular[int(popular.length)]! : people[int(people.length)]!);
        await apply(ev({ pubkey: pk, kind: 3, created_at: t++, tags: [...follows].map((p) => ['p', p]) }));
      }
      for (let i = 0; i < 40; i++) {
        const n = ev({ pubkey: people[int(people.length)], kind: 1, created_at: t++, tags: notes.length && int(2) ? [['e', notes[int(notes.length)]!.id], ['q', notes[int(notes.length)]!.id]] : [] });
        notes.push(n);
        await apply(n);
      }
      // reactions, sometimes two by the same author, some expiring before "now", some later deleted
      for (let i = 0; i < 150; i++) {
        const target = notes[int(Math.min(notes.length, 8))]!;
        const tags = [['e', target.id], ['p', target.pubkey]];
        if (int(8) === 0) tags.push(['expiration', String(int(2) ? NOW - 10 : NOW + 100_000)]);
        const author = people[int(20)]!;
        const re = ev({ pubkey: author, kind: int(5) ? 7 : 6, created_at: t++, tags });
        await apply(re);
        if (int(10) === 0) await apply(ev({ pubkey: author, kind: 5, created_at: t++, tags: [['e', re.id]] }));
      }
    }
    const filters: Filter[] = [];
    for (const p of people) filters.push({ kinds: [3], tags: [['p', [p]]] });
    for (const n of notes.slice(0, 12)) {
      filters.push({ kinds: [7], tags: [['e', [n.id]]] }, { kinds: [6, 7], tags: [['e', [n.id]]] }, { kinds: [1], tags: [['e', [n.id]]] }, { kinds: [1], tags: [['q', [n.id]]] });
    }
    // a read-only handle, as a query thread has: it returns recomputed registers instead of storing them
    const ro = await openStore({ dir, readOnly: true });
    const check = async (when: string, store = ro): Promise<number> => {
      let stale = 0;
      for (const f of filters) {
        const want = [...live.values()].filter((e) => matches(f, e, NOW));
        const got = await store.countResult([f]);
        const ctx = `${when} ${JSON.stringify(f)}`;
        assert.equal(got.count, want.length, `count ${ctx}`);
        assert.equal(await s.count([f]), want.length, `count() ${ctx}`);
        assert.ok(got.hll, `hll present ${ctx}`);
        assert.equal(Buffer.from(got.hll).toString('hex'), oracleRegisters(f, want), `registers ${ctx}`);
        if (got.refresh) {
          stale++;
          await s.refreshHll(got.refresh); // what the query pool does with them
        }
      }
      return stale;
    };
    assert.ok((await check('after the writes')) > 0, 'some registers were stale (recomputed)');
    // The read-only handle (like a query thread's) renews its LMDB snapshot on a timer tick, and
    // nothing in check() waits for one: without this, a fast enough writer (larger transactions)
    // let it read the last counters from before their refresh about one run in five.
    await new Promise((resolve) => setTimeout(resolve, 0));
    assert.equal(await check('after refreshes'), 0, 'recomputed registers were stored');
    assert.ok((await check('the writer\'s own handle', s)) === 0);

    // every popular account unfollowed by everyone, then followed again by a few
    for (const pk of people) await apply(ev({ pubkey: pk, kind: 3, created_at: t++, tags: [['p', people[int(people.length)]!]] }));
    for (const pk of people.slice(0, 5)) await apply(ev({ pubkey: pk, kind: 3, created_at: t++, tags: popular.map((p) => ['p', p]) }));
    // the writer's handle stores what it recomputes by itself
    await check('after mass unfollows, writer', s);
    await apply(ev({ kind: 1, created_at: t++ }));
    assert.equal(await check('after mass unfollows'), 0);
    for (const pk of people) await apply(ev({ pubkey: pk, kind: 3, created_at: t++, tags: [['p', people[int(people.length)]!]] }));
    assert.ok((await check('after more unfollows')) > 0);
    await ro.close();
  }));

test('NIP-45 counters: a filter the counters do not answer is counted by scanning, without hll', () =>
  withStore(async (s) => {
    const target = hex();
    const a = ev({ kind: 3, tags: [['p', target]], created_at: 1000 });
    const b = ev({ kind: 3, tags: [['p', target]], created_at: 2000 });
    const c = ev({ kind: 1, tags: [['p', target]], created_at: 3000 });
    for (const e of [a, b, c]) await put(s, e);
    const hll = async (f: Filter) => (await s.countResult([f])).hll;
    assert.ok(await hll({ kinds: [3], tags: [['p', [target]]] }));
    const cases: Array<[Filter, number]> = [
      [{ kinds: [3], tags: [['p', [target]]], since: 1500 }, 1],
      [{ kinds: [3, 1], tags: [['p', [target]]] }, 3],
      [{ tags: [['p', [target]]] }, 3],
      [{ kinds: [3], tags: [['p', [target, hex()]]] }, 2],
      [{ kinds: [3], authors: [a.pubkey], tags: [['p', [target]]] }, 1],
    ];
    for (const [f, n] of cases) {
      const r = await s.countResult([f]);
      assert.equal(r.count, n, JSON.stringify(f));
      assert.equal(r.hll, undefined, `no hll for ${JSON.stringify(f)}`);
    }
    // two filters ORed: counted once each
    assert.equal((await s.countResult([{ kinds: [3], tags: [['p', [target]]] }, { kinds: [1] }])).count, 3);
  }));

test('NIP-45 offset and estimate', () => {
  const id = 'ab'.repeat(16) + 'c' + 'd'.repeat(31);
  assert.equal(hllOffset({ tags: [['e', [id]]] }), 8 + 0xc);
  assert.equal(hllOffset({ tags: [['a', [`30023:${id}:slug`]]] }), 8 + 0xc, 'an address uses its pubkey');
  assert.equal(hllOffset({ kinds: [1] }), null);
  const o = hllOffset({ tags: [['t', ['nostr']]] })!;
  assert.ok(o >= 8 && o <= 23, 'anything else: from its sha256');
  // the estimate of 3,000 distinct random pubkeys is within 4 standard errors (6.5% each)
  const r = rng(7);
  const events = Array.from({ length: 3000 }, () => ({ pubkey: Array.from({ length: 64 }, () => '0123456789abcdef'[Math.floor(r() * 16)]).join('') }) as NostrEvent);
  const regs = Buffer.from(oracleRegisters({ tags: [['p', [id]]] }, events), 'hex');
  const est = hllEstimate(regs);
  assert.ok(Math.abs(est - 3000) / 3000 < 0.26, `estimate ${est} of 3000`);
  assert.equal(hllEstimate(Buffer.from(oracleRegisters({ tags: [['p', [id]]] }, events.slice(0, 20)), 'hex')), 20, 'small sets: linear counting is exact enough');
});

test('NIP-45 registers: a pubkey added as hex counts as its bytes do, as the NIP reads them', () => {
  const r = rng(11);
  const digit = () => '0123456789abcdef'[Math.floor(r() * 16)]!;
  const id = 'ab'.repeat(16) + '5' + 'd'.repeat(31); // offset 8 + 5
  // random pubkeys, and ones with long runs of zero bytes after every possible register byte
  // (leading zeros up to the whole 56 bits, the register's largest value)
  const pubkeys = Array.from({ length: 400 }, () => Array.from({ length: 64 }, digit).join(''));
  for (let zeros = 0; zeros <= 15; zeros++) {
    const pk = Array.from({ length: 64 }, digit);
    for (let j = 0; j < zeros; j++) pk[2 * 14 + j] = '0'; // bytes 14.. follow the register byte 13
    pubkeys.push(pk.join(''));
  }
  pubkeys.push('ff'.repeat(13) + '7f' + '00'.repeat(18)); // all 56 bits zero
  const offset = hllOffset({ tags: [['p', [id]]] })!;
  const fromHex = new Uint8Array(HLL_REGISTERS);
  const fromBytes = new Uint8Array(HLL_REGISTERS);
  for (const pk of pubkeys) {
    hllAddHex(fromHex, pk, offset);
    hllAdd(fromBytes, Buffer.from(pk, 'hex'), 0, offset);
  }
  const oracle = oracleRegisters({ tags: [['p', [id]]] }, pubkeys.map((pubkey) => ({ pubkey })));
  assert.equal(Buffer.from(fromHex).toString('hex'), oracle);
  assert.equal(Buffer.from(fromBytes).toString('hex'), oracle);
  assert.equal(fromHex[0x7f], 57, 'no one bit in the 56: 56 zeros + 1');
  // a follow's point as CounterBatch.noteFollows logs it (register << 8 | value), at this offset
  const fromCodes = new Uint8Array(HLL_REGISTERS);
  for (const pk of pubkeys) {
    const code = hllPointCode(Buffer.from(pk, 'hex'), 0, offset);
    if ((code & 0xff) > fromCodes[code >> 8]!) fromCodes[code >> 8] = code & 0xff;
  }
  assert.equal(Buffer.from(fromCodes).toString('hex'), oracle);
});

test('CounterUndo gives back each key and previous value, newest first, also from a reused buffer that only says its size in length', () => {
  const undo = new CounterUndo();
  // what getBinaryFast hands out: one large buffer whose own `length` says the value's size
  const reused = Buffer.alloc(100_000, 0xee); // larger than the undo's buffer
  Buffer.from('01020304', 'hex').copy(reused);
  Object.defineProperty(reused, 'length', { value: 4, writable: true });
  const writes: Array<[Buffer, Buffer | undefined]> = [
    [Buffer.from('k1'), reused],
    [Buffer.from('key-two'), undefined],
    [Buffer.from('k3'), Buffer.alloc(5000, 7)], // past the first 4 KB: the buffer grows
  ];
  for (const [k, v] of writes) undo.add(k, v);
  const back: Array<[string, string | undefined]> = [];
  undo.back((k, v) => back.push([k.toString(), v?.toString('hex')]));
  assert.deepEqual(back, [
    ['k3', Buffer.alloc(5000, 7).toString('hex')],
    ['key-two', undefined],
    ['k1', '01020304'],
  ]);
  undo.clear();
  let n = 0;
  undo.back(() => n++);
  assert.equal(n, 0);
});

test('schema 2 and 3 migrations: the tag index is rebuilt with kinds, the counters from the stored events, and the follow lists move to the graph', async () => {
  const dir = tmpDir();
  try {
    const target = hex();
    const events = Array.from({ length: 50 }, (_, i) =>
      ev({ kind: [1, 3, 7][i % 3], created_at: 1000 + i, tags: [['p', i % 2 ? target : hex()], ['t', `x${i % 4}`]] }),
    );
    let s = await openStore({ dir, mapSize: 256 * 1024 ** 2 });
    for (const e of events) await put(s, e);
    const filters: Filter[][] = [[{ tags: [['t', ['x1']]] }], [{ kinds: [3], tags: [['p', [target]]] }], [{ kinds: [1, 7], tags: [['p', [target]]], limit: 5 }]];
    const before = await Promise.all(filters.map((f) => s.query(f, { defaultLimit: 500, maxLimit: 500 })));
    const countBefore = await s.countResult([{ kinds: [3], tags: [['p', [target]]] }]);
    // back to the version 1 layout: a tag index without kinds, no counters
    const env = s.env;
    env.transactionSync(() => {
      env.openDB({ name: 'ev.tagkind', keyEncoding: 'binary', encoding: 'binary' }).dropSync();
      env.openDB({ name: 'ev.tagcount', keyEncoding: 'binary', encoding: 'binary' }).dropSync();
      env.openDB<Buffer, Buffer>({ name: 'ev.tag', keyEncoding: 'binary', encoding: 'binary' }).putSync(Buffer.from('old'), Buffer.alloc(0));
      env.openDB<unknown, string>({ name: 'ev.meta' }).putSync('schemaVersion', 1);
    });
    await s.close();
    s = await openStore({ dir, mapSize: 256 * 1024 ** 2 });
    try {
      assert.deepEqual(await Promise.all(filters.map((f) => s.query(f, { defaultLimit: 500, maxLimit: 500 }))), before);
      assert.deepEqual(await s.countResult([{ kinds: [3], tags: [['p', [target]]] }]), countBefore);
      // 50 events x 2 tags, less the 17 follow lists' p tags, which the graph holds
      assert.equal(s.stats().indexes.tagkind, 100 - 17);
      assert.equal(s.stats().indexes.graph, 17);
      assert.equal(s.stats().indexes.graphtime, s.stats().indexes.graphcur, 'schema 5: every current list by time, with its author');
      assert.ok(![...s.env.getKeys({})].includes('ev.graphser'), 'schema 4\'s author-by-serial table is dropped');
      const old = s.env.openDB<Buffer, Buffer>({ name: 'ev.tag', keyEncoding: 'binary', encoding: 'binary' });
      assert.equal([...old.getKeys({})].length, 0, 'the old tag index is dropped');
    } finally {
      await s.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** A scan guard like the query threads': `budgetLeft` entries, one step of `every` per `aborted` read. */
function budgetGuard(maxSteps: number, every: number) {
  return {
    steps: 0,
    tripped: false,
    get aborted(): boolean {
      if (++this.steps > maxSteps) this.tripped = true;
      return this.tripped;
    },
    get budgetLeft(): number {
      return Math.max(0, maxSteps - this.steps) * every;
    },
  };
}

test('index-only counts past the read budget are estimated and marked approximate; exact within it', () =>
  withStore(
    async (s) => {
      const t0 = 1_700_000_000;
      const pending = [];
      for (let i = 0; i < 6000; i++) pending.push(put(s, ev({ kind: 1, created_at: t0 + i, tags: [['t', 'all']] })));
      await Promise.all(pending);
      for (const f of [{ kinds: [1] }, { tags: [['t', ['all']]] as Array<[string, string[]]> }, { tags: [['t', ['all']]] as Array<[string, string[]]>, kinds: [1] }]) {
        const exact = await s.countResult([f], { signal: budgetGuard(100, 100) });
        assert.deepEqual(exact, { count: 6000 }, `within the budget ${JSON.stringify(f)}`);
        const g = budgetGuard(42, 100); // ~4,000 entries left when the count starts
        const est = await s.countResult([f], { signal: g });
        assert.equal(est.approximate, true, JSON.stringify(f));
        assert.ok(Math.abs(est.count - 6000) < 60, `estimate ${est.count} of 6000 (evenly spread)`);
        assert.equal(g.tripped, false, 'an estimate is an answer, not a cut scan');
        const small = budgetGuard(5, 100); // 400 entries: too few to estimate from
        await s.countResult([f], { signal: small });
        assert.equal(small.tripped, true, 'refused like a scan past its budget');
      }
    },
    { queryYieldEvery: 100 },
  ));
