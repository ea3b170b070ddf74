// The named LMDB databases of the event store. Binary keys and values throughout (measured:
// ordered-binary keys cost ~25% of write throughput). Names are prefixed "ev." so other modules
// can open their own named databases in the same environment.
import type { Database, RootDatabase } from 'lmdb';
import type { SearchDbs } from './search/schema.js';
import { openGraphDbs, type GraphDbs } from './graph.js';
import type { EventStore } from './types.js';
import { openNamedDb } from './named-db.js';

export type BinDb = Database<Buffer, Buffer>;

/** Entries of a database (LMDB keeps the count: no scan). */
export const entryCount = (db: { getStats(): object }): number => (db.getStats() as { entryCount: number }).entryCount;

export interface Dbs {
  /** serial (5) -> packed header + JSON (codec.ts) */
  events: BinDb;
  /** id (32) -> serial (5) */
  id: BinDb;
  /** created_at + serial -> '' */
  created: BinDb;
  /** kind (2) + created_at + serial -> '' */
  kind: BinDb;
  /** pubkey[0..8] + created_at + serial -> '' */
  pubkey: BinDb;
  /** pubkey[0..8] + kind (2) + created_at + serial -> '' */
  pubkind: BinDb;
  /** tag name + typed value (keys.ts tagPrefix) + kind (2) + created_at + serial -> '' */
  tagkind: BinDb;
  /** tag+kind prefix of a counted (tag, kind) pair (counters.ts) -> count and NIP-45 HLL registers */
  tagcount: BinDb;
  /** address kind + pubkey + sha256(d) -> serial of the stored version */
  addr: BinDb;
  /** deleted id (32) + deleting pubkey (32) -> '' */
  tombId: BinDb;
  /** deleted address (as addr) -> created_at (4) of the newest deletion */
  tombAddr: BinDb;
  /**
   * NIP-62: pubkey (32) of an author who requested to vanish -> created_at (4) of the newest
   * request, then 1 byte: 1 while the author's older events are still being deleted (vanish.ts)
   */
  tombVanish: BinDb;
  /** expiration (4) + serial -> '' */
  expiry: BinDb;
  /**
   * write transaction sequence (6) -> serials it removed (removal-log.ts); absent only in a
   * read-only open of a store no writer of this version has opened yet (answers are then not kept)
   */
  removed?: BinDb;
  /** string keys, msgpack values: schemaVersion */
  meta: Database<unknown, string>;
  /** trust ranks by pubkey (ranks.ts) */
  rank: BinDb;
  /** the follow graph of the list kinds (graph.ts): pubkey ids, follower sets, current lists */
  graph: GraphDbs;
  /** NIP-50 search index (search/schema.ts) */
  search?: SearchDbs;
}

/** The indexes stats() reports, by name. */
export const INDEX_NAMES = ['id', 'created', 'kind', 'pubkey', 'pubkind', 'tagkind', 'tagcount', 'addr', 'tombId', 'tombAddr', 'tombVanish', 'expiry'] as const;
/**
 * meta key set while `orbweaver verify --repair` rebuilds the indexes (commands/check/repair.ts repairStore): a
 * store that still has it was left half rebuilt, and only a repair may open it for writing.
 */
export const REPAIR_META_KEY = 'repairInProgress';

/** The graph's databases stats() reports, by name (graph.ts). */
export const GRAPH_NAMES = ['pkid', 'idpk', 'graph', 'graphcur', 'graphtime'] as const;

/**
 * A database of the store that is not there. Only a read-only open meets one (a writable open
 * creates it): a directory whose store no orbweaver writer has opened yet, or is creating now.
 */
export function missingDb(name: string): never {
  throw new Error(`the store has no database ${name} yet: no orbweaver process has opened it for writing, or one is creating it now (a read-only open creates nothing)`);
}

export function openDbs(env: RootDatabase): Dbs {
  const bin = (name: string): BinDb => env.openDB<Buffer, Buffer>({ name: `ev.${name}`, keyEncoding: 'binary', encoding: 'binary' }) ?? missingDb(`ev.${name}`);
  return {
    events: bin('events'),
    id: bin('id'),
    created: bin('created'),
    kind: bin('kind'),
    pubkey: bin('pubkey'),
    pubkind: bin('pubkind'),
    tagkind: bin('tagkind'),
    tagcount: bin('tagcount'),
    addr: bin('addr'),
    tombId: bin('tomb_id'),
    tombAddr: bin('tomb_addr'),
    // added after schema 5 without a migration (it starts empty): a reader of a store no writer of
    // this version has opened yet finds none, and reads it as empty (named-db.ts)
    tombVanish: openNamedDb<Buffer, Buffer>(env, { name: 'ev.tomb_vanish', keyEncoding: 'binary', encoding: 'binary' }),
    expiry: bin('expiry'),
    removed: env.openDB<Buffer, Buffer>({ name: 'ev.removed', keyEncoding: 'binary', encoding: 'binary' }) ?? undefined,
    meta: env.openDB<unknown, string>({ name: 'ev.meta' }) ?? missingDb('ev.meta'),
    rank: bin('trust_rank'),
    graph: openGraphDbs(bin),
  };
}

/** The LMDB handles of an open store (a store opened by openStore keeps them as `dbs`). */
export function storeDbs(store: EventStore): Dbs {
  const dbs = (store as unknown as { dbs?: Dbs }).dbs;
  if (!dbs?.events) throw new Error('not an LMDB event store');
  return dbs;
}
