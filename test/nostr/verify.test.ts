// Both signature backends are exercised: native bcrypto (when it built) and nostr-wasm.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { finalizeEvent, generateSecretKey } from 'nostr-tools/pure';
import { loadNativeVerifier, loadWasmVerifier, loadVerifier } from '../../src/nostr/verify.js';
import { canonical, computeId, serializeForId, signedPartsOf, structureError } from '../../src/nostr/event.js';

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

test('the id preimage cut out of canonical JSON is the NIP-01 serialization, whatever the tags and content hold', () => {
  const nasty = [
    ',"content":"x"', '","content":', '\\",\"content\":', '"}', ',"sig":"', '\\', '\u0000\n\t\u2028', '🐙', '',
  ];
  const cases = [
    { tags: [], content: '' },
    { tags: [[]], content: ',"content":' },
    ...nasty.map((x, i) => ({ tags: [['t', x], [x], ['e', 'a'.repeat(64), x]], content: nasty[(i + 3) % nasty.length] + x })),
    { tags: [['content', ',"content":'], ['kind', ',"kind":1'], ['tags', ',"tags":[]']], content: ',"tags":[],"content":"' },
  ];
  for (const [i, c] of cases.entries()) {
    const e = finalizeEvent({ kind: i * 7919, created_at: i === 0 ? 0 : 1_700_000_000 + i, ...c }, sk);
    const json = JSON.stringify(canonical(e));
    const parts = signedPartsOf(json);
    assert.ok(parts, `case ${i} is laid out canonically`);
    assert.equal(parts.preimage, serializeForId(e), `case ${i}`);
    assert.deepEqual([parts.id, parts.pubkey, parts.sig], [e.id, e.pubkey, e.sig]);
  }
  const e = good();
  // not canonical: another field order, spaces, an unknown field in front
  assert.equal(signedPartsOf(JSON.stringify(e, null, 1)), null);
  assert.equal(signedPartsOf(JSON.stringify({ x: 1, ...e })), null);
  assert.equal(signedPartsOf(JSON.stringify({ ...e, sig: e.sig.slice(2) })), null);
});

for (const [name, load] of backends) {
  test(`${name} verifier checks canonical JSON, and other JSON the slow way`, async (t) => {
    const v = await load();
    if (!v) {
      t.skip('bcrypto native binding not built on this machine');
      return;
    }
    const e = good();
    assert.equal(v.checkJson(JSON.stringify(canonical(e))), null);
    const { sig, ...rest } = e;
    assert.equal(v.checkJson(JSON.stringify({ sig, ...rest })), null, 'another field order');
    assert.match(v.checkJson(JSON.stringify(canonical({ ...e, content: e.content + ' ' })))!, /^invalid: event id/);
    assert.match(v.checkJson(JSON.stringify(canonical({ ...e, tags: [['t', 'y']] })))!, /^invalid: event id/);
    assert.match(v.checkJson(JSON.stringify(canonical({ ...e, sig: (e.sig[0] === '0' ? '1' : '0') + e.sig.slice(1) })))!, /^invalid: signature/);
    // checks on the calling thread use the JSON when given it, as the pool does
    const { inlineVerifier } = await import('../../src/ingest/verify-pool.js');
    const inline = inlineVerifier(v);
    assert.equal(await inline.check(e, JSON.stringify(canonical(e))), null);
    assert.match((await inline.check(e, JSON.stringify(canonical({ ...e, content: 'other' }))))!, /^invalid: event id/);
  });
}

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
