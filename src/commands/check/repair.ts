// Rebuilds every derived index of the event store from the stored events (orbweaver verify
// --repair): what verify.ts checks, written again by the writer's own functions.
import type { RootDatabase } from 'lmdb';
import { addressOf } from '../../nostr/kinds.js';
import { CounterBatch } from '../../store/counters.js';
import { GRAPH_KINDS, graphMembers, GraphTxn, isGraphKind, LISTS_KEY, NEXT_PKID_KEY } from '../../store/graph.js';
import { putEntries } from '../../store/indexer.js';
import { EMPTY, idKey, NEXT_SERIAL_KEY, readSerial, serialKey } from '../../store/keys.js';
import { incomingWins } from '../../store/rules.js';
import { entryCount, REPAIR_META_KEY, type BinDb, type Dbs } from '../../store/schema.js';
import { SEARCH_FORMAT_VERSION, SEARCH_META_KEY } from '../../store/search/rebuild.js';
import { addrKeyOf, freshGraph, Meter, parseStored, scan, tick, type Parsed, type Progress } from './stored.js';
import { VanishRepair } from './vanish.js';

export interface RepairOptions {
  /** events per write transaction; default 5,000 */
  batch?: number;
  /** index entries per write transaction (a transaction's dirty pages); default 250,000 */
  maxEntries?: number;
  onProgress?: (p: Progress) => void;
  progressMs?: number;
}

export interface RepairReport {
  events: number;
  /** stored copies the rules drop (same id twice, an older version of an address) and events a request to vanish covers (NIP-62), deleted */
  removed: Array<{ serial: number; id: string; why: string }>;
  /** NIP-62 tombstones written for stored requests to vanish that had none */
  vanishTombstones: number;
  /**
   * pkid and idpk were not inverse maps: idpk was rebuilt from pkid (no id changes), `removed`
   * pubkeys whose id another pubkey holds lost theirs (a new one is allocated when next needed)
   */
  pubkeyIds: { rebuilt: boolean; removed: number };
  /** entries per index after the repair */
  indexes: Record<string, number>;
  seconds: number;
}

/** What the steps of one repair share. */
interface Repair {
  env: RootDatabase;
  dbs: Dbs;
  batch: number;
  maxEntries: number;
  meter: Meter;
  total: number;
  vanish: VanishRepair;
}

/** Whether pkid and idpk are inverse maps (same count, each idpk entry maps back). */
async function pubkeyIdsInverse(dbs: Dbs): Promise<boolean> {
  const { pkid, idpk } = dbs.graph;
  if (entryCount(pkid) !== entryCount(idpk)) return false;
  let ok = true;
  await scan(idpk, true, (key, value) => {
    const back = value.length === 32 ? pkid.getBinary(value) : undefined;
    if (key.length !== 4 || !back || !back.equals(key)) ok = false;
    return ok;
  });
  return ok;
}

/**
 * Rebuilds every derived index from the stored events. Nothing may write to the store meanwhile
 * (the command refuses while a relay runs on it). The derived databases are cleared in one
 * transaction that also marks the repair as running (REPAIR_META_KEY); the events are then indexed
 * in chunks, each its own write transaction, by the writer's functions (putEntries with the chunk's
 * counter notes, GraphTxn.replace); the mark goes last. A repair cut short leaves the mark, which
 * verify reports: run it again. Of two stored copies the rules would not both keep (one id stored
 * twice, two versions of one address) the dropped one is deleted. Pubkey ids are kept: when pkid
 * and idpk are not inverse maps, idpk is rebuilt from pkid. A process that repaired a store should
 * close it before using it otherwise (graph.ts may remember a pubkey id the repair removed).
 */
export async function repairStore(env: RootDatabase, storeDbs: Dbs, opts: RepairOptions = {}): Promise<RepairReport> {
  const t0 = Date.now();
  const keepIds = await pubkeyIdsInverse(storeDbs);
  // a graph object of its own: graph.ts remembers pubkey ids per graph object, and this may remove some
  const dbs: Dbs = { ...storeDbs, graph: freshGraph(storeDbs) };
  const run: Repair = { env, dbs, batch: opts.batch ?? 5000, maxEntries: opts.maxEntries ?? 250_000, meter: new Meter(opts), total: entryCount(dbs.events), vanish: new VanishRepair(dbs) };
  clearDerived(run, keepIds);
  const idsRemoved = keepIds ? 0 : await rebuildIdpk(run);
  const removed = await indexIdsAndAddresses(run);
  await indexTheRest(run, removed);
  finishMeta(run);
  return { events: entryCount(dbs.events), removed, vanishTombstones: run.vanish.restored, pubkeyIds: { rebuilt: !keepIds, removed: idsRemoved }, indexes: indexSizes(dbs), seconds: (Date.now() - t0) / 1000 };
}

/** Clears every derived database (idpk too unless it is kept) and marks the repair as running, in one transaction. */
function clearDerived({ env, dbs }: Repair, keepIds: boolean): void {
  const derived: BinDb[] = [dbs.id, dbs.created, dbs.kind, dbs.pubkey, dbs.pubkind, dbs.tagkind, dbs.tagcount, dbs.expiry, dbs.addr, dbs.graph.graph, dbs.graph.graphcur, dbs.graph.graphtime];
  if (dbs.search) derived.push(dbs.search.keys, dbs.search.docs);
  env.transactionSync(() => {
    for (const db of derived) db.clearSync();
    if (!keepIds) dbs.graph.idpk.clearSync();
    for (const kind of GRAPH_KINDS) dbs.meta.removeSync(LISTS_KEY(kind));
    dbs.meta.putSync(REPAIR_META_KEY, new Date().toISOString());
  });
}

// Each chunk is one synchronous write transaction: if it throws, LMDB aborts all of it (an
// asynchronous transaction() whose callback throws would commit what it wrote). `each` returns
// the entries it wrote: a chunk ends at `batch` events or `maxEntries` entries.
async function forEachChunk({ env, dbs, batch, maxEntries, meter, total }: Repair, phase: string, each: (p: Parsed, key: Buffer) => number, begin?: () => void, end?: () => void): Promise<void> {
  meter.start(phase);
  let last: Buffer | undefined;
  let done = 0;
  for (;;) {
    let n = 0;
    let finished = false;
    env.transactionSync(() => {
      begin?.();
      const rows: Array<{ key: Buffer; value: Buffer }> = [];
      for (const r of dbs.events.getRange({ start: last, exclusiveStart: last !== undefined, limit: batch })) rows.push(r);
      let entries = 0;
      for (const { key, value } of rows) {
        entries += each(parseStored(readSerial(key), value), key);
        n++;
        last = key;
        if (entries >= maxEntries) break;
      }
      finished = rows.length < batch && n === rows.length;
      end?.();
    });
    done += n;
    meter.tick(done, total);
    if (finished || n === 0) break;
    await tick();
  }
}

/** 0. pubkey ids: idpk again from pkid, which the graph's edges were written with; returns the pubkeys whose id was taken (their pkid entry removed). */
async function rebuildIdpk({ env, dbs, batch }: Repair): Promise<number> {
  const { pkid, idpk } = dbs.graph;
  const taken: Buffer[] = [];
  let last: Buffer | undefined;
  for (;;) {
    let n = 0;
    env.transactionSync(() => {
      for (const { key, value } of pkid.getRange({ start: last, exclusiveStart: last !== undefined, limit: batch })) {
        n++;
        last = key;
        if (key.length !== 32 || value.length !== 4 || idpk.doesExist(value)) taken.push(key);
        else idpk.putSync(value, key);
      }
    });
    if (n < batch) break;
    await tick();
  }
  env.transactionSync(() => {
    for (const key of taken) pkid.removeSync(key);
  });
  return taken.length;
}

/**
 * 1. ids and addresses first, so that of two copies the rules would not both keep the dropped
 * one is deleted before anything is indexed; returns the copies deleted.
 */
async function indexIdsAndAddresses(run: Repair): Promise<RepairReport['removed']> {
  const { dbs } = run;
  const removed: RepairReport['removed'] = [];
  const drop = (p: Parsed, why: string): void => {
    dbs.events.removeSync(serialKey(p.serial));
    const at = dbs.id.getBinary(idKey(p.h.id));
    if (at && readSerial(at) === p.serial) dbs.id.removeSync(idKey(p.h.id));
    removed.push({ serial: p.serial, id: p.h.id, why });
  };
  await forEachChunk(run, 'ids and addresses', (p, key) => {
    const idK = idKey(p.h.id);
    if (dbs.id.doesExist(idK)) {
      drop(p, 'the same event is stored at a lower serial');
      return 1;
    }
    dbs.id.putSync(idK, key);
    // NIP-62: every tombstone in place before step 2 leaves out what they cover
    run.vanish.tomb(p);
    const ak = addrKeyOf(p.ev);
    if (!ak) return 1;
    const at = dbs.addr.getBinary(ak);
    const otherValue = at ? dbs.events.getBinary(at) : undefined;
    if (at && otherValue) {
      const other = parseStored(readSerial(at), otherValue);
      if (!incomingWins(other.h, p.h)) {
        drop(p, `an older version of ${addressOf(p.ev)} (serial ${other.serial} is kept)`);
        return 2;
      }
      drop(other, `an older version of ${addressOf(p.ev)} (serial ${p.serial} is kept)`);
    }
    dbs.addr.putSync(ak, key);
    return 2;
  });
  return removed;
}

/**
 * The writes of a chunk, gathered per database and written in key order at its end (a bulk write
 * is cheaper by the pages it dirties: in key order a page takes many keys at once). Only writes
 * are gathered: the pubkey ids, which GraphTxn reads back as it allocates them, are written at
 * once. Keys as latin1 strings (one character per byte): the default sort compares them natively
 * in byte order, where a comparator calling Buffer.compare took a fifth of the repair. Values are
 * empty but for the search documents, which are gathered with theirs.
 */
class GatheredWrites {
  private readonly pending = new Map<BinDb, string[]>();
  private readonly withValues = new Map<BinDb, Array<[Buffer, Buffer]>>();
  /** `dbs` with every index the chunk writes in bulk replaced by one that gathers */
  readonly bulk: Dbs;

  constructor(dbs: Dbs) {
    const gather = (db: BinDb): BinDb => {
      const list: string[] = [];
      this.pending.set(db, list);
      return { putSync: (key: Buffer) => void list.push(key.toString('latin1')) } as unknown as BinDb;
    };
    const gatherValues = (db: BinDb): BinDb => {
      const list: Array<[Buffer, Buffer]> = [];
      this.withValues.set(db, list);
      return { putSync: (key: Buffer, value: Buffer) => void list.push([Buffer.from(key), value]) } as unknown as BinDb;
    };
    this.bulk = {
      ...dbs,
      created: gather(dbs.created), kind: gather(dbs.kind), pubkey: gather(dbs.pubkey), pubkind: gather(dbs.pubkind),
      tagkind: gather(dbs.tagkind), expiry: gather(dbs.expiry),
      graph: { ...dbs.graph, graph: gather(dbs.graph.graph) },
      search: dbs.search ? { ...dbs.search, keys: gather(dbs.search.keys), docs: gatherValues(dbs.search.docs) } : undefined,
    };
  }

  /** Forgets what a chunk gathered (its transaction was retried or aborted). */
  clear(): void {
    for (const list of this.pending.values()) list.length = 0;
    for (const list of this.withValues.values()) list.length = 0;
  }

  /** Writes what was gathered, in key order per database. */
  write(): void {
    for (const [db, list] of this.pending) {
      list.sort();
      for (const key of list) db.putSync(Buffer.from(key, 'latin1'), EMPTY);
      list.length = 0;
    }
    for (const [db, list] of this.withValues) {
      list.sort((a, b) => Buffer.compare(a[0], b[0]));
      for (const [key, value] of list) db.putSync(key, value);
      list.length = 0;
    }
  }
}

/**
 * 2. every other index, the graph and the counters, by the writer's own functions; the counter
 * notes, the pubkey id counter and the list counts are written at the end of each chunk, the
 * index entries in key order (GatheredWrites). An event a request to vanish covers (NIP-62) is
 * deleted instead, with the id and address entries step 1 gave it.
 */
async function indexTheRest(run: Repair, removed: RepairReport['removed']): Promise<void> {
  const { dbs, vanish } = run;
  const writes = new GatheredWrites(run.dbs);
  const { bulk } = writes;
  let counters = new CounterBatch();
  let graph = new GraphTxn(bulk, () => {}, counters);
  await forEachChunk(
    run,
    'indexes',
    (p, key) => {
      const why = vanish.covers(p);
      if (why) {
        dbs.events.removeSync(key);
        const idK = idKey(p.h.id);
        if (dbs.id.getBinary(idK)?.equals(key)) dbs.id.removeSync(idK);
        const ak = addrKeyOf(p.ev);
        if (ak && dbs.addr.getBinary(ak)?.equals(key)) dbs.addr.removeSync(ak);
        removed.push({ serial: p.serial, id: p.h.id, why: why.replace(/^blocked: /, '') });
        return 1;
      }
      let n = putEntries(bulk, p.ev, p.serial, p.h.expiration, counters);
      if (isGraphKind(p.h.kind)) n += graph.replace(p.h.kind, p.h.pubkey, [], graphMembers(p.h.kind, p.ev.tags), { createdAt: p.h.created_at, serial: p.serial });
      return n;
    },
    () => {
      writes.clear();
      counters = new CounterBatch();
      graph = new GraphTxn(bulk, () => {}, counters);
    },
    () => {
      graph.finish(); // first: it puts the chunk's follow edges (GraphTxn holds them until then) into what write() writes
      writes.write();
      counters.apply(run.dbs.tagcount);
    },
  );
}

/** 3. meta: the next serial above every stored one, the search index's marker, the repair done. */
function finishMeta(run: Repair): void {
  const { env, dbs } = run;
  let maxSerial = 0;
  for (const k of dbs.events.getKeys({ reverse: true, limit: 1 })) maxSerial = readSerial(k);
  let maxId = 0;
  for (const k of dbs.graph.idpk.getKeys({ reverse: true, limit: 1 })) maxId = k.length === 4 ? k.readUInt32BE(0) : 0;
  env.transactionSync(() => {
    const nextId = dbs.meta.get(NEXT_PKID_KEY);
    if (maxId > 0 && !(typeof nextId === 'number' && nextId > maxId)) dbs.meta.putSync(NEXT_PKID_KEY, maxId + 1);
    const next = dbs.meta.get(NEXT_SERIAL_KEY);
    if (maxSerial > 0 && !(typeof next === 'number' && next > maxSerial)) dbs.meta.putSync(NEXT_SERIAL_KEY, maxSerial + 1);
    if (dbs.search) dbs.meta.putSync(SEARCH_META_KEY, { version: SEARCH_FORMAT_VERSION, kinds: [...dbs.search.kinds].sort((a, b) => a - b) });
    // step 2 deleted what every request to vanish covers
    run.vanish.applied();
    dbs.meta.removeSync(REPAIR_META_KEY);
  });
}

/** Entries per index after the repair. */
function indexSizes(dbs: Dbs): Record<string, number> {
  const indexes: Record<string, number> = {};
  const g = dbs.graph;
  for (const [name, db] of Object.entries({ id: dbs.id, created: dbs.created, kind: dbs.kind, pubkey: dbs.pubkey, pubkind: dbs.pubkind, tagkind: dbs.tagkind, tagcount: dbs.tagcount, addr: dbs.addr, expiry: dbs.expiry, pkid: g.pkid, idpk: g.idpk, graph: g.graph, graphcur: g.graphcur, graphtime: g.graphtime })) indexes[name] = entryCount(db);
  if (dbs.search) {
    indexes.searchKeys = entryCount(dbs.search.keys);
    indexes.searchDocs = entryCount(dbs.search.docs);
  }
  return indexes;
}
