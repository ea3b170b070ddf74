// Schema version of the event store and the migrations that bring an older database up to date.
// They run on open inside one write transaction that re-reads the version, so two processes
// opening the same directory at once cannot both migrate.
import type { RootDatabase } from 'lmdb';
import type { Dbs } from './schema.js';

export const SCHEMA_VERSION = 1;
export const VERSION_KEY = 'schemaVersion';

/** Migration to version N (index N): runs inside the write transaction, synchronously. */
export type Migration = (dbs: Dbs) => void;

/**
 * migrations[n] upgrades a database at version n-1 to version n. Version 1 is the first layout:
 * nothing to convert. Add a version 2 by appending a function here and bumping SCHEMA_VERSION.
 */
export const MIGRATIONS: ReadonlyArray<Migration | null> = [null, () => {}];

export interface MigrationReport {
  from: number;
  to: number;
}

export function migrate(
  env: RootDatabase,
  dbs: Dbs,
  migrations: ReadonlyArray<Migration | null> = MIGRATIONS,
  target = SCHEMA_VERSION,
): MigrationReport {
  // transactionSync: blocking is fine at open, and a throwing migration aborts the whole
  // transaction (an async transaction() callback that throws would still commit its writes).
  return env.transactionSync(() => {
    const stored = dbs.meta.get(VERSION_KEY);
    // A database without a version key is new (or empty): it starts at version 0.
    const from = typeof stored === 'number' ? stored : 0;
    if (from > target) {
      throw new Error(`event store schema version ${from} is newer than this orbweaver supports (${target}); refusing to open`);
    }
    for (let v = from + 1; v <= target; v++) {
      const m = migrations[v];
      if (!m) throw new Error(`no migration to event store schema version ${v}`);
      m(dbs);
    }
    if (from !== target) dbs.meta.putSync(VERSION_KEY, target);
    return { from, to: target };
  });
}

export const schemaVersionOf = (dbs: Dbs): number | undefined => dbs.meta.get(VERSION_KEY) as number | undefined;
