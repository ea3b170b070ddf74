// Applies what requests to vanish (NIP-62) left still to apply, in bounded write transactions, with
// nothing else writing: at an open for writing (a relay or an import killed between a request's
// transaction and the last of the ones deleting what it covers), and at the end of an import
// (which leaves the deletion until its held-back index entries are merged: spool.ts). The relay's
// writer does the same steps in its queue (writer.ts). Until it is done the tombstone already
// refuses every covered event that arrives; this removes the ones stored before.
import type { RootDatabase } from 'lmdb';
import { nowSeconds } from './rules.js';
import type { Dbs } from './schema.js';
import { WriteTxn } from './txn.js';
import { pendingVanishes } from './vanish.js';

type Logger = { info?(o: object, msg?: string): void };

/** Runs every pending request to vanish to its end; returns how many events were deleted. */
export function finishVanishes(env: RootDatabase, dbs: Dbs, maxEntries: number, logger?: Logger): number {
  let deleted = 0;
  for (const pubkey of pendingVanishes(dbs)) {
    let n = 0;
    for (let more = true; more; ) {
      // transactionSync: a step that throws aborts its whole transaction (an async one would commit what it wrote)
      const { step, txn } = env.transactionSync(() => {
        const txn = new WriteTxn(dbs, nowSeconds(), null);
        const step = txn.vanishStep(pubkey, maxEntries);
        txn.finish();
        return { step, txn };
      });
      txn.committed();
      n += step.removed.length;
      more = step.more;
    }
    deleted += n;
    logger?.info?.({ pubkey, deleted: n }, 'request to vanish (NIP-62) applied: the events it covers are deleted');
  }
  return deleted;
}
