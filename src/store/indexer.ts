// Which index entries one event has. Used both to insert and to delete, so the two can't drift.
// Keys are built into one reused scratch buffer: lmdb-js copies a key before putSync/removeSync
// return, and index maintenance is the ingest bottleneck (fewer allocations, less GC).
import type { NostrEvent } from '../nostr/event.js';
import { CREATED_PREFIX, EMPTY, expiryKey, kindPrefix, pubkeyPrefix, pubkindPrefix, SERIAL_BYTES, tagPrefix } from './keys.js';
import type { BinDb, Dbs } from './schema.js';
import { visitSearchEntries } from './search/entries.js';

/** content: for the search index (search/entries.ts); events without it are not searchable */
type Indexed = Pick<NostrEvent, 'pubkey' | 'created_at' | 'kind' | 'tags'> & { content?: string };
/** value: empty for every index but the search documents */
type Visit = (db: BinDb, key: Buffer, value?: Buffer) => void;

let scratch = Buffer.allocUnsafe(256);

/** prefix + created_at + serial in the scratch buffer (valid until the next call) */
function suffixed(prefix: Uint8Array, ca: number, serial: number): Buffer {
  const n = prefix.length + 4 + SERIAL_BYTES;
  if (n > scratch.length) scratch = Buffer.allocUnsafe(2 * n);
  scratch.set(prefix, 0);
  scratch.writeUInt32BE(ca, prefix.length);
  scratch.writeUIntBE(serial, prefix.length + 4, SERIAL_BYTES);
  return scratch.subarray(0, n);
}

/** Visits every entry with an empty value: time-ordered indexes, and expiry when the event expires. */
export function visitEntries(dbs: Dbs, ev: Indexed, serial: number, expiration: number | null, visit: Visit): void {
  const ca = ev.created_at;
  const pk8 = pubkeyPrefix(ev.pubkey);
  visit(dbs.created, suffixed(CREATED_PREFIX, ca, serial));
  visit(dbs.kind, suffixed(kindPrefix(ev.kind), ca, serial));
  visit(dbs.pubkey, suffixed(pk8, ca, serial));
  visit(dbs.pubkind, suffixed(pubkindPrefix(pk8, ev.kind), ca, serial));
  // One entry per distinct (name, value); a repeated tag would only rewrite the same key.
  let seen: Set<string> | undefined;
  for (const t of ev.tags) {
    if (t.length < 2 || t[0].length !== 1) continue; // indexable: single-letter name with a value (spec 1.12)
    const { prefix } = tagPrefix(t[0], t[1]);
    if (ev.tags.length > 1) {
      const k = prefix.toString('latin1');
      if ((seen ??= new Set()).has(k)) continue;
      seen.add(k);
    }
    visit(dbs.tag, suffixed(prefix, ca, serial));
  }
  if (expiration !== null) visit(dbs.expiry, expiryKey(expiration, serial));
  if (dbs.search) visitSearchEntries(dbs.search, ev, serial, visit);
}

const put: Visit = (db, key, value) => db.putSync(key, value ?? EMPTY);
const remove: Visit = (db, key) => void db.removeSync(key);

export const putEntries = (dbs: Dbs, ev: Indexed, serial: number, expiration: number | null): void =>
  visitEntries(dbs, ev, serial, expiration, put);
export const removeEntries = (dbs: Dbs, ev: Indexed, serial: number, expiration: number | null): void =>
  visitEntries(dbs, ev, serial, expiration, remove);

/** The entries as fresh buffers (tests, stats tools). */
export function indexEntries(dbs: Dbs, ev: Indexed, serial: number, expiration: number | null): Array<[BinDb, Buffer]> {
  const out: Array<[BinDb, Buffer]> = [];
  visitEntries(dbs, ev, serial, expiration, (db, key) => out.push([db, Buffer.from(key)]));
  return out;
}
