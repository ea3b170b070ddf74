// One writing process per store. Several processes writing one LMDB environment through lmdb-js
// 3.5.6 lose acknowledged transactions now and then, with or without the write map
// (docs/storage.md, "Several writer processes"; bench/lmdb-multi-writer.ts reproduces it without
// our code; the cause, which read-only openers share, is in "Readers that reset the writer" and
// reader-gate.ts). So a store opened for writing takes `<dir>/writer.lock` for the life of its process
// and a second process is refused, naming the holder. Readers (readOnly) take nothing; they ask
// the holder to hold its writes while they open (reader-gate.ts).
//
// The file is created with O_EXCL and names its process (pid and, on Linux, the process's start
// time, so a pid reused by another program is not taken for the holder). A file whose process is
// gone (kill -9, a crash) is stale and taken over. Threads of one process share the lock: the
// relay's writer thread opens the store in the process that already holds it.
import { mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sleep } from '../lib/sleep.js';
import { pidRunning } from '../lib/pid.js';
import { StoreBusyError } from './errors.js';

export const WRITER_LOCK_FILE = 'writer.lock';
/**
 * How long an opener waits for a live holder to let go before it is refused: a process on its way
 * out still holds the lock, e.g. `orbweaver import`'s worker finishing its batch after its parent
 * was killed (test/ops/crash-verify.test.ts started a relay in that moment).
 */
const HOLDER_WAIT_MS = 10_000;

export interface LockRecord {
  pid: number;
  /** /proc/<pid>/stat's start time (clock ticks since boot); null where there is no /proc */
  started: string | null;
  /** what the process runs, for the refusal's message */
  command: string;
}

/** The start time of a process (field 22 of /proc/<pid>/stat), or null. */
function startTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // fields after the command name, which is in parentheses and may hold spaces
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

function readRecord(file: string): LockRecord | null {
  try {
    const rec = JSON.parse(readFileSync(file, 'utf8')) as LockRecord;
    return Number.isInteger(rec?.pid) && rec.pid > 0 ? rec : null;
  } catch {
    return null; // absent, or half written by a process that died writing it
  }
}

function holderAlive(rec: LockRecord): boolean {
  if (!pidRunning(rec.pid)) return false;
  const now = startTime(rec.pid);
  return rec.started === null || now === null || now === rec.started;
}

/** The live process that holds the store's writer lock in `dir`, or null when none does. */
export function liveWriter(dir: string): LockRecord | null {
  const rec = readRecord(join(dir, WRITER_LOCK_FILE));
  return rec && holderAlive(rec) ? rec : null;
}

/** Creates the lock file naming this process; false when one is there already. */
function create(file: string, dir: string, mine: LockRecord): boolean {
  for (let first = true; ; first = false) {
    try {
      writeFileSync(file, JSON.stringify(mine) + '\n', { flag: 'wx' }); // 0600 under the CLI's umask (app/data-dir.ts)
      return true;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') return false;
      if (code !== 'ENOENT' || !first) throw e;
      mkdirSync(dir, { recursive: true }); // a new store: LMDB would make the directory next
    }
  }
}

/**
 * Removes a stale lock file, unless it changed since it was judged stale: another opener may have
 * taken it over and made its own in between, which must not be removed. (What is left is the
 * instant between this read and the unlink.)
 */
export function removeStale(file: string, judged: LockRecord | null): void {
  const now = readRecord(file);
  if (now?.pid !== judged?.pid || now?.started !== judged?.started) return;
  try {
    unlinkSync(file);
  } catch { /* another opener removed it first */ }
}

/** Lets the lock go; `taken`: this open made the lock file (false: another open of this process holds it). */
export type WriterLockRelease = (() => void) & { taken: boolean };

/**
 * Takes the store's writer lock for this process, or throws StoreBusyError naming the process that
 * holds it. Returns the release (removes the file if this open made it; a no-op otherwise).
 * A live holder is waited for up to `waitMs`; a stale lock is taken over (at most a few times, in
 * case openers keep taking it from each other).
 */
export async function acquireWriterLock(dir: string, waitMs = HOLDER_WAIT_MS): Promise<WriterLockRelease> {
  const file = join(dir, WRITER_LOCK_FILE);
  const mine: LockRecord = { pid: process.pid, started: startTime(process.pid), command: (process.argv.slice(1).join(' ') || process.execPath).slice(0, 300) };
  const giveUpAt = Date.now() + waitMs;
  for (let takeovers = 0; takeovers < 5; ) {
    if (create(file, dir, mine)) {
      const release = () => {
        if (readRecord(file)?.pid !== process.pid) return;
        try {
          unlinkSync(file);
        } catch { /* already gone */ }
      };
      return Object.assign(release, { taken: true });
    }
    let rec = readRecord(file);
    if (!rec) {
      // perhaps just created and not yet written by its process: look again before calling it stale
      await sleep(50);
      rec = readRecord(file);
    }
    // another store of this process (the writer thread, a second open) holds it: it is ours
    if (rec?.pid === process.pid && rec.started === mine.started) return Object.assign(() => {}, { taken: false });
    if (rec && holderAlive(rec)) {
      if (Date.now() >= giveUpAt) {
        throw new StoreBusyError(
          `the store in ${dir} is being written by another process, pid ${rec.pid} (${rec.command}), still after ${waitMs / 1000} s; only one process may write a store at a time, because LMDB through lmdb-js loses transactions when several do (docs/operating.md, "One writing process per store"). Let that process finish or stop it, then run this again; a relay's own spider and sync publish to it instead`,
        );
      }
      // perhaps on its way out (a command whose parent was killed finishes its batch and closes)
      await sleep(100);
      continue;
    }
    // stale (its process is gone) or still unreadable: take it over
    takeovers++;
    removeStale(file, rec);
  }
  throw new StoreBusyError(`could not take the writer lock ${file}: it kept changing hands; run this again`);
}
