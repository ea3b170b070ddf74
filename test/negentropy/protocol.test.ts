// The negentropy protocol (src/nostr/negentropy*.ts): wire vectors, fingerprints, the exchange
// against a brute-force set difference, frame limits, byte-for-byte agreement with an independent
// implementation of protocol v1 (nostr-tools' nip77 port of the reference JS) and refusal of
// malformed messages.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { Negentropy, NegentropyError, NegentropyStorage } from '../../src/nostr/negentropy.js';
import { bytesToHex, hexToBytes, writeVarint } from '../../src/nostr/negentropy-storage.js';
import { idOf, randomSets, reconcileInMemory, setDifference, sorted, type TestItem } from './helpers.js';
import { NtNegentropy, NtStorage } from './nostr-tools-nip77.js';

const hex = (b: Uint8Array) => bytesToHex(b);

test('varints: base-128, most significant digit first, high bit on all but the last', () => {
  const enc = (n: number) => {
    const b = new Uint8Array(10);
    return hex(b.subarray(0, writeVarint(b, 0, n)));
  };
  assert.equal(enc(0), '00');
  assert.equal(enc(1), '01');
  assert.equal(enc(127), '7f');
  assert.equal(enc(128), '8100');
  assert.equal(enc(16383), 'ff7f');
  assert.equal(enc(16384), '818000');
  assert.equal(enc(1_677_970_535), '86a08f9867');
});

test('fingerprint: sha256 of the little-endian sum mod 2^256 and the varint count, first 16 bytes', () => {
  const fp = (ids: string[]) => hex(NegentropyStorage.fromItems(ids.map((id, i) => ({ timestamp: i, id }))).fingerprint(0, ids.length));
  const expect = (sum: Buffer, count: number) => createHash('sha256').update(Buffer.concat([sum, Buffer.from([count])])).digest('hex').slice(0, 32);
  assert.equal(fp([]), expect(Buffer.alloc(32), 0));
  // the empty set's fingerprint as strfry 1.1.1 prints it (`strfry negentropy list` on an empty tree)
  assert.equal(fp([]), '7f9c9e31ac8256ca2f258583df262dbc');
  // 0xff.. + 0x01 (little-endian) wraps to zero: the carry runs through all 32 bytes and out
  const ff = 'ff'.repeat(32);
  const one = '01' + '00'.repeat(31);
  assert.equal(fp([ff, one]), expect(Buffer.alloc(32), 2));
  // carries across limb boundaries: ffffffff00..00 + ffffffff00..01 = feffffff0100..0001
  const a = 'ffffffff' + '00'.repeat(28);
  const b = 'ffffffff' + '00'.repeat(27) + '01';
  const sum = Buffer.from('feffffff01' + '00'.repeat(26) + '01', 'hex');
  assert.equal(fp([a, b]), expect(sum, 2));
});

test('fingerprints of any range agree with adding every id (prefix sums, ragged ends)', () => {
  const items = Array.from({ length: 300 }, (_, i) => ({ timestamp: 1000 + (i >> 2), id: idOf(`fp${i}`) }));
  const s = NegentropyStorage.fromItems(items);
  const nt = new NtStorage();
  for (const it of items) nt.insert(it.timestamp, it.id);
  nt.seal();
  for (const [b, e] of [[0, 0], [0, 300], [1, 299], [31, 33], [32, 64], [5, 200], [64, 65], [100, 300], [299, 300]]) {
    assert.equal(hex(s.fingerprint(b, e)), hex(nt.fingerprint(b, e)), `range ${b}..${e}`);
  }
});

test('reference vectors (hoytech/negentropy test/protoversion.pl): answer to an empty id list, and a newer version', () => {
  const s = NegentropyStorage.fromItems([{ timestamp: 12345, id: 'ee'.repeat(32) }]);
  const resp = new Negentropy(s);
  // full range, empty IdList -> our full range as an IdList holding our one id
  assert.equal(hex(resp.reconcile(hexToBytes('6100000200'))), '6100000201' + 'ee'.repeat(32));
  // a message of a hypothetical version 2: the responder names the version it speaks
  assert.equal(hex(resp.reconcile(hexToBytes('62aabbccddeeff'))), '61');
  // the initiator does not downgrade silently
  const init = new Negentropy(s);
  init.initiate();
  assert.throws(() => init.reconcileAsInitiator(hexToBytes('62')), NegentropyError);
});

test('initial messages: one id list below 32 items, 16 fingerprinted buckets from 32 on', () => {
  const small = new Negentropy(NegentropyStorage.fromItems([{ timestamp: 10, id: 'aa'.repeat(32) }, { timestamp: 10, id: 'bb'.repeat(32) }]));
  // version, bound (infinity, no id), IdList, 2 ids in (timestamp, id) order
  assert.equal(hex(small.initiate()), '61' + '0000' + '02' + '02' + 'aa'.repeat(32) + 'bb'.repeat(32));
  assert.equal(hex(new Negentropy(NegentropyStorage.fromItems([])).initiate()), '6100000200');
  const items = Array.from({ length: 32 }, (_, i) => ({ timestamp: 100 + i, id: idOf(`b${i}`) }));
  const m = new Negentropy(NegentropyStorage.fromItems(items)).initiate();
  // 16 ranges of 2 items: bound = timestamp delta + 1, no id prefix (timestamps differ), mode 1, 16 bytes
  assert.equal(m.length, 1 + 15 * (1 + 1 + 1 + 16) + (1 + 1 + 1 + 16));
  assert.equal(m[1], 102 + 1); // first bound: the 3rd item's timestamp (102), encoded +1
  assert.equal(m[1 + 19], 2 + 1); // next: delta of 2 seconds
});

test('bounds inside one second carry the shortest separating id prefix', () => {
  // 32 items in one second whose ids differ only in their last byte: every bound needs 32 bytes
  const base = 'ab'.repeat(31);
  const items = Array.from({ length: 32 }, (_, i) => ({ timestamp: 5000, id: base + i.toString(16).padStart(2, '0') }));
  const m = new Negentropy(NegentropyStorage.fromItems(items)).initiate();
  // first bound: timestamp 5000 (+1), prefix length 32 = the whole id of item 2
  let at = 1;
  const readVar = () => {
    let n = 0;
    for (;;) {
      const b = m[at++];
      n = n * 128 + (b & 0x7f);
      if (!(b & 0x80)) return n;
    }
  };
  assert.equal(readVar(), 5001);
  assert.equal(readVar(), 32);
  assert.equal(hex(m.subarray(at, at + 32)), base + '02');
});

function checkExact(a: TestItem[], b: TestItem[], frameA = 0, frameB = 0): ReturnType<typeof reconcileInMemory> {
  const r = reconcileInMemory(a, b, frameA, frameB);
  const want = setDifference(a, b);
  assert.deepEqual(sorted([...new Set(r.have)]), want.have, 'have = ids only the initiator holds');
  assert.deepEqual(sorted([...new Set(r.need)]), want.need, 'need = ids only the responder holds');
  if (!frameA && !frameB) {
    // Without frame limits every id is reported once. With them an id can come twice (a range
    // answered in part is asked again), exactly as with the reference implementation: callers
    // de-duplicate, as strfry's sync does.
    assert.equal(new Set(r.have).size, r.have.length, 'no id reported twice (have)');
    assert.equal(new Set(r.need).size, r.need.length, 'no id reported twice (need)');
  }
  if (frameA) assert.ok(r.maxUp <= frameA, `initiator frames within ${frameA} (largest ${r.maxUp})`);
  if (frameB) assert.ok(r.maxDown <= frameB, `responder frames within ${frameB} (largest ${r.maxDown})`);
  return r;
}

test('empty sets, one empty side, identical sets, all different', () => {
  checkExact([], []);
  const [a] = randomSets(1, 3000, [1, 0, 0]);
  checkExact(a, []);
  checkExact([], a);
  const same = checkExact(a, a);
  assert.equal(same.rounds, 1, 'identical sets: one round trip');
  assert.ok(same.down < 100, 'identical sets: the answer is a few bytes');
  const [x, y] = randomSets(2, 3000, [1, 1, 0]);
  checkExact(x, y);
});

test('random sets against the brute-force set difference (sizes, overlaps, spreads)', () => {
  const cases: Array<[number, number, [number, number, number], number]> = [
    [3, 1, [1, 1, 1], 1], [4, 31, [1, 1, 1], 31], [5, 32, [1, 1, 30], 32], [6, 33, [1, 1, 30], 5],
    [7, 500, [1, 1, 98], 500], [8, 5000, [1, 0, 99], 5000], [9, 5000, [0, 1, 99], 100],
    [10, 20000, [1, 1, 98], 20000], [11, 2000, [50, 50, 0], 2000], [12, 4000, [2, 2, 7], 10],
  ];
  for (const [seed, n, w, spread] of cases) {
    const [a, b] = randomSets(seed, n, w, spread);
    checkExact(a, b);
    checkExact(b, a);
  }
});

test('one crowded second: 10,000 events at the same created_at', () => {
  const [a, b] = randomSets(21, 10_000, [1, 1, 98], 1);
  assert.equal(new Set([...a, ...b].map((x) => x.timestamp)).size, 1);
  checkExact(a, b);
  checkExact(a, b, 4096, 4096);
  const [c, d] = randomSets(22, 10_000, [0, 1, 0], 1); // all on one side
  checkExact(c, d);
});

test('ids that differ only in their last byte', () => {
  const prefix = '5a'.repeat(31);
  const mk = (bytes: number[], ts: (i: number) => number) => bytes.map((x) => ({ timestamp: ts(x), id: prefix + x.toString(16).padStart(2, '0') }));
  const all = Array.from({ length: 256 }, (_, i) => i);
  const even = all.filter((i) => i % 2 === 0);
  const odd3 = all.filter((i) => i % 3 !== 0);
  for (const ts of [() => 777, (i: number) => 700 + (i >> 4)]) {
    checkExact(mk(all, ts), mk(even, ts));
    checkExact(mk(even, ts), mk(odd3, ts));
    checkExact(mk(odd3, ts), mk(all, ts), 4096, 4096);
  }
});

test('frame size limits: every message fits, the result stays exact, more rounds', () => {
  const [a, b] = randomSets(31, 10_000, [1, 1, 8]);
  const free = checkExact(a, b);
  for (const [fa, fb] of [[4096, 4096], [4096, 0], [0, 4096], [60_000, 500_000], [5000, 70_000]] as const) {
    const r = checkExact(a, b, fa, fb);
    assert.ok(r.rounds >= free.rounds);
  }
  assert.throws(() => new Negentropy(NegentropyStorage.fromItems([]), 4095), NegentropyError);
});

test('a frame cut while splitting a range still reports the ids in that range', () => {
  // The responder holds runs of ids the initiator lacks in many buckets, so its answer to the
  // first message must be cut mid-way; the rest comes in later rounds.
  for (const seed of [41, 42, 43, 44]) {
    const [a, b] = randomSets(seed, 6000, [1, 30, 69], 1500);
    checkExact(a, b, 0, 4096);
    checkExact(a, b, 4096, 4096);
    checkExact(b, a, 4096, 0);
  }
});

test('byte-for-byte the same messages as an independent implementation (nostr-tools nip77) as initiator', () => {
  // nostr-tools implements the initiator side; our responder answers both, and each message the
  // two initiators send must be identical (the reference suite's "delta" test).
  for (const [seed, n, w] of [[51, 200, [1, 1, 8]], [52, 20_000, [1, 1, 98]], [53, 5000, [5, 5, 0]], [54, 3000, [1, 0, 9]]] as const) {
    const [a, b] = randomSets(seed, n, [...w] as [number, number, number], seed === 53 ? 50 : n);
    const ours = new Negentropy(NegentropyStorage.fromItems(a));
    const resp1 = new Negentropy(NegentropyStorage.fromItems(b));
    const resp2 = new Negentropy(NegentropyStorage.fromItems(b));
    const nts = new NtStorage();
    for (const it of a) nts.insert(it.timestamp, it.id);
    nts.seal();
    const theirs = new NtNegentropy(nts, 1 << 30); // no limit reached: messages must agree exactly
    let m1: Uint8Array | null = ours.initiate();
    let m2: string | null = theirs.initiate();
    const ntHave: string[] = [];
    const ntNeed: string[] = [];
    const have: string[] = [];
    const need: string[] = [];
    for (let round = 0; m1 || m2; round++) {
      assert.equal(m1 && hex(m1), m2, `seed ${seed} round ${round}: initiator messages differ`);
      const r = ours.reconcileAsInitiator(resp1.reconcile(m1!));
      have.push(...r.have);
      need.push(...r.need);
      m1 = r.next;
      m2 = theirs.reconcile(hex(resp2.reconcile(hexToBytes(m2!))), (id) => ntHave.push(id), (id) => ntNeed.push(id));
    }
    assert.deepEqual(sorted(have), sorted(ntHave));
    assert.deepEqual(sorted(need), sorted(ntNeed));
    assert.deepEqual({ have: sorted(have), need: sorted(need) }, setDifference(a, b));
  }
});

test('an independent initiator (nostr-tools nip77, 60 kB frames) reconciles exactly against our responder with frame limits', () => {
  for (const [seed, frame] of [[61, 4096], [62, 500_000], [63, 0]] as const) {
    const [a, b] = randomSets(seed, 10_000, [1, 2, 17]);
    const resp = new Negentropy(NegentropyStorage.fromItems(b), frame);
    const nts = new NtStorage();
    for (const it of a) nts.insert(it.timestamp, it.id);
    nts.seal();
    const init = new NtNegentropy(nts, 60_000);
    const have: string[] = [];
    const need: string[] = [];
    let m: string | null = init.initiate();
    for (let i = 0; m && i < 500; i++) m = init.reconcile(hex(resp.reconcile(hexToBytes(m))), (id) => have.push(id), (id) => need.push(id));
    assert.equal(m, null, 'finished');
    assert.deepEqual({ have: sorted([...new Set(have)]), need: sorted([...new Set(need)]) }, setDifference(a, b));
  }
});

test('malformed messages are refused with a NegentropyError, never a crash or a hang', () => {
  const s = NegentropyStorage.fromItems(Array.from({ length: 100 }, (_, i) => ({ timestamp: i, id: idOf(`m${i}`) })));
  const resp = new Negentropy(s);
  const bad = [
    '', // no version byte
    '10', // not a version at all
    '6101', // bound cut short
    '61000001', // fingerprint missing
    '610000010011', // fingerprint too short
    '61000002ff', // varint cut short
    '6100000205' + 'aa'.repeat(32), // id list shorter than its count
    '61002100', // bound id prefix longer than 32 bytes
    '610000' + '07', // unknown mode
    '61' + 'ff'.repeat(11) + '00', // varint longer than 64 bits
  ];
  for (const m of bad) assert.throws(() => resp.reconcile(hexToBytes(m)), NegentropyError, `message ${m}`);
  assert.throws(() => hexToBytes('6g'), NegentropyError);
  assert.throws(() => hexToBytes('610'), NegentropyError);
  // bounds after infinity saturate; ranges after it are empty
  assert.equal(hex(resp.reconcile(hexToBytes('6100000200' + '0500' + '0200'))).slice(0, 2), '61');
  // an id list claiming 2^60 ids fails at once instead of looping
  assert.throws(() => resp.reconcile(hexToBytes('61000002' + '90808080808080808000')), NegentropyError);
  const init = new Negentropy(s);
  assert.throws(() => init.reconcileAsInitiator(hexToBytes('61')), NegentropyError, 'initiate first');
  init.initiate();
  assert.throws(() => init.initiate(), NegentropyError);
  assert.throws(() => init.reconcile(hexToBytes('61')), NegentropyError);
});

test('records from the store layout: checked for order and uniqueness', () => {
  const items = [{ timestamp: 2, id: 'bb'.repeat(32) }, { timestamp: 1, id: 'aa'.repeat(32) }];
  const s = NegentropyStorage.fromItems(items);
  assert.equal(s.timestamp(0), 1);
  assert.equal(s.idHex(1), 'bb'.repeat(32));
  assert.doesNotThrow(() => NegentropyStorage.fromRecords(s.records));
  const swapped = new Uint8Array(s.records.length);
  swapped.set(s.records.subarray(36), 0);
  swapped.set(s.records.subarray(0, 36), 36);
  assert.throws(() => NegentropyStorage.fromRecords(swapped), NegentropyError);
  assert.throws(() => NegentropyStorage.fromItems([items[0], items[0]]), NegentropyError);
  assert.throws(() => NegentropyStorage.fromRecords(new Uint8Array(35)), NegentropyError);
});
