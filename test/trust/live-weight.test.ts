// Live mode weighs the write relays it keeps open by trust rank (app/live-weight.ts): a sybil ring
// that names its own relay in hundreds of relay lists must not outweigh the relay the trusted
// people write to, once a ranking pass has run.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { rankPass } from '../../src/trust/pass.js';
import { writeRelayScores } from '../../src/spider/live/select.js';
import { trustWeight } from '../../src/app/live-weight.js';
import { ev, hex, put, withStore } from '../store/helpers.js';

const PASS = { damping: 0.85, iterations: 100, tolerance: 1e-12, muteWeight: 1, hideBelow: 1 };
const TRUSTED = 'wss://trusted.example.com';
const SYBIL = 'wss://sybil.example.com';

test('live relay choice by trust: the relay trusted people write to outweighs a sybil ring\'s relay once ranks exist', async () => {
  await withStore(async (store) => {
    const roots = [hex(), hex()];
    const people = Array.from({ length: 6 }, () => hex());
    const ring = Array.from({ length: 200 }, () => hex());
    for (const r of roots) await put(store, ev({ kind: 3, pubkey: r, tags: people.map((p) => ['p', p]) }));
    for (let i = 0; i < ring.length; i++) await put(store, ev({ kind: 3, pubkey: ring[i]!, tags: [['p', ring[(i + 1) % ring.length]!]] }));
    for (const p of [...roots, ...people]) await put(store, ev({ kind: 10002, pubkey: p, tags: [['r', TRUSTED]] }));
    for (const s of ring) await put(store, ev({ kind: 10002, pubkey: s, tags: [['r', SYBIL]] }));

    const weight = trustWeight(store.ranks);
    const before = await writeRelayScores(store, { weight, maxTags: 100 });
    assert.ok(before.get(SYBIL)! > before.get(TRUSTED)!, 'before any pass every pubkey counts 1: the ring has the numbers');

    await rankPass(store.ranks, { ...PASS, roots });
    const after = await writeRelayScores(store, { weight, maxTags: 100 });
    assert.ok(after.get(TRUSTED)! > after.get(SYBIL)!, `by trust: ${after.get(TRUSTED)} vs ${after.get(SYBIL)}`);
    assert.ok(after.get(SYBIL)! > 0, 'an unranked pubkey still counts a little');
  });
});
