// Where `orbweaver backup` may write and what it may read, decided on real paths before the store is
// opened. A backup is often run by another user than the relay's (root from cron), so nothing in
// the data directory may steer it: a symbolic link there would have it copy a file of that user's
// choosing into the backup (a link named local.key to /etc/shadow), or have LMDB open and write a
// lock file wherever lock.mdb points. And the target is compared with the data directory as the
// file system resolves both, not as strings: a target reached through a link into the data
// directory once passed the check and wrote the backup into the store's own directory.
import { closeSync, constants, existsSync, fstatSync, fsyncSync, lstatSync, openSync, readdirSync, readlinkSync, readSync, realpathSync, writeSync } from 'node:fs';
import { basename, dirname, join, sep } from 'node:path';
import { UsageError } from '../args.js';

const errno = (e: unknown) => (e as NodeJS.ErrnoException).code ?? '';

const linkTarget = (path: string): string => {
  try { return readlinkSync(path); } catch { return '?'; }
};

const linkInDataDir = (path: string) =>
  `${path} in the data directory is a symbolic link (to ${linkTarget(path)}); backup does not follow links there: ` +
  `put the file itself in its place (or remove the link) and run backup again`;

/** The real path of `target` (or of its parent, with its name, when it does not exist yet). */
function realTarget(target: string): string {
  try {
    return realpathSync(target);
  } catch (e) {
    if (errno(e) !== 'ENOENT') throw new UsageError(`backup target ${target}: ${(e as Error).message}; name a new directory`);
  }
  // missing, or a link to something missing
  let dangling = false;
  try { dangling = lstatSync(target).isSymbolicLink(); } catch { /* missing */ }
  if (dangling) throw new UsageError(`backup target ${target} is a symbolic link to ${linkTarget(target)}, which does not exist; name the directory itself, a new one`);
  try {
    return join(realpathSync(dirname(target)), basename(target));
  } catch {
    throw new UsageError(`the directory ${dirname(target)} of backup target ${target} does not exist; create it first`);
  }
}

const within = (path: string, dir: string) => path === dir || path.startsWith(dir.endsWith(sep) ? dir : dir + sep);

/**
 * Checks the target before anything is opened: outside the data directory `source` once both are
 * resolved, itself no link, new (or an empty directory) in an existing directory, and no
 * `DIR.partial` that is not this command's (`partialMark` inside it).
 */
export function checkTarget(target: string, source: string, partialMark: string): void {
  let realSource = source;
  try { realSource = realpathSync(source); } catch { /* missing: opening the store says so, naming it */ }
  const real = realTarget(target);
  if (within(real, realSource)) {
    const resolved = real !== target || realSource !== source ? ` (it resolves to ${real}, inside ${realSource})` : '';
    throw new UsageError(`backup target ${target} is inside the data directory ${source}${resolved}; name a directory outside it`);
  }
  if (lstatSync(target, { throwIfNoEntry: false })?.isSymbolicLink()) {
    throw new UsageError(`backup target ${target} is a symbolic link to ${linkTarget(target)}; name the directory itself: ${real}`);
  }
  if (existsSync(target)) {
    let entries: string[];
    try {
      entries = readdirSync(target);
    } catch {
      throw new UsageError(`backup target ${target} exists and is not a directory; name a new directory`);
    }
    if (entries.length > 0) throw new UsageError(`backup target ${target} is not empty; name a new directory (a backup never overwrites one)`);
  }
  const partial = `${target}.partial`;
  const st = lstatSync(partial, { throwIfNoEntry: false });
  if (st && (!st.isDirectory() || !existsSync(join(partial, partialMark)))) throw new UsageError(`${partial} exists and is not a backup this command left unfinished; move it away first`);
}

/**
 * Refuses a data directory that holds a symbolic link, naming it: the store's files, the keys and
 * anything else in it are read (or, for lock.mdb, written) by whoever runs the backup.
 */
export function refuseLinks(source: string): void {
  let names: string[];
  try {
    names = readdirSync(source);
  } catch {
    return; // missing or not a directory: opening the store says so, naming it
  }
  for (const name of names.sort()) {
    const path = join(source, name);
    if (lstatSync(path, { throwIfNoEntry: false })?.isSymbolicLink()) throw new UsageError(linkInDataDir(path));
  }
}

/**
 * Copies the regular file `src` into the new file `dst` with its mode (less the process umask:
 * group and others get nothing) and syncs it; false, copying nothing, when `src` is not a regular
 * file (a directory: an import's spill files) or is gone. Opened without following a link, so one
 * put in its place after refuseLinks is refused too.
 */
export function copyRegularFile(src: string, dst: string): boolean {
  let fd: number;
  try {
    // O_NONBLOCK: a FIFO put in a file's place is not waited on (it is then not a regular file)
    fd = openSync(src, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (e) {
    if (errno(e) === 'ELOOP') throw new UsageError(linkInDataDir(src));
    if (errno(e) === 'ENOENT') return false;
    throw e;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return false;
    const out = openSync(dst, 'wx', st.mode & 0o777);
    try {
      const buf = Buffer.allocUnsafe(1 << 20);
      for (let n; (n = readSync(fd, buf, 0, buf.length, null)) > 0; ) {
        for (let at = 0; at < n; ) at += writeSync(out, buf, at, n - at);
      }
      fsyncSync(out);
    } finally {
      closeSync(out);
    }
    return true;
  } finally {
    closeSync(fd);
  }
}
