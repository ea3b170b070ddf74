// The kept answers' shared memory (store/answer-arena.ts): extents never overlap, a freed extent is
// taken again and merged with its free neighbours, a request that fits nowhere gets -1, and a
// release that does not match what is allocated is refused. Checked against a map of every unit.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AnswerArena } from '../../src/store/answer-arena.js';
import { rng } from './helpers.js';

const UNIT = 64;

test('extents are taken first fit, and free neighbours merge again', () => {
  const a = new AnswerArena(10 * UNIT);
  const x = a.alloc(3 * UNIT);
  const y = a.alloc(2 * UNIT + 1); // rounded up to 3 units
  const z = a.alloc(4 * UNIT);
  assert.deepEqual([x, y, z], [0, 3 * UNIT, 6 * UNIT]);
  assert.equal(a.alloc(1), -1, 'full');
  a.release(y, 2 * UNIT + 1);
  assert.equal(a.largestFree(), 3 * UNIT);
  assert.equal(a.alloc(4 * UNIT), -1, 'a hole of three units does not take four');
  a.release(x, 3 * UNIT);
  assert.equal(a.largestFree(), 6 * UNIT, 'the two holes merged');
  assert.equal(a.alloc(5 * UNIT), 0);
  a.release(0, 5 * UNIT);
  a.release(z, 4 * UNIT);
  assert.equal(a.largestFree(), 10 * UNIT);
  assert.equal(a.freeBytes(), 10 * UNIT);
  assert.throws(() => a.release(z, 4 * UNIT), /released twice/);
});

test('random allocations and releases never overlap and lose no byte', () => {
  const units = 512;
  const a = new AnswerArena(units * UNIT);
  const owner = new Int32Array(units).fill(-1);
  const live = new Map<number, { at: number; n: number }>();
  const r = rng(7);
  let next = 0;
  let refused = 0;
  for (let step = 0; step < 20_000; step++) {
    if (live.size > 0 && r() < 0.45) {
      const keys = [...live.keys()];
      const k = keys[Math.floor(r() * keys.length)]!;
      const { at, n } = live.get(k)!;
      a.release(at, n);
      for (let u = at / UNIT; u < (at + n) / UNIT; u++) owner[u] = -1;
      live.delete(k);
      continue;
    }
    const n = (1 + Math.floor(r() * 40)) * UNIT - Math.floor(r() * UNIT);
    const at = a.alloc(n);
    const span = Math.ceil(n / UNIT);
    let fits = false;
    for (let s = 0, run = 0; s < units; s++) {
      run = owner[s] === -1 ? run + 1 : 0;
      if (run >= span) fits = true;
    }
    if (at < 0) {
      assert.equal(fits, false, `step ${step}: ${span} free units in a row, yet refused`);
      refused++;
      continue;
    }
    assert.equal(at % UNIT, 0);
    for (let u = at / UNIT; u < at / UNIT + span; u++) {
      assert.equal(owner[u], -1, `step ${step}: unit ${u} given twice`);
      owner[u] = next;
    }
    live.set(next++, { at, n: span * UNIT });
  }
  assert.ok(refused > 100, `some requests found no room (${refused})`);
  let used = 0;
  for (const u of owner) if (u !== -1) used++;
  assert.equal(a.freeBytes(), (units - used) * UNIT);
});
