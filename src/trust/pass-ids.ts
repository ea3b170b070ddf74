// A pass's ids: every pubkey of the graph (list authors and members) gets a pass id, in store id
// order, so that a row's targets are sorted as they are placed and two passes over the same graph
// give every pubkey the same id, whichever way the graph was read (pass.ts reads the store's edges,
// kept-graph.ts the lists that changed).
import { setImmediate as tick } from 'node:timers/promises';
import type { RankStore } from '../store/ranks.js';
import type { PubkeyIds } from './pubkeys.js';

/** Not (yet) given a pass id: a store id that is not in the graph, and one that is. */
export const ABSENT = 0xffffffff;
export const SEEN = 0xfffffffe;

/** Store pubkey id -> pass id (or ABSENT, SEEN), growing when the store gives ids during the pass. */
export class IdMap {
  map: Uint32Array;
  max = 0;
  constructor(limit: number) {
    this.map = new Uint32Array(Math.max(1, limit)).fill(ABSENT);
  }
  see(id: number): void {
    if (id >= this.map.length) {
      const bigger = new Uint32Array(Math.max(id + 1, this.map.length * 2)).fill(ABSENT);
      bigger.set(this.map);
      this.map = bigger;
    }
    this.map[id] = SEEN;
    if (id > this.max) this.max = id;
  }
}

/** Gives every seen store id with a pubkey its pass id, in store id order (m.map then maps to pass ids). */
export async function givePassIds(ranks: RankStore, m: IdMap, ids: PubkeyIds): Promise<void> {
  const pass = m.map;
  for await (const b of ranks.pubkeysOfIds(1, m.max + 1)) {
    for (let j = 0; j < b.ids.length; j++) {
      const sid = b.ids[j]!;
      if (pass[sid] === SEEN) pass[sid] = ids.idOf(b.keys.subarray(j * 32, j * 32 + 32), true);
    }
    await tick();
  }
}
