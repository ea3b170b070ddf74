// The writer's side of the reader gate (reader-gate.ts): a thread of the writing process, with its
// own handle of the process's LMDB environment, that looks for openers' requests and holds LMDB's
// write lock for them in a transaction that writes nothing and is aborted. While it holds, the
// process's own writes wait (at most HOLD_CAP_MS; an open takes milliseconds). It sleeps in
// Atomics.wait between looks, which a V8 CPU profile counts as busy: the thread shows 100% there,
// while /proc/<pid>/task gives it almost no CPU (0.2 s in 12 s of an idle relay, as every thread).
// It runs only while openers ask: after IDLE_EXIT_MS without a request it ends, and the writing
// process starts it again when the next request appears (reader-gate.ts).
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { ABORT } from 'lmdb';
import { openEnv, type EnvOptions } from './env.js';
import { HELD_SUFFIX, POLL_MS, requestPid, unlinkQuiet } from './reader-gate.js';
import { pidRunning } from '../lib/pid.js';

/** How often the thread looks for requests while nobody asks. */
const IDLE_POLL_MS = 20;
/** With no request for this long the thread ends (reader-gate.ts starts it again when one comes). */
const IDLE_EXIT_MS = 30_000;
/** The longest hold: an opener slower than this is not covered (it sees its `.held` gone and fails). */
const HOLD_CAP_MS = 30_000;

const { env: envOptions, stopFlag } = workerData as { env: EnvOptions; stopFlag: Int32Array };
const dir = envOptions.dir;
const env = openEnv(envOptions); // the process's environment, shared (lmdb-js opens one per process)
parentPort!.postMessage('ready');

const stopped = (): boolean => Atomics.load(stopFlag, 0) !== 0;

/** The requests of live openers; those of openers that are gone are removed. */
function requests(): string[] {
  const live: string[] = [];
  for (const name of readdirSync(dir)) {
    const pid = requestPid(name);
    if (pid === null) continue;
    if (pidRunning(pid)) live.push(name);
    else unlinkQuiet(join(dir, name));
  }
  return live;
}

/**
 * Holds the write lock until the openers that had asked when it was taken have opened. Openers that
 * ask meanwhile wait for the next hold, so the writer commits between holds however often they ask.
 */
function hold(): void {
  // lmdb-js begins the transaction (LMDB's write lock) before it calls back
  env.transactionSync(() => {
    const serving = new Set(requests());
    // the lock is ours: nothing commits from here
    for (const r of serving) writeFileSync(join(dir, r + HELD_SUFFIX), '');
    const until = Date.now() + HOLD_CAP_MS;
    for (;;) {
      for (const r of serving) {
        if (existsSync(join(dir, r)) && pidRunning(requestPid(r)!)) continue;
        unlinkQuiet(join(dir, r)); // opened; or its opener is gone
        unlinkQuiet(join(dir, r + HELD_SUFFIX));
        serving.delete(r);
      }
      if (serving.size === 0 || stopped() || Date.now() >= until) break;
      Atomics.wait(stopFlag, 0, 0, POLL_MS);
    }
    for (const r of serving) unlinkQuiet(join(dir, r + HELD_SUFFIX)); // before the lock is let go
    return ABORT; // it wrote nothing
  });
}

for (let idleSince = Date.now(); !stopped() && Date.now() - idleSince < IDLE_EXIT_MS; ) {
  if (requests().length > 0) {
    hold();
    idleSince = Date.now();
  }
  Atomics.wait(stopFlag, 0, 0, IDLE_POLL_MS);
}
await env.close();
