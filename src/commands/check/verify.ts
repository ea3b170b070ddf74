// Checks every derived index of the event store against the stored events (verifyStore), and
// rebuilds them from the events (repairStore, repair.ts). Store code only: src/commands/verify.ts is the CLI.
//
// What is derived, and so checked: the id and address maps, the time-ordered indexes (created,
// kind, pubkey, pubkind, tag+kind), expiry, the search postings and documents, the follow graph
// (edges and each author's current list; pubkey ids must be inverse maps), the NIP-45 counters
// (their counts, not their HLL registers, which may be stale by design; an expired event not swept
// yet is counted, as the writer counts it) and a few meta values (next serial, next pubkey id, the
// graph's list counts). Not derived, so neither checked nor touched: the events themselves,
// deletion tombstones (a tombstone outlives what it deleted), trust ranks. The NIP-62 tombstones
// are checked against the events they concern, not rebuilt (vanish.ts).
//
// What an event's entries are is defined once, by the writer's own functions: indexer.ts
// visitEntries (checked with a visit that hashes or looks up each key, rebuilt with putEntries) and
// graph.ts graphMembers / GraphTxn.replace. Nothing here says again which keys an event has.
//
// How, in bounded memory for any store size: the events are read in chunks, and each entry they
// call for is added to a fingerprint of its index (per bucket of key hashes: a count and two sums
// of hashes); then each index is read in key order into a fingerprint of what it holds. Equal
// fingerprints: the index holds exactly what the events call for (a sequential read of the index,
// not a random lookup per entry: less than half the time on a store of 100,000 directory events,
// 3.3 million follows). Only in the buckets that differ are the events' entries looked up (the
// missing ones) and the index's entries checked against their events (the extra ones). No set of
// every key is held anywhere.
//
// Each chunk is its own short read (the caller yields between chunks, so lmdb-js renews its read
// snapshot): not one snapshot. Run it with nothing writing to the store; the command refuses while
// a relay runs on the data directory.
import type { RootDatabase } from 'lmdb';
import { addressOf } from '../../nostr/kinds.js';
import { idHexOf } from '../../store/codec.js';
import { decodeCounter, isCountedPair } from '../../store/counters.js';
import { GRAPH_KINDS, graphMembers, idPubkey, isGraphKind, kindIdKey, listTimeKey, LISTS_KEY, NEXT_PKID_KEY, pubkeyId, setRange } from '../../store/graph.js';
import { visitEntries } from '../../store/indexer.js';
import { addrKey, expiryKeySerial, idKey, keySerial, NEXT_SERIAL_KEY, readSerial, SERIAL_BYTES, serialKey, SUFFIX_BYTES, tagKindPrefix, tagPrefix, tagTypeAt, TYPE_HEX } from '../../store/keys.js';
import { SCHEMA_VERSION, VERSION_KEY } from '../../store/migrations.js';
import { incomingWins } from '../../store/rules.js';
import type { BinDb, Dbs } from '../../store/schema.js';
import { SEARCH_FORMAT_VERSION, SEARCH_META_KEY } from '../../store/search/rebuild.js';
import { postingSerial } from '../../store/search/schema.js';
import { SPOOL_FROM_KEY } from '../../store/spool.js';
import { entryCount, REPAIR_META_KEY } from '../../store/schema.js';
import { Fingerprint } from './fingerprint.js';
import { addrKeyOf, describe, freshGraph, hex, Meter, parseStored, scan, short, tick, type Parsed, type Progress } from './stored.js';
import { pendingVanishMeta, VanishCheck, type VanishReport } from './vanish.js';

export type { Progress } from './stored.js';

export class StoreVersionError extends Error {}

/** meta key set while a repair runs: the indexes are partial until it is gone */
export { REPAIR_META_KEY };

/** One difference, as listed (the key in hex, and what is wrong with it). */
export interface Sample {
  problem: 'missing' | 'extra' | 'wrong';
  key: string;
  detail: string;
}

export interface IndexCheck {
  name: string;
  /** entries the index holds */
  entries: number;
  /** entries the stored events call for */
  expected: number;
  /** expected entries that are absent */
  missing: number;
  /** entries no stored event calls for (dangling: pointing at no event, or at one that should not have them) */
  extra: number;
  /** entries present under the right key with a wrong value (an id or address pointing elsewhere, a wrong count ...) */
  wrong: number;
  /** the first differences found (at most `samples` per index) */
  samples: Sample[];
}

/** Two stored events where the rules keep one: the same id twice, or two versions of one address. */
export interface Duplicate {
  what: 'id' | 'address';
  /** the serial of the copy the rules drop (repair deletes it) */
  serial: number;
  /** the serial of the one kept */
  kept: number;
  detail: string;
}

export interface MetaCheck {
  key: string;
  found: unknown;
  expected: unknown;
  detail: string;
}

export interface VerifyReport {
  events: number;
  seconds: number;
  clean: boolean;
  /** entries, per index (including tagcount, pkid and idpk) */
  indexes: IndexCheck[];
  duplicates: { count: number; samples: Duplicate[] };
  /** events whose stored JSON does not parse (checked by their header alone) */
  unreadable: { count: number; serials: number[] };
  meta: MetaCheck[];
  /** NIP-62: stored events a request to vanish covers, stored requests without their tombstone (vanish.ts) */
  vanish: VanishReport;
  /** what was not checked, and why */
  notes: string[];
}

export interface VerifyOptions {
  /** how many differences are listed per index (totals are always exact); default 20 */
  samples?: number;
  /** events per read chunk; default 1,000 */
  chunk?: number;
  onProgress?: (p: Progress) => void;
  /** ms between onProgress calls; default 3,000 */
  progressMs?: number;
}


/** Keys remembered to tell apart two kinds of difference (wrong values, counted missing counters); beyond this counts may be approximate. */
const KEY_SET_CAP = 100_000;
/** graph members held by the cache of current lists while extra edges are looked for */
const LIST_CACHE_MEMBERS = 500_000;
/** pubkey ids remembered while the events are read (~150 bytes each) */
const ID_CACHE = 500_000;

/** The key just past every key that starts with `prefix` (prefix + 1 at its last byte, with carry). */
function prefixEnd(prefix: Uint8Array): Buffer {
  const b = Buffer.from(prefix);
  for (let i = b.length - 1; i >= 0; i--) {
    if (b[i]! < 0xff) {
      b[i]!++;
      return b.subarray(0, i + 1);
    }
  }
  return Buffer.alloc(b.length + 1, 0xff);
}

class Check implements IndexCheck {
  entries = 0;
  expected = 0;
  missing = 0;
  extra = 0;
  wrong = 0;
  samples: Sample[] = [];
  /** extra entries the scan found (the total comes from the counts) */
  found = 0;
  constructor(readonly name: string, private readonly cap: number) {}

  note(problem: Sample['problem'], key: Uint8Array, detail: string): void {
    if (problem === 'missing') this.missing++;
    else if (problem === 'wrong') this.wrong++;
    else this.found++;
    if (this.samples.length < this.cap) this.samples.push({ problem, key: hex(key), detail });
  }

  /** Extra entries by the counts: entries beyond the expected ones that are present. */
  get extraByCount(): number {
    return this.entries - (this.expected - this.missing);
  }

  get differs(): boolean {
    return this.missing + this.extra + this.wrong > 0;
  }

  toJSON(): IndexCheck {
    const { name, entries, expected, missing, extra, wrong, samples } = this;
    return { name, entries, expected, missing, extra, wrong, samples };
  }
}

/** A bounded set of keys (hex): `has` is exact while it has not overflowed. */
class KeySet {
  private readonly set = new Set<string>();
  overflowed = false;
  add(key: string): boolean {
    if (this.set.has(key)) return false;
    if (this.set.size >= KEY_SET_CAP) {
      this.overflowed = true;
      return true;
    }
    this.set.add(key);
    return true;
  }
  has(key: string): boolean {
    return this.set.has(key);
  }
}

/** A counted (tag, kind) key of the tag+kind index: its counter key, or null when not counted. */
function countedPrefix(key: Buffer): Buffer | null {
  const at = tagTypeAt(key);
  if (key[at] !== TYPE_HEX || key.length !== at + 1 + 32 + 2 + SERIAL_BYTES + 4) return null;
  const name = key[0] === 0xff ? String.fromCharCode(key.readUInt16BE(1)) : String.fromCharCode(key[0]!);
  return isCountedPair(name, key.readUInt16BE(at + 33)) ? key.subarray(0, at + 35) : null;
}

/** "#e 0123… kind 7" for a counter key. */
function counterName(key: Buffer): string {
  const at = tagTypeAt(key);
  const name = key[0] === 0xff ? String.fromCharCode(key.readUInt16BE(1)) : String.fromCharCode(key[0]!);
  return `#${name} ${short(key.toString('hex', at + 1, at + 33))} kind ${key.readUInt16BE(key.length - 2)}`;
}


/** The reusable key of a graph edge (kind, followee id, follower id), as the graph index stores it. */
const edge = Buffer.allocUnsafe(10);
const edgeOf = (kind: number, followee: number, follower: number): Buffer => {
  edge.writeUInt16BE(kind, 0);
  edge.writeUInt32BE(followee, 2);
  edge.writeUInt32BE(follower, 6);
  return edge;
};
/** the counter key (hex) of a graph member: tagKindPrefix(tagPrefix('p', member), kind) */
const memberCounter = (member: string, kind: number): string => hex(tagKindPrefix(tagPrefix('p', member).prefix, kind));

/**
 * The databases to check: a graph object of its own (graph.ts remembers pubkey ids per graph
 * object, and nothing here may take an id from memory instead of the store), and the search index
 * only when it was built for the configured kinds and format (else the relay rebuilds it at its
 * next start; a note says so).
 */
function dbsToCheck(allDbs: Dbs, notes: string[]): Dbs {
  const dbs: Dbs = { ...allDbs, graph: freshGraph(allDbs) };
  if (!allDbs.search) return dbs;
  const have = allDbs.meta.get(SEARCH_META_KEY) as { version: number; kinds: number[] } | undefined;
  const want = [...allDbs.search.kinds].sort((a, b) => a - b);
  const current = have !== undefined && have.version === SEARCH_FORMAT_VERSION && have.kinds.length === want.length && have.kinds.every((k, i) => k === want[i]);
  if (current) return dbs;
  notes.push(`search index not checked: it was built ${have ? `for kinds [${have.kinds.join(',')}] (format ${have.version})` : 'never'}, the configuration asks for kinds [${want.join(',')}] (format ${SEARCH_FORMAT_VERSION}); the relay rebuilds it at its next start`);
  return { ...dbs, search: undefined };
}

/** The marks of a write that stopped half way (a repair, an import's last merge): the indexes are partial until they are gone. */
function interruptedWrites(allDbs: Dbs): MetaCheck[] {
  const meta: MetaCheck[] = [];
  if (allDbs.meta.get(REPAIR_META_KEY) !== undefined) {
    meta.push({ key: REPAIR_META_KEY, found: allDbs.meta.get(REPAIR_META_KEY), expected: undefined, detail: 'a repair was interrupted: the indexes are partial; run verify --repair again' });
  }
  if (allDbs.meta.get(SPOOL_FROM_KEY) !== undefined) {
    meta.push({ key: SPOOL_FROM_KEY, found: allDbs.meta.get(SPOOL_FROM_KEY), expected: undefined, detail: 'an import stopped before its last merge (store/spool.ts): the graph and the time and tag indexes lack the entries of events stored since that serial; opening the store for writing (starting the relay, an import, verify --repair) writes them' });
  }
  meta.push(...pendingVanishMeta(allDbs));
  return meta;
}

/** One Check per derived database, by the name the report gives it. */
function newChecks(cap: number) {
  const check = (name: string): Check => new Check(name, cap);
  return {
    id: check('id'), created: check('created'), kind: check('kind'), pubkey: check('pubkey'), pubkind: check('pubkind'),
    tagkind: check('tagkind'), expiry: check('expiry'), addr: check('addr'),
    searchKeys: check('searchKeys'), searchDocs: check('searchDocs'),
    graph: check('graph'), graphcur: check('graphcur'), graphtime: check('graphtime'), tagcount: check('tagcount'), pkid: check('pkid'), idpk: check('idpk'),
  };
}

/** An index entry a stored event calls for in a bucket that differs, to be looked up (step 3). */
interface Probe {
  db: BinDb;
  key: Buffer;
  /** the stored value expected (search documents); undefined: only the key */
  value?: Buffer;
  p: Parsed;
  /** the counter key (hex) of a counted entry, whose count includes it */
  counter: string | null;
}

/**
 * Checks every derived index against the stored events; see the top of this file. Steps:
 * 1. every event read in chunks: its id, address and graphcur entries looked up, every other entry
 *    it should have (indexer.ts visitEntries, the graph's edges) added to its index's fingerprint;
 * 2. every index read in key order into a fingerprint of what it holds: where the two agree, the
 *    index holds exactly what the events call for;
 * 3. where a bucket of an index's fingerprint differs, the events are read again and each of their
 *    entries in that bucket looked up (missing ones), and the index is read again to find its
 *    entries of that bucket no event calls for (extra ones);
 * 4. each counter compared with the number of stored events with its tag (the index ranges, less
 *    the extra entries found, plus the missing ones), and each counted range checked for a counter;
 * 5. pkid and idpk as inverse maps; meta values.
 */
export async function verifyStore(env: RootDatabase, allDbs: Dbs, opts: VerifyOptions = {}): Promise<VerifyReport> {
  void env;
  const version = allDbs.meta.get(VERSION_KEY);
  const total = entryCount(allDbs.events);
  if (version !== SCHEMA_VERSION && !(version === undefined && total === 0)) {
    throw new StoreVersionError(`the store is at schema version ${String(version)}, this orbweaver's is ${SCHEMA_VERSION}: it is migrated when the relay (or verify --repair) opens it`);
  }
  const v = new Verification(allDbs, total, opts);
  await v.readEvents();
  await v.readIndexes();
  if (v.differ.size > 0) await v.lookUpDifferences();
  await v.findExtras();
  await v.checkCounters();
  await v.checkPubkeyIds();
  v.checkMeta();
  return v.report();
}

/** What the steps of one verifyStore share: the checks, the fingerprints and what each step leaves the next. */
class Verification {
  private readonly t0 = Date.now();
  private readonly cap: number;
  private readonly chunk: number;
  private readonly meter: Meter;
  private readonly notes: string[] = [];
  private readonly meta: MetaCheck[];
  private readonly dbs: Dbs;
  /** the search documents (checked with their values), when the search index is checked */
  private readonly docs: BinDb | undefined;
  /** the databases without the search index: what an event's header alone calls for */
  private readonly headerDbs: Dbs;
  private readonly c: ReturnType<typeof newChecks>;
  /** the indexes checked by fingerprint, and the serial in each of their keys */
  private readonly byDb: Map<BinDb, Check>;
  private readonly serialOf: Map<BinDb, (k: Buffer) => number>;
  /** indexes whose entries follow from an event's header alone (no JSON parse to check one) */
  private readonly headerOnly: Set<BinDb>;
  private readonly graphDb: BinDb;

  private readonly duplicates: { count: number; samples: Duplicate[] } = { count: 0, samples: [] };
  private readonly vanish: VanishCheck;
  private readonly unreadable = { count: 0, serials: [] as number[] };
  /** id and address keys found pointing elsewhere: not extra when the scan meets them */
  private readonly wrongIds = new KeySet();
  private readonly wrongAddrs = new KeySet();
  private readonly missingCounters = new KeySet();
  /** per counter key (hex), its entries missing from the index (+) and extra in it (-): count = range + this */
  private readonly counterAdjust = new Map<string, number>();
  private adjustOverflow = false;
  /** the counter key of the tag the indexer visits next (it calls `counted` just before `visit`) */
  private counting: string | null = null;
  private readonly listsPerKind = new Map<number, number>(GRAPH_KINDS.map((k) => [k, 0]));
  private maxSerial = 0;
  private maxId = 0;

  /** per index, the fingerprint of what the events call for (step 1) */
  private readonly expectedFp = new Map<BinDb, Fingerprint>();
  /** the event forEachEvent is at */
  private cur!: Parsed;
  // the graph lists of a chunk, and the pubkeys whose ids they need (looked up in key order)
  private lists: Array<{ p: Parsed; members: string[] }> = [];
  private pks = new Map<string, number | undefined>();
  /** ids read so far (a follow list names the same popular pubkeys again and again), bounded */
  private readonly ids = new Map<string, number>();

  /** per index whose entries differ from what the events call for: the buckets that differ (step 2) */
  readonly differ = new Map<BinDb, Uint8Array>();
  /** counted ranges of the tag+kind index and follower sets that have no counter, with their sizes (step 2) */
  private readonly ranges: Array<{ key: Buffer; size: number; what: string }> = [];
  private rangesOverflow = false;
  private probes: Probe[] = [];

  // a small cache of parsed events (the scans of step 3b look the same event up for several of its keys)
  private readonly cache = new Map<number, Parsed | null>();
  // the graph: an author's current list of a kind, by kind and author id
  private readonly listCache = new Map<number, Set<string> | null>();
  private cachedMembers = 0;

  constructor(allDbs: Dbs, private readonly total: number, opts: VerifyOptions) {
    this.cap = opts.samples ?? 20;
    this.chunk = opts.chunk ?? 1000;
    this.meter = new Meter(opts);
    const dbs = (this.dbs = dbsToCheck(allDbs, this.notes));
    this.meta = interruptedWrites(allDbs);
    this.vanish = new VanishCheck(allDbs, this.cap);
    this.docs = dbs.search?.docs;
    this.headerDbs = { ...dbs, search: undefined };
    const c = (this.c = newChecks(this.cap));
    this.byDb = new Map<BinDb, Check>([
      [dbs.created, c.created], [dbs.kind, c.kind], [dbs.pubkey, c.pubkey], [dbs.pubkind, c.pubkind],
      [dbs.tagkind, c.tagkind], [dbs.expiry, c.expiry],
    ]);
    this.serialOf = new Map<BinDb, (k: Buffer) => number>([
      [dbs.created, keySerial], [dbs.kind, keySerial], [dbs.pubkey, keySerial], [dbs.pubkind, keySerial],
      [dbs.tagkind, keySerial], [dbs.expiry, expiryKeySerial],
    ]);
    this.headerOnly = new Set<BinDb>([dbs.created, dbs.kind, dbs.pubkey, dbs.pubkind, dbs.expiry]);
    if (dbs.search) {
      this.byDb.set(dbs.search.keys, c.searchKeys);
      this.byDb.set(dbs.search.docs, c.searchDocs);
      this.serialOf.set(dbs.search.keys, postingSerial);
      this.serialOf.set(dbs.search.docs, (k) => readSerial(k));
    }
    this.graphDb = dbs.graph.graph;
    for (const db of [...this.byDb.keys(), this.graphDb]) this.expectedFp.set(db, new Fingerprint());
  }

  private duplicate(d: Duplicate): void {
    this.duplicates.count++;
    if (this.duplicates.samples.length < this.cap) this.duplicates.samples.push(d);
  }

  private adjust(counterKey: string, d: number): void {
    if (!this.counterAdjust.has(counterKey) && this.counterAdjust.size >= KEY_SET_CAP) this.adjustOverflow = true;
    else this.counterAdjust.set(counterKey, (this.counterAdjust.get(counterKey) ?? 0) + d);
  }

  /** An entry the current event calls for (the indexer's visit in step 1). */
  private readonly expect = (db: BinDb, key: Buffer, value?: Buffer): void => {
    this.byDb.get(db)!.expected++;
    this.expectedFp.get(db)!.add(key, db === this.docs ? value : undefined);
  };

  /** Every stored event in chunks; `chunkDone` runs after each chunk's events. */
  private async forEachEvent(phase: string, each: (p: Parsed) => void, chunkDone: () => void): Promise<void> {
    const { meter, dbs, chunk, total } = this;
    meter.start(phase);
    let done = 0;
    let last: Buffer | undefined;
    for (;;) {
      const rows: Array<{ key: Buffer; value: Buffer }> = [];
      for (const r of dbs.events.getRange({ start: last, exclusiveStart: last !== undefined, limit: chunk })) rows.push(r);
      for (const { key, value } of rows) each((this.cur = parseStored(readSerial(key), value)));
      chunkDone();
      done += rows.length;
      meter.tick(done, total);
      if (rows.length < chunk) return;
      last = rows[rows.length - 1]!.key;
      await tick();
    }
  }

  /** Whether `p` is a second copy of a stored event (the id entry points at the first). */
  private isCopy(p: Parsed): boolean {
    const { dbs } = this;
    const at = dbs.id.getBinary(idKey(p.h.id));
    if (!at || readSerial(at) === p.serial) return false;
    const other = dbs.events.getBinary(at);
    return other !== undefined && idHexOf(other) === p.h.id;
  }

  /** Whether `p` is the version of its address the rules keep (false: an older copy the address entry does not point at). */
  private keptVersion(p: Parsed): boolean {
    const { dbs } = this;
    const ak = addrKeyOf(p.ev);
    const to = ak ? dbs.addr.getBinary(ak) : undefined;
    if (!ak || !to || readSerial(to) === p.serial) return true;
    const otherValue = dbs.events.getBinary(to);
    const other = otherValue ? parseStored(readSerial(to), otherValue) : null;
    const otherAk = other ? addrKeyOf(other.ev) : null;
    return !(other && otherAk && otherAk.equals(ak)) || incomingWins(other.h, p.h);
  }

  /** The pubkey ids of the chunk's lists (`pks`), from memory or looked up in key order. */
  private resolveIds(): void {
    const { dbs, pks, ids } = this;
    const unknown: string[] = [];
    for (const pk of pks.keys()) {
      const id = ids.get(pk);
      if (id === undefined) unknown.push(pk);
      else pks.set(pk, id);
    }
    for (const pk of unknown.sort()) {
      const v = dbs.graph.pkid.getBinary(Buffer.from(pk, 'hex'));
      if (!v || v.length !== 4) continue;
      pks.set(pk, v.readUInt32BE(0));
      if (ids.size >= ID_CACHE) ids.clear();
      ids.set(pk, v.readUInt32BE(0));
    }
  }

  private addList(p: Parsed): void {
    const members = graphMembers(p.h.kind, p.ev.tags);
    this.lists.push({ p, members });
    this.pks.set(p.h.pubkey, undefined);
    for (const m of members) this.pks.set(m, undefined);
  }

  // ---- 1. the events: what each index should hold ----
  async readEvents(): Promise<void> {
    await this.forEachEvent('events', (p) => this.expectEntries(p), () => this.expectGraphLists());
  }

  private expectEntries(p: Parsed): void {
    const { unreadable, cap, dbs } = this;
    this.maxSerial = p.serial;
    if (p.unreadable) {
      unreadable.count++;
      if (unreadable.serials.length < cap) unreadable.serials.push(p.serial);
    }
    if (!this.checkIdEntry(p)) return;
    this.vanish.see(p);
    const kept = this.checkAddrEntry(p);
    // time-ordered indexes, expiry, search
    visitEntries(dbs, p.ev, p.serial, p.h.expiration, this.expect);
    // the follow graph: only the kept version of a list
    if (isGraphKind(p.h.kind) && kept) {
      this.listsPerKind.set(p.h.kind, this.listsPerKind.get(p.h.kind)! + 1);
      this.addList(p);
    }
  }

  /** id -> serial; false when `p` is a second copy of an event (its entries are the first copy's). */
  private checkIdEntry(p: Parsed): boolean {
    const { dbs, c } = this;
    const idK = idKey(p.h.id);
    const at = dbs.id.getBinary(idK);
    if (!at) {
      c.id.expected++;
      c.id.note('missing', idK, describe(p));
    } else if (readSerial(at) !== p.serial) {
      const other = dbs.events.getBinary(at);
      if (other && idHexOf(other) === p.h.id) {
        // the same event stored twice: the id entry's copy is kept, and its entries are that copy's
        this.duplicate({ what: 'id', serial: p.serial, kept: readSerial(at), detail: `event ${short(p.h.id)} is stored at serials ${readSerial(at)} and ${p.serial}` });
        return false;
      }
      c.id.expected++;
      this.wrongIds.add(hex(idK));
      c.id.note('wrong', idK, `${describe(p)}: points at serial ${readSerial(at)}${other ? ` (event ${short(idHexOf(other))})` : ' (no event)'}`);
    } else c.id.expected++;
    return true;
  }

  /** address -> serial of the stored version; false when `p` is a version of its address the rules drop. */
  private checkAddrEntry(p: Parsed): boolean {
    const { dbs, c } = this;
    const ak = addrKeyOf(p.ev);
    let kept = true;
    if (!ak) return kept;
    const to = dbs.addr.getBinary(ak);
    if (!to) {
      c.addr.expected++;
      c.addr.note('missing', ak, describe(p));
    } else if (readSerial(to) === p.serial) c.addr.expected++;
    else {
      const otherValue = dbs.events.getBinary(to);
      const other = otherValue ? parseStored(readSerial(to), otherValue) : null;
      const otherAk = other ? addrKeyOf(other.ev) : null;
      if (other && otherAk && otherAk.equals(ak)) {
        // two stored versions of one address: the entry's is counted where it is met itself
        kept = incomingWins(other.h, p.h);
        if (kept) {
          c.addr.note('wrong', ak, `${describe(p)} is the version the rules keep, the entry points at the older serial ${other.serial}`);
          this.duplicate({ what: 'address', serial: other.serial, kept: p.serial, detail: `two stored versions of ${addressOf(p.ev)}: ${describe(other)} (dropped) and ${describe(p)}` });
        } else this.duplicate({ what: 'address', serial: p.serial, kept: other.serial, detail: `two stored versions of ${addressOf(p.ev)}: ${describe(p)} (dropped) and ${describe(other)}` });
      } else {
        c.addr.expected++;
        this.wrongAddrs.add(hex(ak));
        c.addr.note('wrong', ak, `${describe(p)}: points at serial ${readSerial(to)}${other ? ` (${describe(other)})` : ' (no event)'}`);
      }
    }
    return kept;
  }

  /** The chunk's lists: their graphtime and graphcur entries looked up, their edges added to the graph's fingerprint. */
  private expectGraphLists(): void {
    const { dbs, c, pks, cap } = this;
    this.resolveIds();
    const edges = this.expectedFp.get(this.graphDb)!;
    for (const { p, members } of this.lists) {
      const kind = p.h.kind;
      const author = pks.get(p.h.pubkey);
      c.graphcur.expected++;
      c.graphtime.expected++;
      c.graph.expected += members.length;
      const tk = listTimeKey(kind, p.h.created_at, p.serial);
      const ta = dbs.graph.graphtime.getBinary(tk);
      if (!ta) c.graphtime.note('missing', tk, describe(p));
      else if (author === undefined || ta.length < 4 || ta.readUInt32BE(0) !== author) c.graphtime.note('wrong', tk, `${describe(p)}: holds author id ${ta.length >= 4 ? ta.readUInt32BE(0) : '?'}`);
      if (author === undefined) {
        const k = Buffer.concat([Buffer.from([kind >> 8, kind & 0xff]), Buffer.from(p.h.pubkey, 'hex')]);
        c.graphcur.note('missing', k, `${describe(p)}: its author has no pubkey id`);
        c.graph.missing += members.length;
        if (isCountedPair('p', kind)) for (const m of members) this.adjust(memberCounter(m, kind), 1);
        if (c.graph.samples.length < cap && members.length) c.graph.samples.push({ problem: 'missing', key: hex(k), detail: `${members.length} follows of ${describe(p)}: its author has no pubkey id` });
        continue;
      }
      const ck = kindIdKey(kind, author);
      const want = Buffer.allocUnsafe(4 + SERIAL_BYTES);
      want.writeUInt32BE(p.h.created_at, 0);
      want.writeUIntBE(p.serial, 4, SERIAL_BYTES);
      const have = dbs.graph.graphcur.getBinary(ck);
      if (!have) c.graphcur.note('missing', ck, describe(p));
      else if (!have.equals(want)) {
        c.graphcur.note('wrong', ck, `${describe(p)} created_at ${p.h.created_at}: holds created_at ${have.length >= 4 ? have.readUInt32BE(0) : '?'} serial ${have.length >= 4 + SERIAL_BYTES ? readSerial(have, 4) : '?'}`);
      }
      for (const m of members) {
        const id = pks.get(m);
        if (id !== undefined) {
          edges.addEdge(kind, id, author);
          continue;
        }
        // no pubkey id: the edge cannot be there, and is not looked for
        c.graph.note('missing', Buffer.from(m, 'hex'), `${describe(p)} follows ${short(m)}, which has no pubkey id`);
        if (isCountedPair('p', kind)) this.adjust(memberCounter(m, kind), 1);
      }
    }
    this.lists = [];
    this.pks = new Map();
  }

  // ---- 2. each index read in key order ----
  // Noted on the way: each counted (tag, kind) range of the tag+kind index and each follower set of
  // a counted graph kind that has no counter, with its size (step 4 decides whether it should).
  async readIndexes(): Promise<void> {
    for (const db of [...this.byDb.keys(), this.graphDb]) await this.readIndex(db);
  }

  private async readIndex(db: BinDb): Promise<void> {
    const { dbs, c, byDb, ranges, meter } = this;
    const isGraph = db === this.graphDb;
    const ck = isGraph ? c.graph : byDb.get(db)!;
    const fp = new Fingerprint();
    const withValues = db === this.docs;
    let group: Buffer | null = null;
    let range: (typeof ranges)[number] | null = null;
    let groupKind = -1;
    let groupFollowee = -1;
    const size = entryCount(db);
    meter.start(`index ${ck.name}`);
    const open = (key: Buffer, exists: boolean, what: string): void => {
      range = null;
      if (exists) return;
      if (ranges.length >= KEY_SET_CAP) this.rangesOverflow = true;
      else ranges.push((range = { key, size: 0, what }));
    };
    await scan(db, withValues, (key, value) => {
      if (isGraph && key.length === 10) fp.addEdge(key.readUInt16BE(0), key.readUInt32BE(2), key.readUInt32BE(6));
      else fp.add(key, withValues ? value : undefined);
      if (fp.n % 16_384 === 0) meter.tick(fp.n, size);
      if (db === dbs.tagkind) {
        const prefix = countedPrefix(key);
        if (!prefix) return;
        if (!group || !group.equals(prefix)) {
          group = Buffer.from(prefix);
          open(group, dbs.tagcount.doesExist(group), `${counterName(group)} is in stored events`);
        }
        if (range) range.size++;
      } else if (isGraph && key.length === 10) {
        const kind = key.readUInt16BE(0);
        const followee = key.readUInt32BE(2);
        if (kind !== groupKind || followee !== groupFollowee) {
          groupKind = kind;
          groupFollowee = followee;
          range = null;
          const pk = isCountedPair('p', kind) ? dbs.graph.idpk.getBinary(key.subarray(2, 6)) : undefined;
          if (pk && pk.length === 32) {
            const counter = Buffer.from(memberCounter(hex(pk), kind), 'hex');
            open(counter, dbs.tagcount.doesExist(counter), `stored lists of kind ${kind} follow ${short(hex(pk))}`);
          }
        }
        if (range) range.size++;
      }
    });
    ck.entries = fp.n;
    const bad = fp.diff(this.expectedFp.get(db)!);
    if (bad) this.differ.set(db, bad);
  }

  // ---- 3. where a bucket differs: the entries the events call for, looked up ----
  // A chunk's lookups are made in key order: in a large store a lookup in event order lands on a
  // page of its own, in key order the chunk's lookups share pages.
  async lookUpDifferences(): Promise<void> {
    const { dbs, differ } = this;
    const badEdges = differ.get(this.graphDb);
    const tagsDiffer = differ.has(dbs.tagkind);
    const probe = (db: BinDb, key: Buffer, value?: Buffer): void => {
      const bad = differ.get(db);
      if (bad && bad[Fingerprint.bucketOf(key)]) this.probes.push({ db, key: Buffer.from(key), value, p: this.cur, counter: db === dbs.tagkind ? this.counting : null });
      if (db === dbs.tagkind) this.counting = null;
    };
    const counted = (prefix: Buffer): void => {
      this.counting = hex(prefix);
    };
    await this.forEachEvent('looking up the differences', (p) => {
      if (this.isCopy(p)) return;
      visitEntries(dbs, p.ev, p.serial, p.h.expiration, probe, tagsDiffer ? counted : undefined);
      if (badEdges && isGraphKind(p.h.kind) && this.keptVersion(p)) this.addList(p);
    }, () => {
      this.resolveIds();
      if (badEdges) this.lookUpMissingEdges(badEdges);
      this.lookUpProbes();
      this.probes = [];
      this.lists = [];
      this.pks = new Map();
    });
  }

  /** The chunk's edges in differing buckets, sorted as numbers (kind, followee id, follower id), looked up. */
  private lookUpMissingEdges(badEdges: Uint8Array): void {
    const { c, pks } = this;
    const missing: Array<{ kind: number; followee: number; follower: number; p: Parsed; member: string }> = [];
    for (const { p, members } of this.lists) {
      const kind = p.h.kind;
      const author = pks.get(p.h.pubkey);
      if (author === undefined) continue; // noted in step 1
      for (const m of members) {
        const id = pks.get(m);
        if (id !== undefined && badEdges[Fingerprint.bucketOfEdge(kind, id, author)]) missing.push({ kind, followee: id, follower: author, p, member: m });
      }
    }
    missing.sort((a, b) => a.kind - b.kind || a.followee - b.followee || a.follower - b.follower);
    for (const e of missing) {
      const ek = edgeOf(e.kind, e.followee, e.follower);
      if (this.graphDb.doesExist(ek)) continue;
      c.graph.note('missing', ek, `${describe(e.p)} follows ${short(e.member)}`);
      if (isCountedPair('p', e.kind)) this.adjust(memberCounter(e.member, e.kind), 1);
    }
  }

  /** Every other entry of the chunk in a differing bucket, per index in key order, looked up. */
  private lookUpProbes(): void {
    const perDb = new Map<BinDb, Probe[]>();
    for (const pr of this.probes) {
      let list = perDb.get(pr.db);
      if (!list) perDb.set(pr.db, (list = []));
      list.push(pr);
    }
    const byKey = (a: Probe, b: Probe): number => Buffer.compare(a.key, b.key);
    for (const [db, list] of perDb) {
      const ck = this.byDb.get(db)!;
      list.sort(byKey);
      for (const pr of list) {
        if (pr.value === undefined) {
          if (db.doesExist(pr.key)) continue;
          ck.note('missing', pr.key, describe(pr.p));
          if (pr.counter !== null) this.adjust(pr.counter, 1);
          continue;
        }
        const have = db.getBinary(pr.key);
        if (!have) ck.note('missing', pr.key, describe(pr.p));
        else if (!have.equals(pr.value)) ck.note('wrong', pr.key, `${describe(pr.p)}: the stored value differs`);
      }
    }
  }

  /** The stored event at `serial`, parsed, from a small cache (the scans of step 3b look the same event up for several of its keys). */
  private stored(serial: number): Parsed | null {
    const { cache } = this;
    let p = cache.get(serial);
    if (p !== undefined) {
      cache.delete(serial);
      cache.set(serial, p);
      return p;
    }
    const v = this.dbs.events.getBinary(serialKey(serial));
    p = v ? parseStored(serial, v) : null;
    cache.set(serial, p);
    if (cache.size > 1024) cache.delete(cache.keys().next().value!);
    return p;
  }

  /** Whether the stored event at `serial` has `key` in `db`, by the indexer's own visit. */
  private hasEntry(db: BinDb, key: Buffer, serial: number): { p: Parsed | null; has: boolean } {
    const p = this.stored(serial);
    if (!p) return { p, has: false };
    let has = false;
    const header = this.headerOnly.has(db);
    const ev = header ? { ...p.ev, tags: [], content: undefined } : p.ev;
    visitEntries(header ? this.headerDbs : this.dbs, ev, serial, p.h.expiration, (d, k) => {
      if (d === db && !has && k.equals(key)) has = true;
    });
    return { p, has: has && !this.isCopy(p) };
  }

  /** The graph: an author's current list of a kind, as the address index (else graphcur) finds it. */
  private currentList(kind: number, authorId: number): Set<string> | null {
    const { dbs, listCache } = this;
    const ck = kind * 2 ** 32 + authorId;
    const hit = listCache.get(ck);
    if (hit !== undefined) return hit;
    const pk = idPubkey(dbs, authorId);
    let found: Parsed | null = null;
    if (pk) {
      const at = dbs.addr.getBinary(addrKey(kind, pk, ''));
      const byAddr = at ? this.stored(readSerial(at)) : null;
      if (byAddr && byAddr.h.kind === kind && byAddr.h.pubkey === pk) found = byAddr;
      else {
        const gc = dbs.graph.graphcur.getBinary(kindIdKey(kind, authorId));
        const byCur = gc && gc.length >= 4 + SERIAL_BYTES ? this.stored(readSerial(gc, 4)) : null;
        if (byCur && byCur.h.kind === kind && byCur.h.pubkey === pk) found = byCur;
      }
    }
    const set = found ? new Set(graphMembers(kind, found.ev.tags)) : null;
    this.cachedMembers += set?.size ?? 0;
    if (this.cachedMembers > LIST_CACHE_MEMBERS) {
      listCache.clear();
      this.cachedMembers = set?.size ?? 0;
    }
    listCache.set(ck, set);
    return set;
  }

  private edgeValid(key: Buffer): boolean {
    if (key.length !== 10) return false;
    const list = this.currentList(key.readUInt16BE(0), key.readUInt32BE(6));
    if (!list) return false;
    const followee = idPubkey(this.dbs, key.readUInt32BE(2));
    return followee !== undefined && list.has(followee);
  }

  // ---- 3b. extra entries: an index holding more than the expected entries that are present ----
  async findExtras(): Promise<void> {
    const { c, dbs } = this;
    c.id.entries = entryCount(dbs.id);
    c.addr.entries = entryCount(dbs.addr);
    c.graphcur.entries = entryCount(dbs.graph.graphcur);
    c.graphtime.entries = entryCount(dbs.graph.graphtime);
    await this.findExtraIndexEntries();
    await this.findExtraMapEntries();
    for (const ck of [c.id, c.addr, c.graphcur, c.graphtime, c.graph, ...this.byDb.values()]) ck.extra = Math.max(0, ck.extraByCount, ck.found);
  }

  /** The extra entries of the indexes checked by fingerprint, read only in the buckets that differ. */
  private async findExtraIndexEntries(): Promise<void> {
    const { c, dbs, graphDb, meter } = this;
    const why = (p: Parsed | null, serial: number): string => (p ? `${describe(p)} should not have it` : `no stored event at serial ${serial}`);
    /** whether every extra entry of the tag+kind index and the graph was found (the counters' truth needs them) */
    let extrasFound = true;
    for (const [db, ck] of [...this.byDb, [graphDb, c.graph] as const]) {
      const isGraph = db === graphDb;
      const extra = ck.extraByCount;
      if (extra <= 0) continue;
      const bad = this.differ.get(db);
      meter.start(`extra ${ck.name} entries`);
      let seen = 0;
      await scan(db, false, (key) => {
        seen++;
        meter.tick(seen, ck.entries);
        if (isGraph) {
          if (key.length === 10 && !bad?.[Fingerprint.bucketOfEdge(key.readUInt16BE(0), key.readUInt32BE(2), key.readUInt32BE(6))]) return;
          if (this.edgeValid(key)) return;
          const detail = key.length !== 10 ? 'malformed key'
            : `kind ${key.readUInt16BE(0)}: ${short(idPubkey(dbs, key.readUInt32BE(6)) ?? `id ${key.readUInt32BE(6)}`)} does not follow ${short(idPubkey(dbs, key.readUInt32BE(2)) ?? `id ${key.readUInt32BE(2)}`)} in a stored list`;
          c.graph.note('extra', key, detail);
          const pk = key.length === 10 && isCountedPair('p', key.readUInt16BE(0)) ? idPubkey(dbs, key.readUInt32BE(2)) : undefined;
          if (pk) this.adjust(memberCounter(pk, key.readUInt16BE(0)), -1);
        } else {
          if (!bad?.[Fingerprint.bucketOf(key)]) return;
          if (key.length < SERIAL_BYTES) ck.note('extra', key, 'malformed key');
          else {
            const serial = this.serialOf.get(db)!(key);
            const { p, has } = this.hasEntry(db, key, serial);
            if (has) return;
            ck.note('extra', key, why(p, serial));
            const counter = db === dbs.tagkind ? countedPrefix(key) : null;
            if (counter) this.adjust(hex(counter), -1);
          }
        }
        return ck.found < extra;
      });
      if (ck.found < extra && (db === dbs.tagkind || isGraph)) extrasFound = false;
    }
    if (!extrasFound) this.notes.push('not every extra entry of the tag+kind index or the graph was found: counters were compared with the indexes as they are');
  }

  /** The extra entries of the maps checked by count: id, address, graphcur, graphtime. */
  private async findExtraMapEntries(): Promise<void> {
    const { c, dbs } = this;
    // id: an entry is right when the event at its serial has that id
    if (c.id.extraByCount > 0) {
      const extra = c.id.extraByCount;
      await scan(dbs.id, true, (key, value) => {
        const serial = value.length >= SERIAL_BYTES ? readSerial(value) : -1;
        const v = serial >= 0 ? dbs.events.getBinary(serialKey(serial)) : undefined;
        if (v && idHexOf(v) === hex(key)) return;
        if (this.wrongIds.has(hex(key))) return;
        c.id.note('extra', key, v ? `points at serial ${serial}, event ${short(idHexOf(v))}` : `points at serial ${serial}: no stored event`);
        return c.id.found < extra;
      });
    }
    // address: an entry is right when the event at its serial has that address
    if (c.addr.extraByCount > 0) {
      const extra = c.addr.extraByCount;
      await scan(dbs.addr, true, (key, value) => {
        const serial = value.length >= SERIAL_BYTES ? readSerial(value) : -1;
        const p = serial >= 0 ? this.stored(serial) : null;
        const ak = p ? addrKeyOf(p.ev) : null;
        if (ak && ak.equals(key)) return;
        if (this.wrongAddrs.has(hex(key))) return;
        c.addr.note('extra', key, p ? `points at serial ${serial}, ${describe(p)}, which has another address or none` : `points at serial ${serial}: no stored event`);
        return c.addr.found < extra;
      });
    }
    if (c.graphcur.extraByCount > 0) {
      const extra = c.graphcur.extraByCount;
      await scan(dbs.graph.graphcur, false, (key) => {
        if (key.length === 6 && this.currentList(key.readUInt16BE(0), key.readUInt32BE(2))) return;
        c.graphcur.note('extra', key, key.length === 6 ? `kind ${key.readUInt16BE(0)}: author ${short(idPubkey(dbs, key.readUInt32BE(2)) ?? `id ${key.readUInt32BE(2)}`)} has no stored list` : 'malformed key');
        return c.graphcur.found < extra;
      });
    }
    if (c.graphtime.extraByCount > 0) {
      const extra = c.graphtime.extraByCount;
      await scan(dbs.graph.graphtime, true, (key, value) => {
        const serial = key.length === 2 + SUFFIX_BYTES ? readSerial(key, 6) : -1;
        const p = serial >= 0 ? this.stored(serial) : null;
        const gc = p && value.length >= 4 && isGraphKind(p.h.kind) ? dbs.graph.graphcur.getBinary(kindIdKey(p.h.kind, value.readUInt32BE(0))) : null;
        if (gc && gc.length >= 4 + SERIAL_BYTES && readSerial(gc, 4) === serial && p!.h.kind === key.readUInt16BE(0) && p!.h.created_at === key.readUInt32BE(2)) return;
        c.graphtime.note('extra', key, p ? `${describe(p)} is not its author's current list at this time and kind` : `no stored event at serial ${serial}`);
        return c.graphtime.found < extra;
      });
    }
  }

  // ---- 4. counters: each count is the number of stored events with its tag ----
  // That number is the entries of its range in the tag+kind index (or its follower set in the
  // graph), less the extra ones found there, plus the missing ones.
  private tagCount(prefix: Buffer): number {
    return this.dbs.tagkind.getKeysCount({ start: prefix, end: prefixEnd(prefix) });
  }

  private followerCount(kind: number, pk: string): number {
    const id = pubkeyId(this.dbs, pk);
    return id === undefined ? 0 : this.graphDb.getKeysCount(setRange(kind, id));
  }

  async checkCounters(): Promise<void> {
    const { c, dbs, meter, counterAdjust } = this;
    c.tagcount.entries = entryCount(dbs.tagcount);
    meter.start('counters');
    let counters = 0;
    await scan(dbs.tagcount, true, (key, value) => {
      counters++;
      meter.tick(counters, c.tagcount.entries);
      const at = tagTypeAt(key);
      const ok = key[at] === TYPE_HEX && key.length === at + 1 + 32 + 2;
      const name = key[0] === 0xff ? String.fromCharCode(key.readUInt16BE(1)) : String.fromCharCode(key[0]!);
      const kind = ok ? key.readUInt16BE(key.length - 2) : -1;
      if (!ok || !isCountedPair(name, kind)) {
        c.tagcount.note('extra', key, 'not the key of a counted (tag, kind)');
        return;
      }
      const v = key.toString('hex', at + 1, at + 33);
      const truth = this.tagCount(key) + (name === 'p' && isGraphKind(kind) ? this.followerCount(kind, v) : 0) + (counterAdjust.get(hex(key)) ?? 0);
      const have = value.length >= 9 ? decodeCounter(value).count : -1;
      if (truth <= 0) c.tagcount.note('extra', key, `${counterName(key)}: counts ${have}, no stored event has the tag`);
      else if (have !== truth) c.tagcount.note('wrong', key, `${counterName(key)}: counts ${have < 0 ? 'an unreadable value' : have}, ${truth} stored events have the tag`);
    }, 1000);
    this.findMissingCounters();
    c.tagcount.extra = c.tagcount.found;
    c.tagcount.expected = c.tagcount.entries - c.tagcount.extra + c.tagcount.missing;
    if (this.adjustOverflow) this.notes.push(`more than ${KEY_SET_CAP} counted values have entries missing or extra: the counters of the others were compared with the indexes as they are`);
    if (this.rangesOverflow) this.notes.push(`more than ${KEY_SET_CAP} counted ranges have no counter: only the first were reported`);
    if (this.missingCounters.overflowed) this.notes.push(`more than ${KEY_SET_CAP} missing counters: their count may include repeats`);
  }

  private findMissingCounters(): void {
    const { c, dbs, counterAdjust, missingCounters } = this;
    // every counted range with stored events in it has a counter
    for (const r of this.ranges) {
      const k = hex(r.key);
      if (r.size + (counterAdjust.get(k) ?? 0) > 0 && missingCounters.add(k)) c.tagcount.note('missing', r.key, `no counter, though ${r.what}`);
    }
    // ... and so has every counted value whose entries are all missing from its range
    for (const [k, d] of counterAdjust) {
      if (d <= 0 || missingCounters.has(k)) continue;
      const key = Buffer.from(k, 'hex');
      if (!dbs.tagcount.doesExist(key) && this.tagCount(key) === 0 && missingCounters.add(k)) c.tagcount.note('missing', key, `no counter, though ${counterName(key)} is in stored events`);
    }
  }

  // ---- 5. pubkey ids: pkid and idpk are inverse maps ----
  async checkPubkeyIds(): Promise<void> {
    const { c, dbs } = this;
    c.pkid.entries = c.pkid.expected = entryCount(dbs.graph.pkid);
    c.idpk.entries = entryCount(dbs.graph.idpk);
    c.idpk.expected = c.pkid.entries;
    this.meter.start('pubkey ids');
    await scan(dbs.graph.idpk, true, (key, value) => {
      const id = key.length === 4 ? key.readUInt32BE(0) : -1;
      if (id > this.maxId) this.maxId = id;
      const back = value.length === 32 ? dbs.graph.pkid.getBinary(value) : undefined;
      if (id < 0 || !back || back.length !== 4 || back.readUInt32BE(0) !== id) {
        c.idpk.note('extra', key, `id ${id} -> ${short(hex(value))}, whose id is ${back && back.length === 4 ? back.readUInt32BE(0) : 'none'}`);
      }
    });
    c.idpk.extra = c.idpk.found;
    await scan(dbs.graph.pkid, true, (key, value) => {
      if (value.length !== 4) {
        c.pkid.note('wrong', key, `pubkey ${short(hex(key))}: malformed id`);
        return;
      }
      const back = dbs.graph.idpk.getBinary(value);
      if (!back) c.idpk.note('missing', value, `pubkey ${short(hex(key))} has id ${value.readUInt32BE(0)}, which maps to no pubkey`);
      else if (!back.equals(key)) c.pkid.note('wrong', key, `pubkey ${short(hex(key))} has id ${value.readUInt32BE(0)}, which maps to ${short(hex(back))}`);
    });
  }

  // ---- meta ----
  checkMeta(): void {
    const { dbs, meta, maxSerial, maxId } = this;
    const nextSerial = dbs.meta.get(NEXT_SERIAL_KEY);
    if (this.total > 0 && !(typeof nextSerial === 'number' && nextSerial > maxSerial)) {
      meta.push({ key: NEXT_SERIAL_KEY, found: nextSerial, expected: `> ${maxSerial}`, detail: 'the next serial must be above every stored serial (queries read the last serial from it)' });
    }
    const nextId = dbs.meta.get(NEXT_PKID_KEY);
    if (maxId > 0 && !(typeof nextId === 'number' && nextId > maxId)) {
      meta.push({ key: NEXT_PKID_KEY, found: nextId, expected: `> ${maxId}`, detail: 'the next pubkey id must be above every allocated id' });
    }
    for (const kind of GRAPH_KINDS) {
      const have = dbs.meta.get(LISTS_KEY(kind));
      const want = this.listsPerKind.get(kind)!;
      if ((typeof have === 'number' ? have : 0) !== want) meta.push({ key: LISTS_KEY(kind), found: have, expected: want, detail: `current lists of kind ${kind} (the graph walk's cost estimate)` });
    }
  }

  report(): VerifyReport {
    const { c, dbs, duplicates, meta } = this;
    const indexes = Object.values(c).filter((x) => dbs.search !== undefined || (x !== c.searchKeys && x !== c.searchDocs));
    const clean = indexes.every((x) => !x.differs) && duplicates.count === 0 && meta.length === 0 && !this.vanish.differs;
    return {
      events: this.total,
      seconds: (Date.now() - this.t0) / 1000,
      clean,
      indexes: indexes.map((x) => x.toJSON()),
      duplicates,
      unreadable: this.unreadable,
      meta,
      vanish: this.vanish.report(),
      notes: this.notes,
    };
  }
}
