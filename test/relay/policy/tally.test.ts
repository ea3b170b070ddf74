// Tally (the per-connection and per-address counters of the budgets): keys that drop to zero are
// kept at zero and swept later, which must not change a single answer. Checked against a plain Map
// model through random churn of the kind the relay makes (a key up and down again and again, many
// keys at once, counts going below zero by mistake).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Tally } from '../../../src/relay/policy/budgets.js';

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32);
}

test('Tally: get, size and total equal a model that forgets a key at zero, through churn and sweeps', () => {
  for (const keys of [3, 70, 1000]) {
    const t = new Tally<string>();
    const model = new Map<string, number>();
    const r = rng(keys);
    for (let step = 0; step < 50_000; step++) {
      const k = `k${Math.floor(r() * keys)}`;
      const n = r() < 0.5 ? 1 : r() < 0.9 ? -1 : -3; // now and then more is given back than was taken
      t.add(k, n);
      const v = (model.get(k) ?? 0) + n;
      if (v <= 0) model.delete(k);
      else model.set(k, v);
      if (step % 97 === 0 || keys === 3) {
        assert.equal(t.get(k), model.get(k) ?? 0);
        assert.equal(t.size, model.size, `size at step ${step} with ${keys} keys`);
        assert.equal(t.total(), [...model.values()].reduce((a, b) => a + b, 0));
      }
    }
    for (const [k, v] of model) assert.equal(t.get(k), v);
  }
});

test('Tally: object keys (connections) read zero once released, before and after a sweep', () => {
  const t = new Tally<{ key: string }>();
  const conns = Array.from({ length: 200 }, (_, i) => ({ key: `10.0.0.${i}` }));
  for (const c of conns) t.add(c, 2);
  assert.equal(t.size, 200);
  for (const c of conns.slice(0, 150)) t.add(c, -2); // more than 64 zeros and half the keys: swept
  assert.equal(t.size, 50);
  for (const c of conns.slice(0, 150)) assert.equal(t.get(c), 0);
  for (const c of conns.slice(150)) assert.equal(t.get(c), 2);
  t.add(conns[0]!, 1);
  assert.equal(t.get(conns[0]!), 1);
  assert.equal(t.size, 51);
  assert.equal(t.total(), 101);
});
