// Which index entries one event has. Used both to insert and to delete, so the two can't drift.
// Keys are built in place in one reused scratch buffer (lmdb-js copies a key before putSync and
// removeSync return): index maintenance runs on the main thread for every stored event, so it
// allocates nothing per entry.
import type { NostrEvent } from '../nostr/event.js';
import { CounterBatch, isCountedPair } from './counters.js';
import { isGraphKind, isGraphTag } from './graph.js';
import { EMPTY, expiryKey, MAX_TAG_PREFIX, PK_PREFIX_BYTES, SERIAL_BYTES, TYPE_HEX, tagTypeAt, writeTagPrefix } from './keys.js';
import type { BinDb, Dbs } from './schema.js';
import { visitSearchEntries } from './search/entries.js';

/** content: for the search index (search/entries.ts); events without it are not searchable */
export type Indexed = Pick<NostrEvent, 'pubkey' | 'created_at' | 'kind' | 'tags'> & {
  content?: string;
  /** every tag is one the follow graph holds (graph.ts GraphList.only): no tag+kind entry to visit */
  graphOnly?: boolean;
};
/** value: empty for every index but the search documents */
export type Visit = (db: BinDb, key: Buffer, value?: Buffer) => void;
/** gets a counted entry's tag+kind prefix (in the scratch buffer: valid until it returns), and the tag's name and value */
type Counted = (prefix: Buffer, name: string, value: string) => void;

const scratch = Buffer.allocUnsafe(MAX_TAG_PREFIX + 2 + 4 + SERIAL_BYTES);
/** scratch.subarray(0, n) for every n, made once: a view per entry was a tenth of ingest's garbage */
const views = Array.from({ length: scratch.length + 1 }, (_, n) => scratch.subarray(0, n));

/** Appends created_at + serial at `o` in the scratch buffer; returns the key (valid until the next write). */
function suffix(o: number, ca: number, serial: number): Buffer {
  scratch.writeUInt32BE(ca, o);
  scratch.writeUIntBE(serial, o + 4, SERIAL_BYTES);
  return views[o + 4 + SERIAL_BYTES]!;
}

/**
 * Whether tags[i] is not indexed: not indexable (only a single-letter name with a value is), or
 * a repeat of an earlier (name, value), which would only write the same key again (and count a
 * follow twice). Few tags are compared; many go through sets of values per name (a follow list's
 * values are looked up as they are: no string is built per tag).
 */
function skipTag(tags: string[][], i: number, seen: Map<string, Set<string>> | null): boolean {
  const t = tags[i]!;
  if (t.length < 2 || t[0]!.length !== 1) return true;
  if (seen) {
    let values = seen.get(t[0]!);
    if (!values) seen.set(t[0]!, (values = new Set()));
    if (values.has(t[1]!)) return true;
    values.add(t[1]!);
    return false;
  }
  for (let j = 0; j < i; j++) {
    const u = tags[j]!;
    if (u.length >= 2 && u[0] === t[0] && u[1] === t[1]) return true;
  }
  return false;
}

/**
 * Visits the tag+kind entries: one per distinct indexable (name, value), except the `p` tags of
 * the graph kinds that hold a pubkey, which the follow graph keeps (graph.ts). `counted` gets the tag+kind
 * prefix of each entry that counters.ts counts, in the scratch buffer (valid until it returns). Returns how many it visited.
 * `withGraphTags`: the graph's tags too (the schema 2 migration, which predates the graph).
 */
export function visitTagEntries(dbs: Dbs, ev: Indexed, serial: number, visit: Visit, counted?: Counted, withGraphTags = false): number {
  if (ev.graphOnly && !withGraphTags) return 0;
  const tags = ev.tags;
  const seen = tags.length > 16 ? new Map<string, Set<string>>() : null;
  const graph = !withGraphTags && isGraphKind(ev.kind);
  let n = 0;
  for (let i = 0; i < tags.length; i++) {
    const t = tags[i]!;
    if (graph && isGraphTag(t)) continue;
    if (skipTag(tags, i, seen)) continue;
    const end = Math.abs(writeTagPrefix(scratch, 0, t[0]!, t[1]!));
    scratch.writeUInt16BE(ev.kind, end);
    if (counted && scratch[tagTypeAt(scratch)] === TYPE_HEX && isCountedPair(t[0]!, ev.kind)) counted(views[end + 2]!, t[0]!, t[1]!);
    visit(dbs.tagkind, suffix(end + 2, ev.created_at, serial));
    n++;
  }
  return n;
}

/**
 * Visits every index entry of the event: time-ordered indexes, expiry when the event expires, the
 * search index. Returns how many it visited: what a write transaction is bounded by (writer.ts).
 */
export function visitEntries(dbs: Dbs, ev: Indexed, serial: number, expiration: number | null, visit: Visit, counted?: Counted): number {
  const ca = ev.created_at;
  visit(dbs.created, suffix(0, ca, serial));
  scratch.writeUInt16BE(ev.kind, 0);
  visit(dbs.kind, suffix(2, ca, serial));
  scratch.write(ev.pubkey, 0, PK_PREFIX_BYTES, 'hex');
  visit(dbs.pubkey, suffix(PK_PREFIX_BYTES, ca, serial));
  scratch.writeUInt16BE(ev.kind, PK_PREFIX_BYTES); // the pubkey prefix is still in place
  visit(dbs.pubkind, suffix(PK_PREFIX_BYTES + 2, ca, serial));
  let n = 4 + visitTagEntries(dbs, ev, serial, visit, counted);
  if (expiration !== null) {
    visit(dbs.expiry, expiryKey(expiration, serial));
    n++;
  }
  if (dbs.search) n += visitSearchEntries(dbs.search, ev, serial, visit);
  return n;
}

/** Visits that write or remove each entry (the undo of each other: txn.ts journals them). */
export const putVisit: Visit = (db, key, value) => db.putSync(key, value ?? EMPTY);
export const removeVisit: Visit = (db, key) => void db.removeSync(key);

/** A `counted` callback that notes the event's counted tags in `counters` with `delta` (+1 written, -1 removed). */
export const noteCounted = (counters: CounterBatch, ev: Pick<Indexed, 'kind' | 'pubkey'>, delta: 1 | -1): Counted =>
  (prefix, name, value) => counters.note(prefix, name, value, ev.kind, ev.pubkey, delta);

/** Writes the event's entries (through `visit`: an import's spool holds some back) and notes its counted tags (+1) in `counters`; returns how many. */
export const putEntries = (dbs: Dbs, ev: Indexed, serial: number, expiration: number | null, counters: CounterBatch, visit: Visit = putVisit): number =>
  visitEntries(dbs, ev, serial, expiration, visit, noteCounted(counters, ev, 1));
/** Removes the event's entries (through `visit`) and notes its counted tags (-1) in `counters`; returns how many. */
export const removeEntries = (dbs: Dbs, ev: Indexed, serial: number, expiration: number | null, counters: CounterBatch, visit: Visit = removeVisit): number =>
  visitEntries(dbs, ev, serial, expiration, visit, noteCounted(counters, ev, -1));

/** The entries as fresh buffers (tests, stats tools). */
export function indexEntries(dbs: Dbs, ev: Indexed, serial: number, expiration: number | null): Array<[BinDb, Buffer]> {
  const out: Array<[BinDb, Buffer]> = [];
  visitEntries(dbs, ev, serial, expiration, (db, key) => out.push([db, Buffer.from(key)]));
  return out;
}
