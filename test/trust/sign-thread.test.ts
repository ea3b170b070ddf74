// trust/sign-thread.ts: NIP-85 assertions are signed on a worker thread, correctly, and still
// signed (here) once the thread is closed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateSecretKey, getPublicKey, verifyEvent } from 'nostr-tools/pure';
import { signThread } from '../../src/trust/sign-thread.js';
import { assertion } from '../../src/trust/nip85.js';

test('the signing thread signs batches off the calling thread; after close, batches are signed here', async () => {
  const key = generateSecretKey();
  const pk = (i: number) => i.toString(16).padStart(64, '0');
  const t = signThread();
  const batches = await Promise.all([0, 1, 2].map((b) => t.sign(Array.from({ length: 100 }, (_, i) => assertion(pk(b * 100 + i), i % 101, i, 1_700_000_000 + i)), key)));
  assert.equal(t.offThread, 3, 'three batches signed by the worker');
  for (const [b, evs] of batches.entries()) {
    assert.equal(evs.length, 100);
    for (const [i, e] of evs.entries()) {
      assert.equal(e.pubkey, getPublicKey(key));
      assert.equal(e.tags[0]![1], pk(b * 100 + i), 'in the order given');
      assert.equal(verifyEvent({ ...e }), true);
    }
  }
  await t.close();
  const after = await t.sign([assertion(pk(7), 5, 9, 1_700_000_001)], key);
  assert.equal(verifyEvent({ ...after[0]! }), true);
  assert.equal(t.offThread, 3, 'signed on this thread once closed');
});
