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
interface CommitFailure extends Error {
  commitError: Promise<unknown>;
}

const isCommitFailure = (r: unknown): r is CommitFailure =>
  r instanceof Error && r.message.startsWith('Commit failed') && (r as Partial<CommitFailure>).commitError instanceof Promise;

/** The reason lmdb-js rejects a `commitError` with: LMDB's error, numbered, raised in its write.js. */
const isCommitReason = (r: unknown): boolean =>
  r instanceof Error && typeof (r as { code?: unknown }).code === 'number' && /[\\/]lmdb[\\/]write\.js/.test(r.stack ?? '');

let installed = false;

/** Installs the handler once per thread (a writer thread has its own process events). */
export function surviveFailedCommits(report: (reason: unknown) => void): void {
  if (installed) return;
  installed = true;
  process.on('unhandledRejection', (reason) => {
    // its reason comes on its own (commitError), below
    if (isCommitFailure(reason)) return;
    if (isCommitReason(reason)) {
      report(reason);
      return;
    }
    throw reason;
  });
}
