// Which index entries one event has. Used both to insert and to delete, so the two can't drift.
// Keys are built into one reused scratch buffer: lmdb-js copies a key before putSync/removeSync
// return, and index maintenance is the ingest bottleneck (fewer allocations, less GC).
import type { NostrEvent } from '../nostr/event.js';
import { CounterBatch, isCountedPair, isHexPrefix } from './counters.js';
import { CREATED_PREFIX, EMPTY, expiryKey, kindPrefix, pubkeyPrefix, pubkindPrefix, SERIAL_BYTES, tagKindPrefix, tagPrefix } from './keys.js';
import type { BinDb, Dbs } from './schema.js';

type Indexed = Pick<NostrEvent, 'pubkey' | 'created_at' | 'kind' | 'tags'>;
type Visit = (db: BinDb, key: Buffer) => void;

let scratch = Buffer.allocUnsafe(256);

/** prefix [+ kind] + created_at + serial in the scratch buffer (valid until the next call) */
function suffixed(prefix: Uint8Array, ca: number, serial: number, kind = -1): Buffer {
  const k = kind < 0 ? 0 : 2;
  const n = prefix.length + k + 4 + SERIAL_BYTES;
  if (n > scratch.length) scratch = Buffer.allocUnsafe(2 * n);
  scratch.set(prefix, 0);
  if (k) scratch.writeUInt16BE(kind, prefix.length);
  scratch.writeUInt32BE(ca, prefix.length + k);
  scratch.writeUIntBE(serial, prefix.length + k + 4, SERIAL_BYTES);
  return scratch.subarray(0, n);
}

/**
 * Visits the tag+kind entries: one per distinct indexable (name, value) — a repeated tag would only
 * rewrite the same key. `counted` gets the tag+kind prefix of each entry that counters.ts counts.
 */
export function visitTagEntries(dbs: Dbs, ev: Indexed, serial: number, visit: Visit, counted?: (prefix: Buffer) => void): void {
  let seen: Set<string> | undefined;
  for (const t of ev.tags) {
    if (t.length < 2 || t[0].length !== 1) continue; // indexable: single-letter name with a value (spec 1.12)
    const { prefix } = tagPrefix(t[0], t[1]);
    if (ev.tags.length > 1) {
      const k = prefix.toString('latin1');
      if ((seen ??= new Set()).has(k)) continue;
      seen.add(k);
    }
    visit(dbs.tagkind, suffixed(prefix, ev.created_at, serial, ev.kind));
    if (counted && isCountedPair(t[0], ev.kind) && isHexPrefix(prefix)) counted(tagKindPrefix(prefix, ev.kind));
  }
}

/** Visits every entry with an empty value: time-ordered indexes, and expiry when the event expires. */
export function visitEntries(dbs: Dbs, ev: Indexed, serial: number, expiration: number | null, visit: Visit, counted?: (prefix: Buffer) => void): void {
  const ca = ev.created_at;
  const pk8 = pubkeyPrefix(ev.pubkey);
  visit(dbs.created, suffixed(CREATED_PREFIX, ca, serial));
  visit(dbs.kind, suffixed(kindPrefix(ev.kind), ca, serial));
  visit(dbs.pubkey, suffixed(pk8, ca, serial));
  visit(dbs.pubkind, suffixed(pubkindPrefix(pk8, ev.kind), ca, serial));
  visitTagEntries(dbs, ev, serial, visit, counted);
  if (expiration !== null) visit(dbs.expiry, expiryKey(expiration, serial));
}

const put: Visit = (db, key) => db.putSync(key, EMPTY);
const remove: Visit = (db, key) => void db.removeSync(key);

/** Writes the event's entries and notes its counted tags (+1) in `counters`. */
export const putEntries = (dbs: Dbs, ev: Indexed, serial: number, expiration: number | null, counters: CounterBatch): void =>
  visitEntries(dbs, ev, serial, expiration, put, (k) => counters.note(k, ev.pubkey, 1));
/** Removes the event's entries and notes its counted tags (-1) in `counters`. */
export const removeEntries = (dbs: Dbs, ev: Indexed, serial: number, expiration: number | null, counters: CounterBatch): void =>
  visitEntries(dbs, ev, serial, expiration, remove, (k) => counters.note(k, ev.pubkey, -1));

/** The entries as fresh buffers (tests, stats tools). */
export function indexEntries(dbs: Dbs, ev: Indexed, serial: number, expiration: number | null): Array<[BinDb, Buffer]> {
  const out: Array<[BinDb, Buffer]> = [];
  visitEntries(dbs, ev, serial, expiration, (db, key) => out.push([db, Buffer.from(key)]));
  return out;
}
