// Checks every derived index of the event store against the stored events (verifyStore), and
// rebuilds them from the events (repairStore). Store code only: src/commands/verify.ts is the CLI.
//
// What is derived, and so checked: the id and address maps, the time-ordered indexes (created,
// kind, pubkey, pubkind, tag+kind), expiry, the search postings and documents, the follow graph
// (edges and each author's current list; pubkey ids must be inverse maps), the NIP-45 counters
// (their counts, not their HLL registers, which may be stale by design; an expired event not swept
// yet is counted, as the writer counts it) and a few meta values (next serial, next pubkey id, the
// graph's list counts). Not derived, so neither checked nor touched: the events themselves,
// deletion tombstones (a tombstone outlives what it deleted), trust ranks.
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
import { addressOf, dTag, isAddressable } from '../nostr/kinds.js';
import { decodeHeader, idHexOf, jsonOf, type Header } from '../store/codec.js';
import { CounterBatch, decodeCounter, isCountedPair } from '../store/counters.js';
import { GRAPH_KINDS, graphMembers, GraphTxn, idPubkey, isGraphKind, kindIdKey, listTimeKey, LISTS_KEY, NEXT_PKID_KEY, pubkeyId, setRange } from '../store/graph.js';
import { putEntries, visitEntries } from '../store/indexer.js';
import { addrKey, EMPTY, expiryKeySerial, idKey, keySerial, NEXT_SERIAL_KEY, readSerial, SERIAL_BYTES, serialKey, SUFFIX_BYTES, tagKindPrefix, tagPrefix, tagTypeAt, TYPE_HEX } from '../store/keys.js';
import { SCHEMA_VERSION, VERSION_KEY } from '../store/migrations.js';
import { incomingWins } from '../store/rules.js';
import type { BinDb, Dbs } from '../store/schema.js';
import { SEARCH_FORMAT_VERSION, SEARCH_META_KEY } from '../store/search/rebuild.js';
import { postingSerial } from '../store/search/schema.js';
import { SPOOL_FROM_KEY } from '../store/spool.js';
import { REPAIR_META_KEY } from '../store/schema.js';

/** The store's schema is not this orbweaver's: it is migrated when opened for writing (the relay, --repair). */
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
  /** what was not checked, and why */
  notes: string[];
}

export interface Progress {
  phase: string;
  done: number;
  total: number;
  /** per second, over the phase */
  rate: number;
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

/** The graph's databases as a new object: graph.ts keeps its memory of pubkey ids per object. */
const freshGraph = (dbs: Dbs): Dbs['graph'] => ({ ...dbs.graph });

// ---------- shared helpers ----------

/** Keys remembered to tell apart two kinds of difference (wrong values, counted missing counters); beyond this counts may be approximate. */
const KEY_SET_CAP = 100_000;
/** graph members held by the cache of current lists while extra edges are looked for */
const LIST_CACHE_MEMBERS = 500_000;
/** pubkey ids remembered while the events are read (~150 bytes each) */
const ID_CACHE = 500_000;

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
const hex = (b: Uint8Array): string => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');
const short = (h: string): string => h.slice(0, 16) + '…';

interface Parsed {
  serial: number;
  h: Header;
  /** what the indexer indexes: the header's fields, the stored JSON's tags and content */
  ev: { pubkey: string; created_at: number; kind: number; tags: string[][]; content?: string };
  /** the JSON did not parse: indexed by its header alone */
  unreadable: boolean;
}

function parseStored(serial: number, value: Buffer): Parsed {
  const h = decodeHeader(value);
  let tags: string[][] = [];
  let content: string | undefined;
  let unreadable = false;
  try {
    const j = JSON.parse(jsonOf(value)) as { tags?: unknown; content?: unknown };
    if (Array.isArray(j.tags)) tags = j.tags as string[][];
    if (typeof j.content === 'string') content = j.content;
  } catch {
    unreadable = true;
  }
  return { serial, h, ev: { pubkey: h.pubkey, created_at: h.created_at, kind: h.kind, tags, content }, unreadable };
}

/** The address key of a replaceable or addressable event, or null (as the writer computes it, txn.ts). */
function addrKeyOf(ev: { kind: number; pubkey: string; tags: string[][] }): Buffer | null {
  if (addressOf(ev) === null) return null;
  return addrKey(ev.kind, ev.pubkey, isAddressable(ev.kind) ? dTag(ev) : '');
}

const describe = (p: Parsed): string => `event ${short(p.h.id)} kind ${p.h.kind} serial ${p.serial}`;

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

/** Reads a db forward in chunks (each its own read), yielding between chunks; `fn` returning false stops. */
async function scan(db: BinDb, values: boolean, fn: (key: Buffer, value: Buffer) => boolean | void, chunk = 2000): Promise<void> {
  let last: Buffer | undefined;
  for (;;) {
    const opts = { start: last, exclusiveStart: last !== undefined, limit: chunk };
    const rows: Array<{ key: Buffer; value: Buffer }> = [];
    if (values) for (const r of db.getRange(opts)) rows.push(r);
    else for (const key of db.getKeys(opts)) rows.push({ key, value: EMPTY });
    for (const r of rows) if (fn(r.key, r.value) === false) return;
    if (rows.length < chunk) return;
    last = rows[rows.length - 1]!.key;
    await tick();
  }
}

const entryCount = (db: BinDb): number => (db.getStats() as { entryCount: number }).entryCount;

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

// The hash of a key (and value) for the fingerprints: two 32-bit lanes, mixed per byte and finished
// (a cyrb53-style hash). Module state, not an object per key: it runs for every index entry.
let H1 = 0;
let H2 = 0;
const seed = (): void => {
  H1 = 0x9e3779b9;
  H2 = 0x85ebca6b;
};
function mixBytes(b: Uint8Array): void {
  let h1 = Math.imul(H1 ^ b.length, 2654435761);
  let h2 = Math.imul(H2 ^ b.length, 1597334677);
  for (let i = 0; i < b.length; i++) {
    const ch = b[i]!;
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  H1 = h1;
  H2 = h2;
}
function mixInt(x: number): void {
  H1 = Math.imul(H1 ^ x, 2654435761);
  H2 = Math.imul(H2 ^ x, 1597334677);
}
function finish(): void {
  const h1 = Math.imul(H1 ^ (H1 >>> 16), 2246822507) ^ Math.imul(H2 ^ (H2 >>> 13), 3266489909);
  H2 = Math.imul(H2 ^ (H2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  H1 = h1;
}

/** Buckets of a fingerprint: a difference is then looked for only among the keys of the buckets that differ. */
const BUCKETS = 4096;

/**
 * An order-free digest of a multiset of keys (with their values where they matter): per bucket (by
 * the key's hash) the count and two 32-bit sums of a hash of key and value. Two indexes with equal
 * buckets hold the same entries but for a chance of about 2^-64 per differing bucket; a difference
 * found is always real. A graph edge is hashed from its three numbers (addEdge), on both sides.
 */
class Fingerprint {
  n = 0;
  private readonly cells = new Uint32Array(BUCKETS * 3);

  private put(bucket: number): void {
    const o = bucket * 3;
    this.cells[o]!++;
    this.cells[o + 1] = (this.cells[o + 1]! + H1) >>> 0;
    this.cells[o + 2] = (this.cells[o + 2]! + H2) >>> 0;
    this.n++;
  }

  static bucketOf(key: Uint8Array): number {
    seed();
    mixBytes(key);
    finish();
    return H1 & (BUCKETS - 1);
  }

  static bucketOfEdge(kind: number, followee: number, follower: number): number {
    seed();
    mixInt(kind);
    mixInt(followee);
    mixInt(follower);
    finish();
    return H1 & (BUCKETS - 1);
  }

  add(key: Uint8Array, value?: Uint8Array): void {
    const bucket = Fingerprint.bucketOf(key);
    if (value) {
      mixBytes(value);
      finish();
    }
    this.put(bucket);
  }

  addEdge(kind: number, followee: number, follower: number): void {
    this.put(Fingerprint.bucketOfEdge(kind, followee, follower));
  }

  /** The buckets that differ from `o` (flags), or null when none does. */
  diff(o: Fingerprint): Uint8Array | null {
    let out: Uint8Array | null = null;
    for (let b = 0; b < BUCKETS; b++) {
      const i = b * 3;
      if (this.cells[i] === o.cells[i] && this.cells[i + 1] === o.cells[i + 1] && this.cells[i + 2] === o.cells[i + 2]) continue;
      (out ??= new Uint8Array(BUCKETS))[b] = 1;
    }
    return out;
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

/** Calls onProgress at most every progressMs. */
class Meter {
  private last = Date.now();
  private started = Date.now();
  private phase = '';
  constructor(private readonly opts: VerifyOptions) {}
  start(phase: string): void {
    this.phase = phase;
    this.started = Date.now();
  }
  tick(done: number, total: number, force = false): void {
    if (!this.opts.onProgress) return;
    const now = Date.now();
    if (!force && now - this.last < (this.opts.progressMs ?? 3000)) return;
    this.last = now;
    const s = Math.max(0.001, (now - this.started) / 1000);
    this.opts.onProgress({ phase: this.phase, done, total, rate: Math.round(done / s) });
  }
}

// ---------- verify ----------

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
  const t0 = Date.now();
  const cap = opts.samples ?? 20;
  const chunk = opts.chunk ?? 1000;
  const meter = new Meter(opts);
  const notes: string[] = [];
  const meta: MetaCheck[] = [];

  const version = allDbs.meta.get(VERSION_KEY);
  const total = entryCount(allDbs.events);
  if (version !== SCHEMA_VERSION && !(version === undefined && total === 0)) {
    throw new StoreVersionError(`the store is at schema version ${String(version)}, this orbweaver's is ${SCHEMA_VERSION}: it is migrated when the relay (or verify --repair) opens it`);
  }

  // A graph object of its own: graph.ts remembers pubkey ids per graph object, and nothing here may
  // take an id from memory instead of the store. The search index is checked only when it was
  // built for the configured kinds and format (else the relay rebuilds it at its next start).
  let dbs: Dbs = { ...allDbs, graph: freshGraph(allDbs) };
  if (allDbs.search) {
    const have = allDbs.meta.get(SEARCH_META_KEY) as { version: number; kinds: number[] } | undefined;
    const want = [...allDbs.search.kinds].sort((a, b) => a - b);
    const current = have !== undefined && have.version === SEARCH_FORMAT_VERSION && have.kinds.length === want.length && have.kinds.every((k, i) => k === want[i]);
    if (!current) {
      dbs = { ...dbs, search: undefined };
      notes.push(`search index not checked: it was built ${have ? `for kinds [${have.kinds.join(',')}] (format ${have.version})` : 'never'}, the configuration asks for kinds [${want.join(',')}] (format ${SEARCH_FORMAT_VERSION}); the relay rebuilds it at its next start`);
    }
  }
  if (allDbs.meta.get(REPAIR_META_KEY) !== undefined) {
    meta.push({ key: REPAIR_META_KEY, found: allDbs.meta.get(REPAIR_META_KEY), expected: undefined, detail: 'a repair was interrupted: the indexes are partial; run verify --repair again' });
  }
  if (allDbs.meta.get(SPOOL_FROM_KEY) !== undefined) {
    meta.push({ key: SPOOL_FROM_KEY, found: allDbs.meta.get(SPOOL_FROM_KEY), expected: undefined, detail: 'an import stopped before its last merge (store/spool.ts): the graph and the time and tag indexes lack the entries of events stored since that serial; opening the store for writing (starting the relay, an import, verify --repair) writes them' });
  }
  const docs = dbs.search?.docs;
  const headerDbs: Dbs = { ...dbs, search: undefined };

  const check = (name: string) => new Check(name, cap);
  const c = {
    id: check('id'), created: check('created'), kind: check('kind'), pubkey: check('pubkey'), pubkind: check('pubkind'),
    tagkind: check('tagkind'), expiry: check('expiry'), addr: check('addr'),
    searchKeys: check('searchKeys'), searchDocs: check('searchDocs'),
    graph: check('graph'), graphcur: check('graphcur'), graphtime: check('graphtime'), tagcount: check('tagcount'), pkid: check('pkid'), idpk: check('idpk'),
  };
  /** the indexes checked by fingerprint, and the serial in each of their keys */
  const byDb = new Map<BinDb, Check>([
    [dbs.created, c.created], [dbs.kind, c.kind], [dbs.pubkey, c.pubkey], [dbs.pubkind, c.pubkind],
    [dbs.tagkind, c.tagkind], [dbs.expiry, c.expiry],
  ]);
  const serialOf = new Map<BinDb, (k: Buffer) => number>([
    [dbs.created, keySerial], [dbs.kind, keySerial], [dbs.pubkey, keySerial], [dbs.pubkind, keySerial],
    [dbs.tagkind, keySerial], [dbs.expiry, expiryKeySerial],
  ]);
  /** indexes whose entries follow from an event's header alone (no JSON parse to check one) */
  const headerOnly = new Set<BinDb>([dbs.created, dbs.kind, dbs.pubkey, dbs.pubkind, dbs.expiry]);
  if (dbs.search) {
    byDb.set(dbs.search.keys, c.searchKeys);
    byDb.set(dbs.search.docs, c.searchDocs);
    serialOf.set(dbs.search.keys, postingSerial);
    serialOf.set(dbs.search.docs, (k) => readSerial(k));
  }
  const graphDb = dbs.graph.graph;

  const duplicates: { count: number; samples: Duplicate[] } = { count: 0, samples: [] };
  const duplicate = (d: Duplicate): void => {
    duplicates.count++;
    if (duplicates.samples.length < cap) duplicates.samples.push(d);
  };
  const unreadable = { count: 0, serials: [] as number[] };
  /** id and address keys found pointing elsewhere: not extra when the scan meets them */
  const wrongIds = new KeySet();
  const wrongAddrs = new KeySet();
  const missingCounters = new KeySet();
  /** per counter key (hex), its entries missing from the index (+) and extra in it (-): count = range + this */
  const counterAdjust = new Map<string, number>();
  let adjustOverflow = false;
  const adjust = (counterKey: string, d: number): void => {
    if (!counterAdjust.has(counterKey) && counterAdjust.size >= KEY_SET_CAP) adjustOverflow = true;
    else counterAdjust.set(counterKey, (counterAdjust.get(counterKey) ?? 0) + d);
  };
  /** the counter key of the tag the indexer visits next (it calls `counted` just before `visit`) */
  let counting: string | null = null;
  const listsPerKind = new Map<number, number>(GRAPH_KINDS.map((k) => [k, 0]));
  let maxSerial = 0;

  // ---- 1. the events: what each index should hold ----
  const expectedFp = new Map<BinDb, Fingerprint>();
  for (const db of [...byDb.keys(), graphDb]) expectedFp.set(db, new Fingerprint());
  let cur!: Parsed;
  const expect = (db: BinDb, key: Buffer, value?: Buffer): void => {
    byDb.get(db)!.expected++;
    expectedFp.get(db)!.add(key, db === docs ? value : undefined);
  };
  const edge = Buffer.allocUnsafe(10);
  const edgeOf = (kind: number, followee: number, follower: number): Buffer => {
    edge.writeUInt16BE(kind, 0);
    edge.writeUInt32BE(followee, 2);
    edge.writeUInt32BE(follower, 6);
    return edge;
  };
  /** the counter key (hex) of a graph member: tagKindPrefix(tagPrefix('p', member), kind) */
  const memberCounter = (member: string, kind: number): string => hex(tagKindPrefix(tagPrefix('p', member).prefix, kind));

  /** Every stored event in chunks; `chunkDone` runs after each chunk's events. */
  const forEachEvent = async (phase: string, each: (p: Parsed) => void, chunkDone: () => void): Promise<void> => {
    meter.start(phase);
    let done = 0;
    let last: Buffer | undefined;
    for (;;) {
      const rows: Array<{ key: Buffer; value: Buffer }> = [];
      for (const r of dbs.events.getRange({ start: last, exclusiveStart: last !== undefined, limit: chunk })) rows.push(r);
      for (const { key, value } of rows) each((cur = parseStored(readSerial(key), value)));
      chunkDone();
      done += rows.length;
      meter.tick(done, total);
      if (rows.length < chunk) return;
      last = rows[rows.length - 1]!.key;
      await tick();
    }
  };

  /** Whether `p` is a second copy of a stored event (the id entry points at the first). */
  const isCopy = (p: Parsed): boolean => {
    const at = dbs.id.getBinary(idKey(p.h.id));
    if (!at || readSerial(at) === p.serial) return false;
    const other = dbs.events.getBinary(at);
    return other !== undefined && idHexOf(other) === p.h.id;
  };
  /** Whether `p` is the version of its address the rules keep (false: an older copy the address entry does not point at). */
  const keptVersion = (p: Parsed): boolean => {
    const ak = addrKeyOf(p.ev);
    const to = ak ? dbs.addr.getBinary(ak) : undefined;
    if (!ak || !to || readSerial(to) === p.serial) return true;
    const otherValue = dbs.events.getBinary(to);
    const other = otherValue ? parseStored(readSerial(to), otherValue) : null;
    const otherAk = other ? addrKeyOf(other.ev) : null;
    return !(other && otherAk && otherAk.equals(ak)) || incomingWins(other.h, p.h);
  };

  // the graph lists of a chunk, and the pubkeys whose ids they need (looked up in key order)
  let lists: Array<{ p: Parsed; members: string[] }> = [];
  let pks = new Map<string, number | undefined>();
  /** ids read so far (a follow list names the same popular pubkeys again and again), bounded */
  const ids = new Map<string, number>();
  const resolveIds = (): void => {
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
  };
  const addList = (p: Parsed): void => {
    const members = graphMembers(p.h.kind, p.ev.tags);
    lists.push({ p, members });
    pks.set(p.h.pubkey, undefined);
    for (const m of members) pks.set(m, undefined);
  };

  await forEachEvent('events', (p) => {
    maxSerial = p.serial;
    if (p.unreadable) {
      unreadable.count++;
      if (unreadable.serials.length < cap) unreadable.serials.push(p.serial);
    }
    // id -> serial
    const idK = idKey(p.h.id);
    const at = dbs.id.getBinary(idK);
    if (!at) {
      c.id.expected++;
      c.id.note('missing', idK, describe(p));
    } else if (readSerial(at) !== p.serial) {
      const other = dbs.events.getBinary(at);
      if (other && idHexOf(other) === p.h.id) {
        // the same event stored twice: the id entry's copy is kept, and its entries are that copy's
        duplicate({ what: 'id', serial: p.serial, kept: readSerial(at), detail: `event ${short(p.h.id)} is stored at serials ${readSerial(at)} and ${p.serial}` });
        return;
      }
      c.id.expected++;
      wrongIds.add(hex(idK));
      c.id.note('wrong', idK, `${describe(p)}: points at serial ${readSerial(at)}${other ? ` (event ${short(idHexOf(other))})` : ' (no event)'}`);
    } else c.id.expected++;

    // address -> serial of the stored version
    const ak = addrKeyOf(p.ev);
    let kept = true;
    if (ak) {
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
            duplicate({ what: 'address', serial: other.serial, kept: p.serial, detail: `two stored versions of ${addressOf(p.ev)}: ${describe(other)} (dropped) and ${describe(p)}` });
          } else duplicate({ what: 'address', serial: p.serial, kept: other.serial, detail: `two stored versions of ${addressOf(p.ev)}: ${describe(p)} (dropped) and ${describe(other)}` });
        } else {
          c.addr.expected++;
          wrongAddrs.add(hex(ak));
          c.addr.note('wrong', ak, `${describe(p)}: points at serial ${readSerial(to)}${other ? ` (${describe(other)})` : ' (no event)'}`);
        }
      }
    }

    // time-ordered indexes, expiry, search
    visitEntries(dbs, p.ev, p.serial, p.h.expiration, expect);
    // the follow graph: only the kept version of a list
    if (isGraphKind(p.h.kind) && kept) {
      listsPerKind.set(p.h.kind, listsPerKind.get(p.h.kind)! + 1);
      addList(p);
    }
  }, () => {
    resolveIds();
    const edges = expectedFp.get(graphDb)!;
    for (const { p, members } of lists) {
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
        if (isCountedPair('p', kind)) for (const m of members) adjust(memberCounter(m, kind), 1);
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
        if (isCountedPair('p', kind)) adjust(memberCounter(m, kind), 1);
      }
    }
    lists = [];
    pks = new Map();
  });

  // ---- 2. each index read in key order ----
  // Noted on the way: each counted (tag, kind) range of the tag+kind index and each follower set of
  // a counted graph kind that has no counter, with its size (step 4 decides whether it should).
  /** per index whose entries differ from what the events call for: the buckets that differ */
  const differ = new Map<BinDb, Uint8Array>();
  const ranges: Array<{ key: Buffer; size: number; what: string }> = [];
  let rangesOverflow = false;
  for (const db of [...byDb.keys(), graphDb]) {
    const isGraph = db === graphDb;
    const ck = isGraph ? c.graph : byDb.get(db)!;
    const fp = new Fingerprint();
    const withValues = db === docs;
    let group: Buffer | null = null;
    let range: (typeof ranges)[number] | null = null;
    let groupKind = -1;
    let groupFollowee = -1;
    const size = entryCount(db);
    meter.start(`index ${ck.name}`);
    const open = (key: Buffer, exists: boolean, what: string): void => {
      range = null;
      if (exists) return;
      if (ranges.length >= KEY_SET_CAP) rangesOverflow = true;
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
    const bad = fp.diff(expectedFp.get(db)!);
    if (bad) differ.set(db, bad);
  }

  // ---- 3. where a bucket differs: the entries the events call for, looked up ----
  // A chunk's lookups are made in key order: in a large store a lookup in event order lands on a
  // page of its own, in key order the chunk's lookups share pages.
  if (differ.size > 0) {
    interface Probe {
      db: BinDb;
      key: Buffer;
      /** the stored value expected (search documents); undefined: only the key */
      value?: Buffer;
      p: Parsed;
      /** the counter key (hex) of a counted entry, whose count includes it */
      counter: string | null;
    }
    let probes: Probe[] = [];
    const badEdges = differ.get(graphDb);
    const tagsDiffer = differ.has(dbs.tagkind);
    const probe = (db: BinDb, key: Buffer, value?: Buffer): void => {
      const bad = differ.get(db);
      if (bad && bad[Fingerprint.bucketOf(key)]) probes.push({ db, key: Buffer.from(key), value, p: cur, counter: db === dbs.tagkind ? counting : null });
      if (db === dbs.tagkind) counting = null;
    };
    const counted = (prefix: Buffer): void => {
      counting = hex(prefix);
    };
    const byKey = (a: Probe, b: Probe): number => Buffer.compare(a.key, b.key);
    await forEachEvent('looking up the differences', (p) => {
      if (isCopy(p)) return;
      visitEntries(dbs, p.ev, p.serial, p.h.expiration, probe, tagsDiffer ? counted : undefined);
      if (badEdges && isGraphKind(p.h.kind) && keptVersion(p)) addList(p);
    }, () => {
      resolveIds();
      // the edges in differing buckets, sorted as numbers (kind, followee id, follower id)
      const missing: Array<{ kind: number; followee: number; follower: number; p: Parsed; member: string }> = [];
      for (const { p, members } of lists) {
        const kind = p.h.kind;
        const author = pks.get(p.h.pubkey);
        if (author === undefined) continue; // noted in step 1
        for (const m of members) {
          const id = pks.get(m);
          if (id !== undefined && badEdges![Fingerprint.bucketOfEdge(kind, id, author)]) missing.push({ kind, followee: id, follower: author, p, member: m });
        }
      }
      missing.sort((a, b) => a.kind - b.kind || a.followee - b.followee || a.follower - b.follower);
      for (const e of missing) {
        const ek = edgeOf(e.kind, e.followee, e.follower);
        if (graphDb.doesExist(ek)) continue;
        c.graph.note('missing', ek, `${describe(e.p)} follows ${short(e.member)}`);
        if (isCountedPair('p', e.kind)) adjust(memberCounter(e.member, e.kind), 1);
      }
      // every other entry, per index in key order
      const perDb = new Map<BinDb, Probe[]>();
      for (const pr of probes) {
        let list = perDb.get(pr.db);
        if (!list) perDb.set(pr.db, (list = []));
        list.push(pr);
      }
      for (const [db, list] of perDb) {
        const ck = byDb.get(db)!;
        list.sort(byKey);
        for (const pr of list) {
          if (pr.value === undefined) {
            if (db.doesExist(pr.key)) continue;
            ck.note('missing', pr.key, describe(pr.p));
            if (pr.counter !== null) adjust(pr.counter, 1);
            continue;
          }
          const have = db.getBinary(pr.key);
          if (!have) ck.note('missing', pr.key, describe(pr.p));
          else if (!have.equals(pr.value)) ck.note('wrong', pr.key, `${describe(pr.p)}: the stored value differs`);
        }
      }
      probes = [];
      lists = [];
      pks = new Map();
    });
  }

  // ---- 3b. extra entries: an index holding more than the expected entries that are present ----
  c.id.entries = entryCount(dbs.id);
  c.addr.entries = entryCount(dbs.addr);
  c.graphcur.entries = entryCount(dbs.graph.graphcur);
  c.graphtime.entries = entryCount(dbs.graph.graphtime);

  // a small cache of parsed events (the scans below look the same event up for several of its keys)
  const cache = new Map<number, Parsed | null>();
  const stored = (serial: number): Parsed | null => {
    let p = cache.get(serial);
    if (p !== undefined) {
      cache.delete(serial);
      cache.set(serial, p);
      return p;
    }
    const v = dbs.events.getBinary(serialKey(serial));
    p = v ? parseStored(serial, v) : null;
    cache.set(serial, p);
    if (cache.size > 1024) cache.delete(cache.keys().next().value!);
    return p;
  };
  /** Whether the stored event at `serial` has `key` in `db`, by the indexer's own visit. */
  const hasEntry = (db: BinDb, key: Buffer, serial: number): { p: Parsed | null; has: boolean } => {
    const p = stored(serial);
    if (!p) return { p, has: false };
    let has = false;
    const header = headerOnly.has(db);
    const ev = header ? { ...p.ev, tags: [], content: undefined } : p.ev;
    visitEntries(header ? headerDbs : dbs, ev, serial, p.h.expiration, (d, k) => {
      if (d === db && !has && k.equals(key)) has = true;
    });
    return { p, has: has && !isCopy(p) };
  };
  const why = (p: Parsed | null, serial: number): string => (p ? `${describe(p)} should not have it` : `no stored event at serial ${serial}`);

  // the graph: an author's current list of a kind, as the address index (else graphcur) finds it
  const listCache = new Map<number, Set<string> | null>();
  let cachedMembers = 0;
  const currentList = (kind: number, authorId: number): Set<string> | null => {
    const ck = kind * 2 ** 32 + authorId;
    const hit = listCache.get(ck);
    if (hit !== undefined) return hit;
    const pk = idPubkey(dbs, authorId);
    let found: Parsed | null = null;
    if (pk) {
      const at = dbs.addr.getBinary(addrKey(kind, pk, ''));
      const byAddr = at ? stored(readSerial(at)) : null;
      if (byAddr && byAddr.h.kind === kind && byAddr.h.pubkey === pk) found = byAddr;
      else {
        const gc = dbs.graph.graphcur.getBinary(kindIdKey(kind, authorId));
        const byCur = gc && gc.length >= 4 + SERIAL_BYTES ? stored(readSerial(gc, 4)) : null;
        if (byCur && byCur.h.kind === kind && byCur.h.pubkey === pk) found = byCur;
      }
    }
    const set = found ? new Set(graphMembers(kind, found.ev.tags)) : null;
    cachedMembers += set?.size ?? 0;
    if (cachedMembers > LIST_CACHE_MEMBERS) {
      listCache.clear();
      cachedMembers = set?.size ?? 0;
    }
    listCache.set(ck, set);
    return set;
  };
  const edgeValid = (key: Buffer): boolean => {
    if (key.length !== 10) return false;
    const list = currentList(key.readUInt16BE(0), key.readUInt32BE(6));
    if (!list) return false;
    const followee = idPubkey(dbs, key.readUInt32BE(2));
    return followee !== undefined && list.has(followee);
  };

  /** whether every extra entry of the tag+kind index and the graph was found (the counters' truth needs them) */
  let extrasFound = true;
  for (const [db, ck] of [...byDb, [graphDb, c.graph] as const]) {
    const isGraph = db === graphDb;
    const extra = ck.extraByCount;
    if (extra <= 0) continue;
    const bad = differ.get(db);
    meter.start(`extra ${ck.name} entries`);
    let seen = 0;
    await scan(db, false, (key) => {
      seen++;
      meter.tick(seen, ck.entries);
      if (isGraph) {
        if (key.length === 10 && !bad?.[Fingerprint.bucketOfEdge(key.readUInt16BE(0), key.readUInt32BE(2), key.readUInt32BE(6))]) return;
        if (edgeValid(key)) return;
        const detail = key.length !== 10 ? 'malformed key'
          : `kind ${key.readUInt16BE(0)}: ${short(idPubkey(dbs, key.readUInt32BE(6)) ?? `id ${key.readUInt32BE(6)}`)} does not follow ${short(idPubkey(dbs, key.readUInt32BE(2)) ?? `id ${key.readUInt32BE(2)}`)} in a stored list`;
        c.graph.note('extra', key, detail);
        const pk = key.length === 10 && isCountedPair('p', key.readUInt16BE(0)) ? idPubkey(dbs, key.readUInt32BE(2)) : undefined;
        if (pk) adjust(memberCounter(pk, key.readUInt16BE(0)), -1);
      } else {
        if (!bad?.[Fingerprint.bucketOf(key)]) return;
        if (key.length < SERIAL_BYTES) ck.note('extra', key, 'malformed key');
        else {
          const serial = serialOf.get(db)!(key);
          const { p, has } = hasEntry(db, key, serial);
          if (has) return;
          ck.note('extra', key, why(p, serial));
          const counter = db === dbs.tagkind ? countedPrefix(key) : null;
          if (counter) adjust(hex(counter), -1);
        }
      }
      return ck.found < extra;
    });
    if (ck.found < extra && (db === dbs.tagkind || isGraph)) extrasFound = false;
  }
  if (!extrasFound) notes.push('not every extra entry of the tag+kind index or the graph was found: counters were compared with the indexes as they are');

  // id: an entry is right when the event at its serial has that id
  if (c.id.extraByCount > 0) {
    const extra = c.id.extraByCount;
    await scan(dbs.id, true, (key, value) => {
      const serial = value.length >= SERIAL_BYTES ? readSerial(value) : -1;
      const v = serial >= 0 ? dbs.events.getBinary(serialKey(serial)) : undefined;
      if (v && idHexOf(v) === hex(key)) return;
      if (wrongIds.has(hex(key))) return;
      c.id.note('extra', key, v ? `points at serial ${serial}, event ${short(idHexOf(v))}` : `points at serial ${serial}: no stored event`);
      return c.id.found < extra;
    });
  }
  // address: an entry is right when the event at its serial has that address
  if (c.addr.extraByCount > 0) {
    const extra = c.addr.extraByCount;
    await scan(dbs.addr, true, (key, value) => {
      const serial = value.length >= SERIAL_BYTES ? readSerial(value) : -1;
      const p = serial >= 0 ? stored(serial) : null;
      const ak = p ? addrKeyOf(p.ev) : null;
      if (ak && ak.equals(key)) return;
      if (wrongAddrs.has(hex(key))) return;
      c.addr.note('extra', key, p ? `points at serial ${serial}, ${describe(p)}, which has another address or none` : `points at serial ${serial}: no stored event`);
      return c.addr.found < extra;
    });
  }
  if (c.graphcur.extraByCount > 0) {
    const extra = c.graphcur.extraByCount;
    await scan(dbs.graph.graphcur, false, (key) => {
      if (key.length === 6 && currentList(key.readUInt16BE(0), key.readUInt32BE(2))) return;
      c.graphcur.note('extra', key, key.length === 6 ? `kind ${key.readUInt16BE(0)}: author ${short(idPubkey(dbs, key.readUInt32BE(2)) ?? `id ${key.readUInt32BE(2)}`)} has no stored list` : 'malformed key');
      return c.graphcur.found < extra;
    });
  }
  if (c.graphtime.extraByCount > 0) {
    const extra = c.graphtime.extraByCount;
    await scan(dbs.graph.graphtime, true, (key, value) => {
      const serial = key.length === 2 + SUFFIX_BYTES ? readSerial(key, 6) : -1;
      const p = serial >= 0 ? stored(serial) : null;
      const gc = p && value.length >= 4 && isGraphKind(p.h.kind) ? dbs.graph.graphcur.getBinary(kindIdKey(p.h.kind, value.readUInt32BE(0))) : null;
      if (gc && gc.length >= 4 + SERIAL_BYTES && readSerial(gc, 4) === serial && p!.h.kind === key.readUInt16BE(0) && p!.h.created_at === key.readUInt32BE(2)) return;
      c.graphtime.note('extra', key, p ? `${describe(p)} is not its author's current list at this time and kind` : `no stored event at serial ${serial}`);
      return c.graphtime.found < extra;
    });
  }
  for (const ck of [c.id, c.addr, c.graphcur, c.graphtime, c.graph, ...byDb.values()]) ck.extra = Math.max(0, ck.extraByCount, ck.found);

  // ---- 4. counters: each count is the number of stored events with its tag ----
  // That number is the entries of its range in the tag+kind index (or its follower set in the
  // graph), less the extra ones found there, plus the missing ones.
  const tagCount = (prefix: Buffer): number => dbs.tagkind.getKeysCount({ start: prefix, end: prefixEnd(prefix) });
  const followerCount = (kind: number, pk: string): number => {
    const id = pubkeyId(dbs, pk);
    return id === undefined ? 0 : graphDb.getKeysCount(setRange(kind, id));
  };
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
    const truth = tagCount(key) + (name === 'p' && isGraphKind(kind) ? followerCount(kind, v) : 0) + (counterAdjust.get(hex(key)) ?? 0);
    const have = value.length >= 9 ? decodeCounter(value).count : -1;
    if (truth <= 0) c.tagcount.note('extra', key, `${counterName(key)}: counts ${have}, no stored event has the tag`);
    else if (have !== truth) c.tagcount.note('wrong', key, `${counterName(key)}: counts ${have < 0 ? 'an unreadable value' : have}, ${truth} stored events have the tag`);
  }, 1000);
  // every counted range with stored events in it has a counter
  for (const r of ranges) {
    const k = hex(r.key);
    if (r.size + (counterAdjust.get(k) ?? 0) > 0 && missingCounters.add(k)) c.tagcount.note('missing', r.key, `no counter, though ${r.what}`);
  }
  // ... and so has every counted value whose entries are all missing from its range
  for (const [k, d] of counterAdjust) {
    if (d <= 0 || missingCounters.has(k)) continue;
    const key = Buffer.from(k, 'hex');
    if (!dbs.tagcount.doesExist(key) && tagCount(key) === 0 && missingCounters.add(k)) c.tagcount.note('missing', key, `no counter, though ${counterName(key)} is in stored events`);
  }
  c.tagcount.extra = c.tagcount.found;
  c.tagcount.expected = c.tagcount.entries - c.tagcount.extra + c.tagcount.missing;
  if (adjustOverflow) notes.push(`more than ${KEY_SET_CAP} counted values have entries missing or extra: the counters of the others were compared with the indexes as they are`);
  if (rangesOverflow) notes.push(`more than ${KEY_SET_CAP} counted ranges have no counter: only the first were reported`);
  if (missingCounters.overflowed) notes.push(`more than ${KEY_SET_CAP} missing counters: their count may include repeats`);

  // ---- 5. pubkey ids: pkid and idpk are inverse maps ----
  c.pkid.entries = c.pkid.expected = entryCount(dbs.graph.pkid);
  c.idpk.entries = entryCount(dbs.graph.idpk);
  c.idpk.expected = c.pkid.entries;
  let maxId = 0;
  meter.start('pubkey ids');
  await scan(dbs.graph.idpk, true, (key, value) => {
    const id = key.length === 4 ? key.readUInt32BE(0) : -1;
    if (id > maxId) maxId = id;
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

  // ---- meta ----
  const nextSerial = allDbs.meta.get(NEXT_SERIAL_KEY);
  if (total > 0 && !(typeof nextSerial === 'number' && nextSerial > maxSerial)) {
    meta.push({ key: NEXT_SERIAL_KEY, found: nextSerial, expected: `> ${maxSerial}`, detail: 'the next serial must be above every stored serial (queries read the last serial from it)' });
  }
  const nextId = allDbs.meta.get(NEXT_PKID_KEY);
  if (maxId > 0 && !(typeof nextId === 'number' && nextId > maxId)) {
    meta.push({ key: NEXT_PKID_KEY, found: nextId, expected: `> ${maxId}`, detail: 'the next pubkey id must be above every allocated id' });
  }
  for (const kind of GRAPH_KINDS) {
    const have = allDbs.meta.get(LISTS_KEY(kind));
    const want = listsPerKind.get(kind)!;
    if ((typeof have === 'number' ? have : 0) !== want) meta.push({ key: LISTS_KEY(kind), found: have, expected: want, detail: `current lists of kind ${kind} (the graph walk's cost estimate)` });
  }

  const indexes = Object.values(c).filter((x) => dbs.search !== undefined || (x !== c.searchKeys && x !== c.searchDocs));
  const clean = indexes.every((x) => !x.differs) && duplicates.count === 0 && meta.length === 0;
  return {
    events: total,
    seconds: (Date.now() - t0) / 1000,
    clean,
    indexes: indexes.map((x) => x.toJSON()),
    duplicates,
    unreadable,
    meta,
    notes,
  };
}

// ---------- repair ----------

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
  /** stored copies the rules drop (same id twice, an older version of an address), deleted */
  removed: Array<{ serial: number; id: string; why: string }>;
  /**
   * pkid and idpk were not inverse maps: idpk was rebuilt from pkid (no id changes), `removed`
   * pubkeys whose id another pubkey holds lost theirs (a new one is allocated when next needed)
   */
  pubkeyIds: { rebuilt: boolean; removed: number };
  /** entries per index after the repair */
  indexes: Record<string, number>;
  seconds: number;
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
  let dbs = storeDbs;
  const batch = opts.batch ?? 5000;
  const maxEntries = opts.maxEntries ?? 250_000;
  const meter = new Meter(opts);
  const total = entryCount(dbs.events);
  const keepIds = await pubkeyIdsInverse(dbs);
  // a graph object of its own: graph.ts remembers pubkey ids per graph object, and this may remove some
  dbs = { ...dbs, graph: freshGraph(dbs) };

  const derived: BinDb[] = [dbs.id, dbs.created, dbs.kind, dbs.pubkey, dbs.pubkind, dbs.tagkind, dbs.tagcount, dbs.expiry, dbs.addr, dbs.graph.graph, dbs.graph.graphcur, dbs.graph.graphtime];
  if (dbs.search) derived.push(dbs.search.keys, dbs.search.docs);
  env.transactionSync(() => {
    for (const db of derived) db.clearSync();
    if (!keepIds) dbs.graph.idpk.clearSync();
    for (const kind of GRAPH_KINDS) dbs.meta.removeSync(LISTS_KEY(kind));
    dbs.meta.putSync(REPAIR_META_KEY, new Date().toISOString());
  });

  // Each chunk is one synchronous write transaction: if it throws, LMDB aborts all of it (an
  // asynchronous transaction() whose callback throws would commit what it wrote). `each` returns
  // the entries it wrote: a chunk ends at `batch` events or `maxEntries` entries.
  const chunks = async (phase: string, each: (p: Parsed, key: Buffer) => number, begin?: () => void, end?: () => void): Promise<void> => {
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
    };

  // 0. pubkey ids: idpk again from pkid, which the graph's edges were written with
  let idsRemoved = 0;
  if (!keepIds) {
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
    idsRemoved = taken.length;
  }

  // 1. ids and addresses first, so that of two copies the rules would not both keep the dropped
  // one is deleted before anything is indexed
  const removed: RepairReport['removed'] = [];
  const drop = (p: Parsed, why: string): void => {
    dbs.events.removeSync(serialKey(p.serial));
    const at = dbs.id.getBinary(idKey(p.h.id));
    if (at && readSerial(at) === p.serial) dbs.id.removeSync(idKey(p.h.id));
    removed.push({ serial: p.serial, id: p.h.id, why });
  };
  await chunks('ids and addresses', (p, key) => {
    const idK = idKey(p.h.id);
    if (dbs.id.doesExist(idK)) {
      drop(p, 'the same event is stored at a lower serial');
      return 1;
    }
    dbs.id.putSync(idK, key);
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

  // 2. every other index, the graph and the counters, by the writer's own functions; the counter
  // notes, the pubkey id counter and the list counts are written at the end of each chunk. The
  // entries of a chunk are gathered and written in key order at its end (a bulk write is cheaper
  // by the pages it dirties: in key order a page takes many keys at once). Only writes are
  // gathered: the pubkey ids, which GraphTxn reads back as it allocates them, are written at once.
  // Keys as latin1 strings (one character per byte): the default sort compares them natively in
  // byte order, where a comparator calling Buffer.compare took a fifth of the repair. Values are
  // empty but for the search documents, which are gathered with theirs.
  const pending = new Map<BinDb, string[]>();
  const withValues = new Map<BinDb, Array<[Buffer, Buffer]>>();
  const gather = (db: BinDb): BinDb => {
    const list: string[] = [];
    pending.set(db, list);
    return { putSync: (key: Buffer) => void list.push(key.toString('latin1')) } as unknown as BinDb;
  };
  const gatherValues = (db: BinDb): BinDb => {
    const list: Array<[Buffer, Buffer]> = [];
    withValues.set(db, list);
    return { putSync: (key: Buffer, value: Buffer) => void list.push([Buffer.from(key), value]) } as unknown as BinDb;
  };
  const bulk: Dbs = {
    ...dbs,
    created: gather(dbs.created), kind: gather(dbs.kind), pubkey: gather(dbs.pubkey), pubkind: gather(dbs.pubkind),
    tagkind: gather(dbs.tagkind), expiry: gather(dbs.expiry),
    graph: { ...dbs.graph, graph: gather(dbs.graph.graph) },
    search: dbs.search ? { ...dbs.search, keys: gather(dbs.search.keys), docs: gatherValues(dbs.search.docs) } : undefined,
  };
  let counters = new CounterBatch();
  let graph = new GraphTxn(bulk, () => {}, counters);
  await chunks(
    'indexes',
    (p) => {
      let n = putEntries(bulk, p.ev, p.serial, p.h.expiration, counters);
      if (isGraphKind(p.h.kind)) n += graph.replace(p.h.kind, p.h.pubkey, [], graphMembers(p.h.kind, p.ev.tags), { createdAt: p.h.created_at, serial: p.serial });
      return n;
    },
    () => {
      for (const list of pending.values()) list.length = 0;
      for (const list of withValues.values()) list.length = 0;
      counters = new CounterBatch();
      graph = new GraphTxn(bulk, () => {}, counters);
    },
    () => {
      for (const [db, list] of pending) {
        list.sort();
        for (const key of list) db.putSync(Buffer.from(key, 'latin1'), EMPTY);
        list.length = 0;
      }
      for (const [db, list] of withValues) {
        list.sort((a, b) => Buffer.compare(a[0], b[0]));
        for (const [key, value] of list) db.putSync(key, value);
        list.length = 0;
      }
      counters.apply(dbs.tagcount);
      graph.finish();
    },
  );

  // 3. meta: the next serial above every stored one, the search index's marker, the repair done
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
    dbs.meta.removeSync(REPAIR_META_KEY);
  });

  const indexes: Record<string, number> = {};
  const g = dbs.graph;
  for (const [name, db] of Object.entries({ id: dbs.id, created: dbs.created, kind: dbs.kind, pubkey: dbs.pubkey, pubkind: dbs.pubkind, tagkind: dbs.tagkind, tagcount: dbs.tagcount, addr: dbs.addr, expiry: dbs.expiry, pkid: g.pkid, idpk: g.idpk, graph: g.graph, graphcur: g.graphcur, graphtime: g.graphtime })) indexes[name] = entryCount(db);
  if (dbs.search) {
    indexes.searchKeys = entryCount(dbs.search.keys);
    indexes.searchDocs = entryCount(dbs.search.docs);
  }
  return { events: entryCount(dbs.events), removed, pubkeyIds: { rebuilt: !keepIds, removed: idsRemoved }, indexes, seconds: (Date.now() - t0) / 1000 };
}
