// A consistent copy of a live store: LMDB's own copy (mdb_env_copy2 through lmdb-js's
// env.backup, without compaction) from a process that opened the store read-only.
//
// How it stays consistent without stopping anyone: the copy takes the writers' lock only while it
// writes the two meta pages (a few KiB), then copies every page up to the last one in use under a
// read transaction, the snapshot those meta pages describe. Writers go on meanwhile; pages they free
// are not reused until the copy ends (the live file may grow by what is written during it), and
// readers never wait. LMDB writes the copy with O_DIRECT where the file system allows it, so the
// copy does not fill the page cache.
//
// Not the compacting copy (MDB_CP_COMPACT): lmdb-js#198 reports it corrupting, and tried on a store
// of this shape it aborted the process (docs/storage.md, "Backups"). The plain copy is as long as
// the pages in use (no sparse tail), which is what `orbweaver stats` calls the store size.
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { procStatusBytes } from '../../lib/proc-status.js';
import type { RootDatabase } from 'lmdb';

export interface CopyProgress {
  copied: number;
  total: number;
}

/** The data file LMDB writes into a copy's directory (the store is always a directory: store/index.ts). */
export const DATA_FILE = 'data.mdb';

const fileSize = (path: string): number => {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
};

/**
 * This process's resident pages of mapped files (RssFile, Linux), in bytes; null where unknown.
 * LMDB writes the copy in writes of up to 1 GiB, so the copy's length moves in steps that large;
 * the pages the copy has read through this process's map of the store grow page by page.
 */
const mappedBytes = (): number | null => procStatusBytes('RssFile');

/**
 * Copies the store of `env` into the existing, empty directory `dir` (its data.mdb must not
 * exist). `total` is the store's size in use when the copy starts (progress only: the snapshot may
 * be a little larger). Progress every `everyMs`: the larger of the copy's length and the store's
 * pages this process has mapped since the copy began.
 */
export async function copyStore(env: RootDatabase, dir: string, total: number, onProgress?: (p: CopyProgress) => void, everyMs = 1000): Promise<number> {
  const file = join(dir, DATA_FILE);
  const base = mappedBytes();
  const copied = (): number => Math.min(total, Math.max(fileSize(file), base === null ? 0 : (mappedBytes() ?? base) - base));
  const timer = onProgress ? setInterval(() => onProgress({ copied: copied(), total }), everyMs) : null;
  try {
    await env.backup(dir, false);
  } finally {
    if (timer) clearInterval(timer);
  }
  return fileSize(file);
}
