// The import's spools on their own (src/store/graph-spool.ts, index-spool.ts): what a transaction that
// does not commit takes back, what an operation that throws takes back, and that a merge writes
// exactly the edges held, in key order, without the ones taken out.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { test } from 'node:test';
import { EdgeSpool } from '../../src/store/graph-spool.js';
import { IndexSpool } from '../../src/store/index-spool.js';
import { openStore } from '../../src/store/index.js';
import { storeDbs } from '../../src/store/schema.js';
import { tmpDir, withStore } from './helpers.js';

/**
 * The edges a merge of the spool writes, as "kind:followee>follower", in the order written, in
 * parts of `part` edges (one transaction each); the spool is left ready for another merge.
 */
async function drained(spool: EdgeSpool, part = Infinity, countedPerPart?: number, parts: string[][] = []): Promise<string[]> {
  const dir = tmpDir();
  const store = await openStore({ dir, mapSize: 64 * 1024 ** 2 });
  try {
    const dbs = storeDbs(store);
    const written: string[] = [];
    const graph = dbs.graph.graph;
    const spy = { ...dbs, graph: { ...dbs.graph, graph: { doesExist: () => false, putSync: (k: Buffer) => void written.push(`${k.readUInt16BE(0)}:${k.readUInt32BE(2)}>${k.readUInt32BE(6)}`) } } } as unknown as typeof dbs;
    for (let done = false; !done;) {
      const before = written.length;
      store.env.transactionSync(() => {
        const r = spool.drain(spy, part, countedPerPart);
        parts.push(written.slice(before));
        assert.equal(r.written, written.length - before);
        assert.ok(r.written <= part);
        done = r.done;
      });
    }
    spool.restartDrain();
    assert.equal(graph.getKeysCount(), 0);
    return written;
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

test('the spool: a transaction that does not commit leaves it as it was; a merge writes what is held, sorted', async () => {
  const spool = new EdgeSpool(10);
  spool.begin();
  spool.add(3, 7, 'a'.repeat(64), [5, 2, 9], 100);
  spool.add(10000, 7, 'a'.repeat(64), [1], 101);
  spool.commit();
  assert.equal(spool.from, 100);
  assert.equal(spool.size, 4);

  // a transaction that spools more and takes 7's follow list out, then fails
  spool.begin();
  spool.add(3, 8, 'a'.repeat(64), [2, 4], 102);
  const taken = spool.take(3, 7);
  assert.deepEqual(taken.followees, [5, 2, 9]);
  assert.equal(spool.holds(3, 7), false);
  spool.rollback();
  assert.equal(spool.holds(3, 7), true);
  assert.equal(spool.holds(3, 8), false);
  assert.equal(spool.size, 4);
  assert.deepEqual(await drained(spool), ['3:2>7', '3:5>7', '3:9>7', '10000:1>7']);

  // an operation that throws is taken back alone: its undo functions run, last first
  spool.begin();
  const undoAdd = spool.add(3, 8, 'a'.repeat(64), [3], 103);
  const t = spool.take(3, 7);
  t.undo();
  undoAdd();
  spool.commit();
  assert.equal(spool.holds(3, 7), true);
  assert.equal(spool.holds(3, 8), false);
  assert.deepEqual(await drained(spool), ['3:2>7', '3:5>7', '3:9>7', '10000:1>7']);

  // taken out and committed: its edges are not merged (the taker wrote them); the spool stays full until cleared
  spool.begin();
  spool.take(3, 7);
  spool.add(3, 9, 'a'.repeat(64), [6, 1], 104);
  spool.commit();
  assert.deepEqual(await drained(spool), ['3:1>9', '3:6>9', '10000:1>7']);
  assert.deepEqual(await drained(spool, 2), ['3:1>9', '3:6>9', '10000:1>7'], 'in parts of two edges');
  assert.deepEqual(await drained(spool, 1), ['3:1>9', '3:6>9', '10000:1>7'], 'in parts of one edge');
  // a part writes the counters of at most so many followees (both kinds' are counted): it ends before the next one's first edge
  const parts: string[][] = [];
  assert.deepEqual(await drained(spool, Infinity, 1, parts), ['3:1>9', '3:6>9', '10000:1>7'], 'one counted followee per part');
  assert.deepEqual(parts, [['3:1>9'], ['3:6>9'], ['10000:1>7']]);
  assert.equal(spool.size, 6);
  spool.clear();
  assert.equal(spool.size, 0);
  assert.equal(spool.from, 0);
  assert.deepEqual(await drained(spool), []);
});

test('the time and tag entries held back: a transaction that does not commit leaves the spool as it was; dead events are not merged', async () => {
  await withStore(async (store) => {
    const dbs = storeDbs(store);
    const spool = new IndexSpool(dbs, 1 << 20);
    const key = (ca: number, serial: number) => {
      const k = Buffer.alloc(9);
      k.writeUInt32BE(ca, 0);
      k.writeUIntBE(serial, 4, 5);
      return k;
    };
    spool.begin();
    spool.putVisit(10)(dbs.created, key(1000, 10));
    spool.putVisit(10)(dbs.expiry, key(2000, 10)); // not a held index: written at once
    spool.commit();
    assert.equal(spool.size, 1);
    assert.equal(dbs.expiry.getKeysCount(), 1);
    assert.equal(spool.from, 10);

    spool.begin();
    spool.putVisit(11)(dbs.created, key(1001, 11));
    assert.ok(spool.removeVisit(10), 'serial 10 is held');
    assert.equal(spool.removeVisit(9), undefined, 'serial 9 is older than the spool: its entries are in the indexes');
    spool.rollback();
    assert.equal(spool.size, 1);

    spool.begin();
    const op = spool.mark();
    spool.putVisit(12)(dbs.created, key(1002, 12));
    spool.removeVisit(10);
    spool.restore(op); // an operation that threw
    spool.putVisit(13)(dbs.created, key(1003, 13));
    spool.removeVisit(13);
    spool.commit();
    store.env.transactionSync(() => assert.equal(spool.drain().written, 1));
    assert.deepEqual([...dbs.created.getKeys({})].map((k) => k.readUIntBE(4, 5)), [10]);
  });
});

test('the time and tag entries held back span several chunks: keys of any length come back whole, after a rollback into an earlier chunk too, merged in key order (keys that begin alike too)', async () => {
  await withStore(async (store) => {
    const dbs = storeDbs(store);
    const spool = new IndexSpool(dbs, 64 << 20);
    let seed = 7;
    const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 8) % n;
    // a tag+kind key of 10-700 bytes, its serial last (as every held index's); half of them begin
    // alike for 2-40 bytes, as relay URLs do ("r", the length, "wss://relay.")
    const common = Buffer.from('r\x14wss://relay.example.com/nostr/inbox', 'latin1');
    const key = (serial: number) => {
      const k = Buffer.alloc(10 + rand(690));
      for (let i = 0; i < k.length - 5; i++) k[i] = rand(256);
      if (serial % 2 === 0) common.copy(k, 0, 0, Math.min(2 + ((serial * 7) % 39), k.length - 5));
      k.writeUIntBE(serial, k.length - 5, 5);
      return k;
    };
    const want = new Map<number, string>();
    const hold = (from: number, to: number, keep: boolean) => {
      for (let s = from; s < to; s++) {
        const k = key(s);
        spool.putVisit(s)(dbs.tagkind, k);
        if (keep) want.set(s, k.toString('hex'));
      }
    };
    spool.begin();
    hold(1, 6000, true); // ~2 MB: into the third chunk of 1 MiB
    spool.commit();
    spool.begin();
    hold(6000, 12000, false); // into the fifth, then taken back to the third
    spool.rollback();
    spool.begin();
    hold(12000, 16000, true);
    for (let s = 1; s < 16000; s += 97) if (want.delete(s)) spool.removeVisit(s);
    spool.commit();
    assert.ok(spool.bytes > 3 << 20, `the keys span more than three chunks (${spool.bytes} bytes)`);
    // written in key order, keys that begin alike too, so a part of the merge stays in one key range
    const written: Buffer[] = [];
    const put = dbs.tagkind.putSync.bind(dbs.tagkind);
    dbs.tagkind.putSync = ((k: Buffer, v: Buffer) => (written.push(Buffer.from(k)), put(k, v))) as typeof dbs.tagkind.putSync;
    for (let done = false; !done;) store.env.transactionSync(() => void (done = spool.drain(1000).done));
    assert.ok(written.filter((k) => k.subarray(0, 12).equals(common.subarray(0, 12))).length > 1000, 'many keys begin alike for 12 bytes or more');
    // in key order but for runs of at most 256 that agree in their first bits (index-spool.ts TIED_RUN):
    // each key is at least every key written 257 or more places before it
    let before: Buffer | null = null;
    for (let i = 257; i < written.length; i++) {
      if (!before || Buffer.compare(before, written[i - 257]!) < 0) before = written[i - 257]!;
      assert.ok(Buffer.compare(before, written[i]!) <= 0, `key ${i} written after a larger one`);
    }
    const got = new Map([...dbs.tagkind.getKeys({})].map((k) => [k.readUIntBE(k.length - 5, 5), k.toString('hex')] as const));
    assert.equal(got.size, want.size);
    for (const [s, hex] of want) assert.equal(got.get(s), hex, `serial ${s}`);
  });
});
