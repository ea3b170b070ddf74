// Shared by the negentropy tests: seeded random item sets and a driver that runs a whole
// reconciliation between two in-memory parties, counting rounds and bytes.
import { createHash } from 'node:crypto';
import { Negentropy, NegentropyStorage } from '../../src/nostr/negentropy.js';
import { prng } from '../../bench/lib/events.js';

export interface TestItem {
  timestamp: number;
  id: string;
}

/** A small deterministic PRNG (the benchmarks' mulberry32) so a failure can be replayed from its seed. */
export const rng = prng;

/** A deterministic 32-byte id (hex) from a label. */
export const idOf = (label: string): string => createHash('sha256').update(label).digest('hex');

/**
 * Two sets drawn like the reference fuzzer: each item goes to side 1 only, side 2 only or both,
 * with the given weights, at a random second within `spread` seconds.
 */
export function randomSets(seed: number, n: number, weights: [number, number, number], spread = n, base = 1_677_970_534): [TestItem[], TestItem[]] {
  const r = rng(seed);
  const total = weights[0] + weights[1] + weights[2];
  const a: TestItem[] = [];
  const b: TestItem[] = [];
  for (let i = 0; i < n; i++) {
    const item = { timestamp: base + Math.floor(r() * spread), id: idOf(`${seed}:${i}`) };
    const x = r() * total;
    if (x < weights[0]) a.push(item);
    else if (x < weights[0] + weights[1]) b.push(item);
    else {
      a.push(item);
      b.push(item);
    }
  }
  return [a, b];
}

export interface SyncResult {
  have: string[];
  need: string[];
  rounds: number;
  /** bytes initiator -> responder, responder -> initiator */
  up: number;
  down: number;
  /** largest message each side sent */
  maxUp: number;
  maxDown: number;
  /** every message, in order (initiator's first) */
  trace: Uint8Array[];
}

/** Runs initiator (side a) against responder (side b) to the end. */
export function reconcileInMemory(a: TestItem[], b: TestItem[], frameA = 0, frameB = 0, maxRounds = 1000): SyncResult {
  const init = new Negentropy(NegentropyStorage.fromItems(a), frameA);
  const resp = new Negentropy(NegentropyStorage.fromItems(b), frameB);
  const res: SyncResult = { have: [], need: [], rounds: 0, up: 0, down: 0, maxUp: 0, maxDown: 0, trace: [] };
  let msg: Uint8Array | null = init.initiate();
  while (msg) {
    if (++res.rounds > maxRounds) throw new Error('too many rounds');
    res.trace.push(msg.slice());
    res.up += msg.length;
    res.maxUp = Math.max(res.maxUp, msg.length);
    const answer = resp.reconcile(msg);
    res.trace.push(answer.slice());
    res.down += answer.length;
    res.maxDown = Math.max(res.maxDown, answer.length);
    const round = init.reconcileAsInitiator(answer);
    res.have.push(...round.have);
    res.need.push(...round.need);
    msg = round.next;
  }
  return res;
}

/** The brute-force answer: ids only in a (have), ids only in b (need), sorted. */
export function setDifference(a: TestItem[], b: TestItem[]): { have: string[]; need: string[] } {
  const ia = new Set(a.map((x) => x.id));
  const ib = new Set(b.map((x) => x.id));
  return { have: [...ia].filter((x) => !ib.has(x)).sort(), need: [...ib].filter((x) => !ia.has(x)).sort() };
}

export const sorted = (xs: string[]): string[] => [...xs].sort();
