// The data directory, checked before LMDB sees it. LMDB's own errors name neither the path nor the
// fix ("Permission denied: Attempting to setup locks"), lmdb-js creates a store wherever it is
// pointed (so `stats --data /wrong/path` used to report an empty store), and Node's recursive
// mkdir loops forever on paths such as /proc/nope. Every command and the relay open their data
// directory through here: 'create' for the ones that write (relay, import, spider), 'existing' for
// the read-only ones (stats, export, directory), which never create anything.
//
// What a command creates is its user's alone: the data directory 0700, its files 0600 (the store
// holds every DM and seal, whatever the relay lets clients read). The CLI sets PRIVATE_UMASK for
// the whole process before anything is created, rather than a mode at each place that creates a
// file: lmdb-js creates data.mdb and lock.mdb itself (with LMDB's 0664 less the umask: measured
// 0644 under the usual 022, 0600 under 077), and the writer lock, relay.json, the readers'
// requests, an import's spill files and a backup are made in as many other places. A directory made looser by an earlier version or by hand is not changed (it
// may be shared with a backup agent on purpose); the writers warn about it (openToOthers).
import { accessSync, constants, mkdirSync, readdirSync, statSync } from 'node:fs';
import { userInfo } from 'node:os';
import { dirname, join, resolve } from 'node:path';

/** The process umask of every command (cli.ts): directories it creates are 0700, files 0600. */
export const PRIVATE_UMASK = 0o077;

/** A data-directory problem, with a message that names the path and what to do about it. */
export class DataDirError extends Error {}

const WHERE = '--data, ORBWEAVER_DATA_DIR or dataDir in relay.config.json';

/** "uid 1000 (node)": the user that needs access, as `chown` wants it. */
function currentUser(): { uid: number; gid: number; text: string } {
  const uid = process.getuid?.() ?? -1;
  const gid = process.getgid?.() ?? -1;
  let name = '';
  try { name = userInfo().username; } catch { /* a uid without a passwd entry (docker run --user 1234) */ }
  return { uid, gid, text: `uid ${uid}${name ? ` (${name})` : ''}` };
}

function ownershipFix(path: string): string {
  const u = currentUser();
  return `give it to that user: chown -R ${u.uid}:${u.gid} ${path} (with Docker: chown the host directory of the bind mount, or use a named volume)`;
}

const errno = (e: unknown) => (e as NodeJS.ErrnoException).code ?? '';
const shown = (dir: string, abs: string) => (dir === abs ? abs : `${dir} (${abs})`);

/** Creates the missing directories of `abs` one level at a time (no recursive mkdir: see above). */
function createDirs(dir: string, abs: string): void {
  const missing: string[] = [];
  for (let p = abs; ; p = dirname(p)) {
    try {
      if (!statSync(p).isDirectory()) throw new DataDirError(`cannot create data directory ${shown(dir, abs)}: ${p} is not a directory`);
      break;
    } catch (e) {
      if (e instanceof DataDirError) throw e;
      if (errno(e) !== 'ENOENT') throw new DataDirError(`cannot create data directory ${shown(dir, abs)}: ${p}: ${(e as Error).message}`);
      missing.unshift(p);
      if (dirname(p) === p) break;
    }
  }
  for (const p of missing) {
    try {
      mkdirSync(p);
    } catch (e) {
      if (errno(e) === 'EEXIST') continue;
      if (errno(e) === 'EACCES' || errno(e) === 'EPERM') {
        throw new DataDirError(`cannot create data directory ${shown(dir, abs)}: ${dirname(p)} is not writable by ${currentUser().text}, the user this runs as; create ${abs} and ${ownershipFix(abs)}`);
      }
      throw new DataDirError(`cannot create data directory ${shown(dir, abs)}: mkdir ${p} failed (${errno(e) || (e as Error).message}); choose another path with ${WHERE}`);
    }
  }
}

/**
 * Checks (and for 'create', makes) the data directory; returns its absolute path. Throws
 * DataDirError when it is missing (read-only use), not a directory, holds no store (read-only
 * use), or is not readable and writable by this process (LMDB's lock file needs write access even
 * for readers).
 */
export function checkDataDir(dir: string, mode: 'create' | 'existing'): string {
  const abs = resolve(dir);
  let isDir: boolean;
  try {
    isDir = statSync(abs).isDirectory();
  } catch (e) {
    if (errno(e) === 'EACCES') throw new DataDirError(`cannot reach data directory ${shown(dir, abs)}: a parent directory is not readable by ${currentUser().text}`);
    if (errno(e) === 'ENOTDIR') throw new DataDirError(`data directory ${shown(dir, abs)}: a part of the path is not a directory`);
    if (errno(e) !== 'ENOENT') throw new DataDirError(`data directory ${shown(dir, abs)}: ${(e as Error).message}`);
    if (mode === 'existing') throw new DataDirError(`data directory ${shown(dir, abs)} does not exist: point ${WHERE} at the relay's data directory`);
    createDirs(dir, abs);
    isDir = true;
  }
  if (!isDir) throw new DataDirError(`data directory ${shown(dir, abs)} is not a directory: point ${WHERE} at a directory`);
  const store = join(abs, 'data.mdb');
  let hasStore = true;
  try { statSync(store); } catch { hasStore = false; }
  if (mode === 'existing' && !hasStore) throw new DataDirError(`${shown(dir, abs)} holds no orbweaver store (no data.mdb): point ${WHERE} at the relay's data directory`);
  for (const p of [abs, ...(hasStore ? [store, join(abs, 'lock.mdb')] : [])]) {
    try {
      accessSync(p, constants.R_OK | constants.W_OK | (p === abs ? constants.X_OK : 0));
    } catch (e) {
      if (errno(e) === 'ENOENT') continue; // lock.mdb is created on open
      throw new DataDirError(`data directory ${shown(dir, abs)} is not writable by ${currentUser().text}, the user this runs as${p === abs ? '' : ` (${p})`}; ${ownershipFix(abs)}`);
    }
  }
  return abs;
}

const octal = (mode: number) => (mode & 0o777).toString(8).padStart(4, '0');

/**
 * A warning when other local users may enter the data directory `abs` (its mode grants the group
 * or others anything), naming the files they could also read and the fix; null when it is private.
 */
export function openToOthers(abs: string): string | null {
  let mode: number;
  try { mode = statSync(abs).mode; } catch { return null; }
  if ((mode & 0o077) === 0) return null;
  const readable: string[] = [];
  try {
    for (const name of readdirSync(abs).sort()) {
      try {
        const st = statSync(join(abs, name));
        if (st.isFile() && (st.mode & 0o044) !== 0) readable.push(`${name} ${octal(st.mode)}`);
      } catch { /* gone meanwhile */ }
    }
  } catch { /* listed below as the directory alone */ }
  return `data directory ${abs} has mode ${octal(mode)}, not 0700: other local users may enter it` +
    (readable.length ? ` and read ${readable.join(', ')}` : '') +
    `; make it private: chmod 700 ${abs} (files this relay creates are 0600; see docs/operating.md, "The data directory")`;
}
