// A named database of the store's environment, for the modules that keep records beside the events
// (the spider's relays, runs and known authors, the monitor's history and candidates).
//
// A reader opens the environment read-only (MDB_RDONLY: index.ts, OpenStoreOptions.readOnly), and
// there lmdb-js cannot create a database: it returns undefined for one its writer never created (a
// relay that never ran its spider has no relay records). Such a database reads as empty here, and
// writing to it fails as writing to any database of a read-only environment does.
import type { Database, DatabaseOptions, Key, RootDatabase } from 'lmdb';

/** Opens `name` in `env`; in a read-only environment that lacks it, an empty database that cannot be written. */
export function openNamedDb<V, K extends Key>(env: RootDatabase, options: DatabaseOptions & { name: string }): Database<V, K> {
  return env.openDB<V, K>(options) ?? (new EmptyDb(options.name) as unknown as Database<V, K>);
}

/** The reads of an lmdb-js database that has nothing in it; every write throws, naming the database. */
class EmptyDb {
  constructor(readonly name: string) {}
  get(): undefined {
    return undefined;
  }
  getBinary(): undefined {
    return undefined;
  }
  getBinaryFast(): undefined {
    return undefined;
  }
  doesExist(): boolean {
    return false;
  }
  getCount(): number {
    return 0;
  }
  getKeysCount(): number {
    return 0;
  }
  getStats(): { entryCount: number } {
    return { entryCount: 0 };
  }
  getRange(): never[] {
    return [];
  }
  getKeys(): never[] {
    return [];
  }
  getValues(): never[] {
    return [];
  }
  /** Every write method of a database: refused, naming it. */
  static {
    for (const m of ['put', 'putSync', 'remove', 'removeSync', 'transaction', 'transactionSync', 'clearSync', 'clearAsync', 'drop', 'dropSync']) {
      Object.defineProperty(EmptyDb.prototype, m, {
        value(this: EmptyDb): never {
          throw new Error(`the store is open read-only and has no database ${this.name}: only the process that writes the store (the relay) creates it`);
        },
      });
    }
  }
}
