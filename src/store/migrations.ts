// Schema version of the event store and the migrations that bring an older database up to date.
// They run on open inside one write transaction that re-reads the version, so two processes
// opening the same directory at once cannot both migrate.
import type { RootDatabase } from 'lmdb';
import { createdAtOf, jsonOf, kindOf, pubkeyHexOf } from './codec.js';
import { CounterBatch } from './counters.js';
import { noteCounted, visitTagEntries } from './indexer.js';
import { EMPTY, kindPrefix, readSerial, SERIAL_BYTES, tagKindPrefix, tagPrefix } from './keys.js';
import { GRAPH_KINDS, graphMembers, GraphTxn, listTimeKey } from './graph.js';
import type { Dbs } from './schema.js';

export const SCHEMA_VERSION = 5;
export const VERSION_KEY = 'schemaVersion';

/** Migration to version N (index N): runs inside the write transaction, synchronously. */
export type Migration = (dbs: Dbs, env: RootDatabase) => void;

/** Counter notes applied every this many events, so a large store's rebuild holds a bounded map. */
const COUNTER_CHUNK = 5000;

/**
 * Version 2: the tag index (name + value + created_at) becomes the tag+kind index (name + value +
 * kind + created_at), and the NIP-45 counters (counters.ts) start. Both are rebuilt from the stored
 * events, then the old tag index is dropped. Takes about as long as indexing the events' tags did.
 */
function tagKindIndex(dbs: Dbs, env: RootDatabase): void {
  const counters = new CounterBatch();
  let n = 0;
  for (const { key, value } of dbs.events.getRange({})) {
    const { tags } = JSON.parse(jsonOf(value)) as { tags: string[][] };
    const ev = { pubkey: pubkeyHexOf(value), created_at: createdAtOf(value), kind: kindOf(value), tags };
    visitTagEntries(dbs, ev, readSerial(key), (db, k) => db.putSync(k, EMPTY), noteCounted(counters, ev, 1), true);
    if (++n % COUNTER_CHUNK === 0) counters.apply(dbs.tagcount);
  }
  counters.apply(dbs.tagcount);
  env.openDB<Buffer, Buffer>({ name: 'ev.tag', keyEncoding: 'binary', encoding: 'binary' }).dropSync();
}

/**
 * Version 3: the `p` tags of the graph kinds (follow and mute lists) move from the tag+kind index
 * to the follow graph (graph.ts). The counters count the same follows and stay as they are.
 */
function followGraph(dbs: Dbs): void {
  const graph = new GraphTxn(dbs, () => {}, null);
  const tail = Buffer.allocUnsafe(4 + SERIAL_BYTES);
  for (const kind of GRAPH_KINDS) {
    const prefix = kindPrefix(kind);
    const end = kindPrefix(kind + 1);
    for (const key of dbs.kind.getKeys({ start: prefix, end })) {
      if (key.length !== 2 + 4 + SERIAL_BYTES) continue;
      const serial = readSerial(key, 6);
      const value = dbs.events.getBinary(key.subarray(6));
      if (!value) continue;
      const { tags } = JSON.parse(jsonOf(value)) as { tags: string[][] };
      const members = graphMembers(kind, tags);
      key.copy(tail, 0, 2);
      for (const m of members) dbs.tagkind.removeSync(Buffer.concat([tagKindPrefix(tagPrefix('p', m).prefix, kind), tail]));
      graph.replace(kind, pubkeyHexOf(value), [], members, { createdAt: createdAtOf(value), serial });
    }
  }
  graph.finish();
}

/**
 * Version 5: ev.graphtime, each current list by kind and time with its author (graph.ts), read
 * backwards from graphcur: one entry per current follow and mute list. It replaces version 4's
 * ev.graphser (the author by serial alone), which is dropped; a store at version 3 goes straight here.
 */
function graphTimes(dbs: Dbs, env: RootDatabase): void {
  for (const { key, value } of dbs.graph.graphcur.getRange({})) {
    if (key.length !== 6 || value.length < 4 + SERIAL_BYTES) continue;
    dbs.graph.graphtime.putSync(listTimeKey(key.readUInt16BE(0), value.readUInt32BE(0), readSerial(value, 4)), key.subarray(2, 6));
  }
  env.openDB<Buffer, Buffer>({ name: 'ev.graphser', keyEncoding: 'binary', encoding: 'binary' }).dropSync();
}

/**
 * migrations[n] upgrades a database at version n-1 to version n. Version 1 is the first layout:
 * nothing to convert. Add a version by appending a function here and bumping SCHEMA_VERSION.
 */
export const MIGRATIONS: ReadonlyArray<Migration | null> = [
  null,
  () => {},
  tagKindIndex,
  followGraph,
  // version 4 built ev.graphser, which version 5 replaces with what it builds from the same source
  () => {},
  graphTimes,
];

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
      m(dbs, env);
    }
    if (from !== target) dbs.meta.putSync(VERSION_KEY, target);
    return { from, to: target };
  });
}

export const schemaVersionOf = (dbs: Dbs): number | undefined => dbs.meta.get(VERSION_KEY) as number | undefined;
