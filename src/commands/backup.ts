// orbweaver backup DIR: a consistent copy of the data directory while the relay runs and writes —
// the store (commands/check/backup.ts) and the directory's key files — that a relay and `orbweaver verify`
// open as they are. Restoring is the same command the other way, `orbweaver backup DATA --data DIR`:
// LMDB writes its copy past the page cache, which a `cp` would fill with the large folios that
// slow a relay's writes (docs/storage.md, "Read-ahead"; docs/operating.md, "Backups"). The copy is made in DIR.partial and renamed to DIR once it is complete and on disk, so
// a backup killed at any moment leaves either no DIR or a whole one, and never touches the store.
// Which paths it may write and read is decided on real paths, and no link in the data directory is
// followed (check/backup-paths.ts).
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { Config } from '../config.js';
import { OWNER_FILE } from '../app/owner.js';
import { WRITER_LOCK_FILE } from '../store/writer-lock.js';
import { GATE_PREFIX } from '../store/reader-gate.js';
import { VERSION } from '../relay/version.js';
import { copyStore, DATA_FILE } from './check/backup.js';
import { openStore } from '../store/index.js';
import { storeMapOptions } from '../config/relay.js';
import { schemaVersionOf } from '../store/migrations.js';
import { storeDbs } from '../store/schema.js';
import { fmt, openCommandStore, rejectUnknown, takeFlag, UsageError } from './common.js';
import { checkTarget, copyRegularFile, refuseLinks } from './check/backup-paths.js';

export const BACKUP_USAGE = `usage: orbweaver backup DIR [--json]
  copies the data directory into DIR, a new directory, while the relay runs: the store as one
  consistent snapshot (writers wait only while its first page is written; nothing else waits) and
  the directory's key files. Progress on stderr; --json: the summary as JSON on stdout.
  Restore, with the relay stopped: move the data directory away, then orbweaver backup DATA --data DIR
  (the same copy the other way; docs/operating.md, "Backups"). orbweaver verify --data DIR checks one.`;

/** What a backup holds besides the store, written last into DIR. */
export const MANIFEST_FILE = 'backup.json';
/** Marks a directory as an unfinished backup of this command (its leftovers may be removed). */
const PARTIAL_MARK = '.orbweaver-backup-partial';
/** Files of a data directory that are not copied: the store (copied by LMDB), its lock files (LMDB's, the writer's), the running relay's record, a manifest (written anew). */
const NOT_COPIED = new Set([DATA_FILE, 'lock.mdb', WRITER_LOCK_FILE, OWNER_FILE, MANIFEST_FILE]);

export interface BackupReport {
  dir: string;
  source: string;
  events: number;
  bytes: number;
  schemaVersion: number | undefined;
  files: string[];
  seconds: number;
}

function fsyncPath(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** The directory the copy is made in, DIR.partial (a leftover of a killed run is removed first), marked as this command's. */
function startPartial(target: string): string {
  if (existsSync(target)) rmSync(target, { recursive: true }); // empty: checkTarget
  const partial = `${target}.partial`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial);
  writeFileSync(join(partial, PARTIAL_MARK), `orbweaver backup in progress, pid ${process.pid}\n`);
  return partial;
}

/** Regular files of the data directory other than the store's own (the local, monitor and NIP-85 keys), mode kept; links refused. */
function copyDirectoryFiles(from: string, to: string): string[] {
  const copied: string[] = [];
  for (const name of readdirSync(from).sort()) {
    if (NOT_COPIED.has(name) || name.startsWith(GATE_PREFIX)) continue; // and other readers' requests to the writer (reader-gate.ts)
    if (copyRegularFile(join(from, name), join(to, name))) copied.push(name);
  }
  return copied;
}

export async function backupCommand(config: Config, argv: string[]): Promise<number> {
  const args = [...argv];
  if (takeFlag(args, '--help')) { process.stdout.write(BACKUP_USAGE + '\n'); return 0; }
  const json = takeFlag(args, '--json');
  const positional = args.filter((a) => !a.startsWith('-'));
  rejectUnknown(args.filter((a) => a.startsWith('-')), ['--json', '--help'], 'backup');
  if (positional.length !== 1) throw new UsageError(`name one directory to back up into: ${BACKUP_USAGE.split('\n')[0]!.slice('usage: '.length)}`);
  const target = resolve(positional[0]!);
  const source = resolve(config.dataDir);
  checkTarget(target, source, PARTIAL_MARK);
  refuseLinks(source); // before LMDB opens data.mdb and lock.mdb
  const t0 = performance.now();
  const store = await openCommandStore(config);
  let report: BackupReport;
  try {
    const partial = startPartial(target);
    const s = store.stats();
    const mb = (n: number) => `${(n / 1024 / 1024).toFixed(0)} MiB`;
    process.stderr.write(`backup: copying ${fmt(s.events)} events (${mb(s.bytes)}) from ${source} into ${target}\n`);
    let bytes: number;
    try {
      bytes = await copyStore(store.env, partial, s.bytes, (p) => {
        const pct = p.total > 0 ? Math.min(100, Math.floor((100 * p.copied) / p.total)) : 0;
        process.stderr.write(`backup: ${mb(p.copied)} of ${mb(p.total)} (${pct}%)\n`);
      });
      fsyncPath(join(partial, DATA_FILE));
    } catch (e) {
      // a full target disk, a file system refusing the copy: nothing half-made stays behind
      rmSync(partial, { recursive: true, force: true });
      throw new UsageError(`copying the store into ${partial} failed: ${(e as Error).message}; nothing was kept. The copy needs about ${mb(s.bytes)} free on that file system (df -h ${dirname(target)})`);
    }
    // what the snapshot holds, read from the copy itself (which also shows that it opens)
    const copy = await openStore({ dir: partial, mapSize: storeMapOptions(config).mapSize, readOnly: true });
    let events: number;
    let schemaVersion: number | undefined;
    try {
      events = copy.stats().events;
      schemaVersion = schemaVersionOf(storeDbs(copy));
    } finally {
      await copy.close();
    }
    rmSync(join(partial, 'lock.mdb'), { force: true });
    const files = copyDirectoryFiles(source, partial);
    report = { dir: target, source, events, bytes, schemaVersion, files, seconds: (performance.now() - t0) / 1000 };
    const manifest = { orbweaver: VERSION, takenAt: new Date().toISOString(), ...report, dir: undefined };
    writeFileSync(join(partial, MANIFEST_FILE), JSON.stringify(manifest, null, 2) + '\n');
    fsyncPath(join(partial, MANIFEST_FILE));
    rmSync(join(partial, PARTIAL_MARK));
    fsyncPath(partial);
    renameSync(partial, target);
    fsyncPath(dirname(target));
  } finally {
    await store.close();
  }
  if (json) process.stdout.write(JSON.stringify(report, null, 2) + '\n');
  else {
    process.stdout.write(
      `backup of ${source}: ${fmt(report.events)} events, ` +
        `${(report.bytes / 1024 / 1024).toFixed(1)} MiB, ${report.files.length ? `with ${report.files.join(', ')}, ` : ''}in ${report.seconds.toFixed(1)} s\n` +
        `  into ${target}\n` +
        `  check it: orbweaver verify --data ${target}\n` +
        `  restore it (relay stopped): mv ${source} ${source}.old && orbweaver backup ${source} --data ${target}\n`,
    );
  }
  return 0;
}
