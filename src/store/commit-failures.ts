// A failed commit must fail its writes, not end the process.
//
// lmdb-js gathers the writes of each turn of the event loop into a batch whose commit promise it
// keeps to itself (write.js: the event-turn batch's `writeBatchStart()`). When a commit fails (a
// full disk, an I/O error, lmdb-js's own check of LMDB's free list) it rejects every promise of
// the batch with "Commit failed (see commitError for details)", that one included, and nobody
// handles it: Node ended the relay or the import on the unhandled rejection, although the
// transaction's own promise (the writer's batch, a merge's part) was rejected too and its caller
// had answered for it (found with a store on a full 8 MiB tmpfs and store.minFreeBytes 0;
// test/ops/disk-full.test.ts). This handler takes only those lmdb-js rejections and the
// second promise each carries (`commitError`, rejected with LMDB's error, which is reported); any
// other unhandled rejection still ends the process, as an uncaught exception, as Node's default does.
//
// The writes of a failed commit are refused with LMDB's reason (commitReason), not with lmdb-js's
// "see commitError": a client's OK false and the log then say what went wrong.
interface CommitFailure extends Error {
  commitError: Promise<unknown>;
}

const isCommitFailure = (r: unknown): r is CommitFailure =>
  r instanceof Error && r.message.startsWith('Commit failed') && (r as Partial<CommitFailure>).commitError instanceof Promise;

/** The reason lmdb-js rejects a `commitError` with: LMDB's error, numbered, raised in its write.js. */
const isCommitReason = (r: unknown): boolean =>
  r instanceof Error && typeof (r as { code?: unknown }).code === 'number' && /[\\/]lmdb[\\/]write\.js/.test(r.stack ?? '');

let installed = false;
/** LMDB's reason for each commitError promise the handler has seen (commitReason) */
const reasons = new WeakMap<Promise<unknown>, unknown>();
/** commitReason calls waiting for the handler to see a commitError's reason */
const waiting = new WeakMap<Promise<unknown>, Array<(reason: unknown) => void>>();

/** Installs the handler once per thread (a writer thread has its own process events). */
export function surviveFailedCommits(report: (reason: unknown) => void): void {
  if (installed) return;
  installed = true;
  process.on('unhandledRejection', (reason, promise) => {
    // its reason comes on its own (commitError), below
    if (isCommitFailure(reason)) return;
    if (isCommitReason(reason)) {
      reasons.set(promise, reason);
      for (const wake of waiting.get(promise) ?? []) wake(reason);
      waiting.delete(promise);
      report(reason);
      return;
    }
    throw reason;
  });
}

/**
 * How long a refused write waits for LMDB's reason. lmdb-js rejects commitError in the same callback
 * as the commit, but Node reports it unhandled only after the microtasks that answer the write.
 */
const REASON_WAIT_MS = 1000;

/** LMDB's reason for a commitError once the handler has seen it; undefined after REASON_WAIT_MS. */
function reasonOf(commitError: Promise<unknown>): Promise<unknown> {
  if (reasons.has(commitError) || !installed) return Promise.resolve(reasons.get(commitError));
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(undefined), REASON_WAIT_MS);
    const wake = (reason: unknown) => {
      clearTimeout(timer);
      resolve(reason);
    };
    const list = waiting.get(commitError);
    if (list) list.push(wake);
    else waiting.set(commitError, [wake]);
  });
}

/**
 * The error a write of a failed commit is refused with: for lmdb-js's "Commit failed", one carrying
 * LMDB's own reason (what its commitError was rejected with, e.g. "MDB_MAP_FULL" or an errno's
 * text) once the handler above has seen it; anything else as it is. It reads the reason the
 * handler kept rather than handling commitError itself: handled after Node reported it, that
 * promise would print a PromiseRejectionHandledWarning.
 */
export async function commitReason(err: unknown): Promise<Error> {
  if (!isCommitFailure(err)) return err instanceof Error ? err : new Error(String(err));
  const reason = await reasonOf(err.commitError);
  if (!(reason instanceof Error)) return err;
  const code = (reason as { code?: unknown }).code;
  return Object.assign(new Error(`commit failed: ${reason.message}${typeof code === 'number' && !reason.message.includes(String(code)) ? ` (${code})` : ''}`), { cause: reason });
}
