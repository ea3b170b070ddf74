// Both signature backends are exercised: native bcrypto (when it built) and nostr-wasm.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { finalizeEvent, generateSecretKey } from 'nostr-tools/pure';
import { loadNativeVerifier, loadWasmVerifier, loadVerifier } from '../../src/nostr/verify.js';
import { computeId, structureError } from '../../src/nostr/event.js';

const sk = generateSecretKey();
const good = () => {
  const e = finalizeEvent({ kind: 1, created_at: 1700000000, tags: [['t', 'x']], content: 'hi 🐙 "q"\n' }, sk);
  return { id: e.id, pubkey: e.pubkey, created_at: e.created_at, kind: e.kind, tags: e.tags, content: e.content, sig: e.sig };
};

const backends = [['wasm', () => loadWasmVerifier()], ['native', async () => loadNativeVerifier()]] as const;
for (const [name, load] of backends) {
  test(`${name} verifier accepts good events and refuses tampered ones`, async (t) => {
    const v = await load();
    if (!v) {
      t.skip('bcrypto native binding not built on this machine');
      return;
    }
    assert.equal(v.backend, name);
    const e = good();
    assert.equal(v.check(e), null);
    assert.match(v.check({ ...e, content: 'changed' })!, /^invalid: event id/);
    assert.match(v.check({ ...e, sig: (e.sig[0] === '0' ? '1' : '0') + e.sig.slice(1) })!, /^invalid: signature/);
    const other = finalizeEvent({ kind: 1, created_at: 1, tags: [], content: '' }, generateSecretKey());
    assert.match(v.check({ ...e, sig: other.sig })!, /^invalid: signature/);
  });
}

test('auto picks a backend, and computeId matches nostr-tools', async () => {
  const v = await loadVerifier('auto');
  assert.ok(['native', 'wasm'].includes(v.backend));
  const e = good();
  assert.equal(computeId(e), e.id);
});

test('structureError names what is wrong', () => {
  const e = good();
  assert.equal(structureError(e), null);
  assert.match(structureError({ ...e, id: 'XYZ' })!, /id/);
  assert.match(structureError({ ...e, kind: 1.5 })!, /kind/);
  assert.match(structureError({ ...e, tags: [[1]] })!, /tag/);
  assert.match(structureError({ ...e, content: null })!, /content/);
  assert.match(structureError([])!, /object/);
});

test('the verification pool gives the same answers from worker threads, for both backends', async (t) => {
  const { poolVerifier } = await import('../../src/ingest/verify-pool.js');
  for (const prefer of ['wasm', 'native'] as const) {
    if (prefer === 'native' && !loadNativeVerifier()) { t.diagnostic('native backend not built'); continue; }
    const pool = await poolVerifier(2, prefer);
    assert.equal(pool.backend, prefer);
    const evs = Array.from({ length: 300 }, good);
    const bad = evs.map((e, i) => (i % 3 === 0 ? { ...e, content: 'x' } : i % 3 === 1 ? { ...e, sig: (e.sig[0] === '0' ? '1' : '0') + e.sig.slice(1) } : e));
    const results = await Promise.all(bad.map((e) => pool.check(e)));
    results.forEach((r, i) => {
      if (i % 3 === 0) assert.match(r!, /^invalid: event id/);
      else if (i % 3 === 1) assert.match(r!, /^invalid: signature/);
      else assert.equal(r, null);
    });
    await pool.close();
  }
});
