// Every signature backend is exercised: the system libsecp256k1 (native/schnorr) and bcrypto when they
// built (.ci/run checks that both did), and nostr-wasm.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { finalizeEvent, generateSecretKey } from 'nostr-tools/pure';
import { createRequire } from 'node:module';
import { loadNativeVerifier, loadSystemVerifier, loadWasmVerifier, loadVerifier } from '../../src/nostr/verify.js';
import { canonical, computeId, serializeForId, signedPartsOf, structureError } from '../../src/nostr/event.js';

const sk = generateSecretKey();
const good = () => {
  const e = finalizeEvent({ kind: 1, created_at: 1700000000, tags: [['t', 'x']], content: 'hi 🐙 "q"\n' }, sk);
  return { id: e.id, pubkey: e.pubkey, created_at: e.created_at, kind: e.kind, tags: e.tags, content: e.content, sig: e.sig };
};

const backends = [['wasm', () => loadWasmVerifier()], ['native', async () => loadNativeVerifier()], ['libsecp256k1', async () => loadSystemVerifier()]] as const;
for (const [name, load] of backends) {
  test(`${name} verifier accepts good events and refuses tampered ones`, async (t) => {
    const v = await load();
    if (!v) {
      t.skip(`the ${name} backend is not built on this machine`);
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
  assert.ok(['libsecp256k1', 'native', 'wasm'].includes(v.backend));
  if (loadSystemVerifier()) assert.equal(v.backend, 'libsecp256k1', 'auto prefers the system libsecp256k1 when it is built');
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
      t.skip(`the ${name} backend is not built on this machine`);
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
  for (const prefer of ['wasm', 'native', 'libsecp256k1'] as const) {
    if (prefer === 'native' && !loadNativeVerifier()) { t.diagnostic('native backend not built'); continue; }
    if (prefer === 'libsecp256k1' && !loadSystemVerifier()) { t.diagnostic('libsecp256k1 backend not built'); continue; }
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

test('the libsecp256k1 backend keeps keys parsed without mixing them up: slots shared, keys off the curve, wrong sizes', async (t) => {
  const v = loadSystemVerifier();
  if (!v) {
    t.skip('the libsecp256k1 backend is not built on this machine');
    return;
  }
  const { verify } = createRequire(import.meta.url)('orbweaver-schnorr') as { verify(m: Buffer, s: Buffer, k: Buffer): boolean };
  // two keys whose first bytes name the same slot (schnorr.c: the low 14 bits of the first three bytes)
  const slotOf = (pub: string) => parseInt(pub.slice(4, 6) + pub.slice(2, 4) + pub.slice(0, 2), 16) & 0x3fff;
  const seen = new Map<number, Uint8Array>();
  let pair: [Uint8Array, Uint8Array] | undefined;
  while (!pair) {
    const k = generateSecretKey();
    const slot = slotOf(finalizeEvent({ kind: 1, created_at: 1, tags: [], content: '' }, k).pubkey);
    const other = seen.get(slot);
    if (other) pair = [other, k];
    else seen.set(slot, k);
  }
  const [a, b] = pair.map((k) => finalizeEvent({ kind: 1, created_at: 1700000000, tags: [], content: 'slot' }, k));
  assert.notEqual(a.pubkey, b.pubkey);
  assert.equal(slotOf(a.pubkey), slotOf(b.pubkey));
  const parts = (e: typeof a, pubkey = e.pubkey) => [Buffer.from(e.id, 'hex'), Buffer.from(e.sig, 'hex'), Buffer.from(pubkey, 'hex')] as const;
  for (let round = 0; round < 3; round++) {
    // each key is parsed, kept, pushed out by the other and parsed again: every answer stays right
    assert.equal(verify(...parts(a)), true);
    assert.equal(verify(...parts(b)), true);
    assert.equal(verify(...parts(a, b.pubkey)), false, "a's signature under b's key");
    assert.equal(verify(...parts(b, a.pubkey)), false, "b's signature under a's key");
    assert.equal(verify(...parts(a)), true);
  }
  // a key in a's slot that is not the x coordinate of a curve point (x^3 + 7 has no square root
  // mod p, by Euler's criterion) is refused and kept nowhere; a is still checked right after it
  const P = 2n ** 256n - 2n ** 32n - 977n;
  const powMod = (x: bigint, e: bigint): bigint => {
    let r = 1n;
    for (x %= P; e > 0n; e >>= 1n, x = (x * x) % P) if (e & 1n) r = (r * x) % P;
    return r;
  };
  let offCurve = a.pubkey;
  for (let i = 1; powMod(BigInt('0x' + offCurve) ** 3n + 7n, (P - 1n) / 2n) === 1n; i++) offCurve = a.pubkey.slice(0, 6) + i.toString(16).padStart(58, '0');
  assert.equal(slotOf(offCurve), slotOf(a.pubkey));
  assert.equal(verify(...parts(a, offCurve)), false);
  assert.equal(verify(...parts(a)), true);
  assert.equal(verify(...parts(a, offCurve)), false);
  // wrong sizes and wrong types are a refusal, not a crash
  const [m, s, k] = parts(a);
  assert.equal(verify(m.subarray(1), s, k), false);
  assert.equal(verify(m, s.subarray(0, 63), k), false);
  assert.equal(verify(m, s, Buffer.concat([k, Buffer.alloc(1)])), false);
  assert.equal((verify as (...x: unknown[]) => boolean)(m, s), false);
  assert.equal((verify as (...x: unknown[]) => boolean)('m', s, k), false);
  // and the whole event check through the backend refuses a tampered id or signature
  assert.equal(v.check(a), null);
  assert.match(v.check({ ...a, sig: b.sig })!, /^invalid: signature/);
});
