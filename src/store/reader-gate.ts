// A process that opens a store beside its live writer (stats, export, directory, backup, verify, a
// spider beside the relay) asks the writer to hold its writes for the moment it opens.
//
// Why: lmdb-js's LMDB (3.5.6, mdb.c mdb_env_open2) sets the lock file's last transaction id
// (mti_txnid) to the id of the meta page it read, in every process that opens the environment, not
// only in the first. A process that opens while the writer commits stores the id of the commit
// before, and the writer starts its next transaction from that older meta page and writes its meta
// over the newer one: every change of the commit in between is gone, although it was acknowledged.
// Read-only (MDB_RDONLY) opens do it too. Found 2026-11-29 (docs/storage.md, "Readers that reset
// the writer"): lmdb-js built with that one assignment removed lost nothing where the stock build
// lost 4-8 transactions in 1,600 opens (bench/lmdb-multi-writer.ts --readers).
//
// So the opener asks; the writer's gate thread (reader-gate-thread.ts) takes LMDB's write lock in a
// transaction that writes nothing and holds it while the opener opens: nothing commits, so the id
// the opener stores is the current one. Through files in the data directory:
//   reader-gate.<pid>.<n>        the opener's request (it removes it when it has opened)
//   reader-gate.<pid>.<n>.held   the writer holds its write lock for it; made after the lock was
//                                taken, removed before it is let go
// An opener that still sees its `.held` after its open was covered by the hold throughout.
import { existsSync, readdirSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { sleep } from '../lib/sleep.js';
import { StoreBusyError } from './errors.js';
import { liveWriter } from './writer-lock.js';
import type { EnvOptions } from './env.js';

export const GATE_PREFIX = 'reader-gate.';
export const HELD_SUFFIX = '.held';
/** How long an opener waits for the writer to hold: it may be in a long transaction (an import's merge, a repair). */
const DEFAULT_WAIT_MS = 120_000;
/** How often an opener looks for its `.held`, and a holding gate thread for requests that came or went. */
export const POLL_MS = 5;
/** After this long waiting, the opener says what it waits for. */
const SAY_AFTER_MS = 2_000;

let requests = 0;

/** A request file's name: `reader-gate.<pid>.<n>`. */
export function requestPid(name: string): number | null {
  if (!name.startsWith(GATE_PREFIX) || name.endsWith(HELD_SUFFIX)) return null;
  const pid = Number(name.slice(GATE_PREFIX.length).split('.')[0]);
  return Number.isInteger(pid) && pid > 0 ? pid : null;
}

export interface HeldGate {
  /** true when the writer held its write lock from before the open until now */
  covered(): boolean;
  /** the open is done: the writer may commit again */
  release(): void;
}

interface WaitLog {
  info?(o: object, msg?: string): void;
}

/**
 * Before a read-only open: when another live process holds the store's writer lock, waits until it
 * holds its writes (null when no other process writes the store). Throws StoreBusyError naming the
 * writer when it does not hold within `waitMs` (an orbweaver from before the gate, a stuck writer).
 */
export async function enterReaderGate(dir: string, o: { waitMs?: number; logger?: WaitLog } = {}): Promise<HeldGate | null> {
  const writer = liveWriter(dir);
  if (!writer || writer.pid === process.pid) return null; // no writer, or ours: the process shares one environment
  const request = join(dir, `${GATE_PREFIX}${process.pid}.${++requests}`);
  const held = request + HELD_SUFFIX;
  try {
    writeFileSync(request, JSON.stringify({ pid: process.pid, command: process.argv.slice(1).join(' ').slice(0, 300) }) + '\n', { flag: 'wx' });
  } catch (e) {
    throw new StoreBusyError(
      `the store in ${dir} is written by pid ${writer.pid} (${writer.command}), and this process cannot ask it to hold its writes while it opens the store: writing ${request} failed (${(e as Error).message}). ` +
        `Run this as a user who may write the data directory, or stop that writer first (docs/storage.md, "Readers that reset the writer")`,
    );
  }
  const remove = () => unlinkQuiet(request);
  const waitMs = o.waitMs ?? DEFAULT_WAIT_MS;
  const start = Date.now();
  let said = false;
  try {
    while (!existsSync(held)) {
      const w = liveWriter(dir);
      if (!w) {
        // the writer went away while we waited: nothing commits now
        remove();
        return null;
      }
      const waited = Date.now() - start;
      if (waited >= waitMs) {
        throw new StoreBusyError(
          `the store in ${dir} is written by pid ${w.pid} (${w.command}), which did not hold its writes for this process to open the store within ${waitMs / 1000} s. ` +
            `Opening beside a writer that does not hold can lose its latest transactions (docs/storage.md, "Readers that reset the writer"), so this process did not open it. ` +
            `That writer may be an orbweaver from before 2026-11-29, or busy in one long transaction: run this again when it is idle, or stop it first`,
        );
      }
      if (!said && waited >= SAY_AFTER_MS) {
        said = true;
        o.logger?.info?.({ dir, writer: w.pid }, `waiting for the store's writer (pid ${w.pid}) to hold its writes while this process opens the store`);
      }
      await sleep(POLL_MS);
    }
  } catch (e) {
    remove();
    throw e;
  }
  return { covered: () => existsSync(held), release: remove };
}

/** The writer's side: a thread that holds the write lock for openers. */
export interface ReaderGate {
  stop(): Promise<void>;
}

/** How often the writing process looks for a request while its gate thread is not running. */
const WATCH_MS = 100;

/** Whether a live opener's request file is in `dir` (a dead opener's is left to the thread to remove). */
function asked(dir: string): boolean {
  try {
    return readdirSync(dir).some((name) => requestPid(name) !== null);
  } catch {
    return false;
  }
}

/**
 * Starts the gate of a process that took the store's writer lock, right after its environment opened
 * (before its migrations and recoveries commit). The thread runs only while openers ask: the process
 * looks for a request every WATCH_MS (one directory read) and starts it then; it ends by itself once
 * nobody has asked for a while. An idle relay so keeps no thread (~10 MB) and no 50 reads a second
 * for the few times a command opens the store beside it; an opener waits WATCH_MS more, and the
 * thread's start, for its first open.
 */
export async function startReaderGate(env: EnvOptions): Promise<ReaderGate> {
  // `.held` files of a writer before this one that died holding: nothing holds for them now
  for (const name of readdirSync(env.dir)) if (name.startsWith(GATE_PREFIX) && name.endsWith(HELD_SUFFIX)) unlinkQuiet(join(env.dir, name));
  const stopFlag = new Int32Array(new SharedArrayBuffer(4));
  let running: Worker | null = null;
  let stopping = false;
  const start = () => {
    if (running || stopping) return;
    const worker = new Worker(new URL('./reader-gate-thread.js', import.meta.url), { workerData: { env: { ...env, readOnly: false }, stopFlag } });
    running = worker;
    worker.on('error', () => {}); // a failed gate shows to openers as a writer that does not hold
    worker.once('exit', () => {
      running = null;
      if (!stopping && asked(env.dir)) start(); // asked while it was ending
    });
    worker.unref();
  };
  const watch = setInterval(() => { if (!running && asked(env.dir)) start(); }, WATCH_MS);
  watch.unref();
  if (asked(env.dir)) start();
  return {
    stop: async () => {
      stopping = true;
      clearInterval(watch);
      Atomics.store(stopFlag, 0, 1);
      Atomics.notify(stopFlag, 0);
      const worker: Worker | null = running;
      if (!worker || worker.threadId < 0) return; // not running, or already exited
      worker.ref(); // an unref'd thread would not keep the event loop alive while we wait for it
      await new Promise<void>((resolve) => {
        worker.once('exit', () => resolve());
      });
    },
  };
}

/** Removes a gate file; one already removed (by its opener, or the gate thread) is no error. */
export function unlinkQuiet(path: string): void {
  try {
    unlinkSync(path);
  } catch { /* already gone */ }
}
