// Which index entries one event has. Used both to insert and to delete, so the two can't drift.
import type { NostrEvent } from '../nostr/event.js';
import { indexableTags } from '../nostr/kinds.js';
import { CREATED_PREFIX, EMPTY, expiryKey, kindPrefix, pubkeyPrefix, pubkindPrefix, tagPrefix, withSuffix } from './keys.js';
import type { BinDb, Dbs } from './schema.js';

type Indexed = Pick<NostrEvent, 'pubkey' | 'created_at' | 'kind' | 'tags'>;

/** The entries with empty values: time-ordered indexes, and expiry when the event expires. */
export function indexEntries(dbs: Dbs, ev: Indexed, serial: number, expiration: number | null): Array<[BinDb, Buffer]> {
  const ca = ev.created_at;
  const pk8 = pubkeyPrefix(ev.pubkey);
  const out: Array<[BinDb, Buffer]> = [
    [dbs.created, withSuffix(CREATED_PREFIX, ca, serial)],
    [dbs.kind, withSuffix(kindPrefix(ev.kind), ca, serial)],
    [dbs.pubkey, withSuffix(pk8, ca, serial)],
    [dbs.pubkind, withSuffix(pubkindPrefix(pk8, ev.kind), ca, serial)],
  ];
  // One entry per distinct (name, value): a repeated tag would only rewrite the same key.
  const seen = new Set<string>();
  for (const [name, value] of indexableTags(ev)) {
    const { prefix } = tagPrefix(name, value);
    const k = prefix.toString('latin1');
    if (seen.has(k)) continue;
    seen.add(k);
    out.push([dbs.tag, withSuffix(prefix, ca, serial)]);
  }
  if (expiration !== null) out.push([dbs.expiry, expiryKey(expiration, serial)]);
  return out;
}

export function putEntries(entries: Array<[BinDb, Buffer]>): void {
  for (const [db, key] of entries) db.putSync(key, EMPTY);
}

export function removeEntries(entries: Array<[BinDb, Buffer]>): void {
  for (const [db, key] of entries) db.removeSync(key);
}
