// The follow graph's pubkey ids across a write transaction (graph.ts GraphTxn): an id allocated by
// an operation that is taken back goes with it, so the next list that names the pubkey gives it an
// id the store keeps; and the ids a transaction allocated are cached once it has committed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { idPubkey, pubkeyId } from '../../src/store/graph.js';
import { nowSeconds } from '../../src/store/rules.js';
import { storeDbs } from '../../src/store/schema.js';
import { WriteTxn } from '../../src/store/txn.js';
import { ev, hex, ids, withStore } from './helpers.js';

const json = (e: ReturnType<typeof ev>) => JSON.stringify(e);

test('an id allocated by an operation that is taken back does not outlive it: the next list naming that pubkey gets an id the store keeps', async () => {
  await withStore(async (store) => {
    const dbs = storeDbs(store);
    const x = hex();
    const first = ev({ kind: 3, tags: [['p', x]] });
    const second = ev({ kind: 3, tags: [['p', x]] });
    let txn!: WriteTxn;
    store.env.transactionSync(() => {
      txn = new WriteTxn(dbs, nowSeconds(), null);
      assert.throws(() => txn.run(() => {
        txn.applyEvent(first, json(first));
        throw new Error('taken back');
      }), /taken back/);
      assert.equal(txn.run(() => txn.applyEvent(second, json(second))).status, 'stored');
      txn.finish();
    });
    txn.committed();
    const stored = dbs.graph.pkid.getBinary(Buffer.from(x, 'hex'));
    assert.ok(stored, 'the store has an id for the pubkey, not only the transaction');
    const id = stored.readUInt32BE(0);
    assert.equal(pubkeyId(dbs, x), id);
    assert.equal(idPubkey(dbs, id), x);
    assert.deepEqual(await ids(store, [{ kinds: [3], tags: [['p', [x]]] }]), [second.id]);
  });
});

test('the ids a transaction allocated are in the id cache once it has committed', async () => {
  await withStore(async (store) => {
    const dbs = storeDbs(store);
    const x = hex();
    const list = ev({ kind: 3, tags: [['p', x]] });
    let txn!: WriteTxn;
    store.env.transactionSync(() => {
      txn = new WriteTxn(dbs, nowSeconds(), null);
      txn.run(() => txn.applyEvent(list, json(list)));
      txn.finish();
    });
    txn.committed();
    const key = Buffer.from(x, 'hex');
    const id = dbs.graph.pkid.getBinary(key)!.readUInt32BE(0);
    // the store's entry removed behind the cache's back: only the cache can still answer
    store.env.transactionSync(() => dbs.graph.pkid.removeSync(key));
    assert.equal(pubkeyId(dbs, x), id);
  });
});
