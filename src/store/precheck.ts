// What a write would decide for an event without writing it, when the decision needs no write: the
// read-only part of txn.ts applyEvent's early returns (same keys, same rules from rules.ts). Lets
// callers skip work on events the store would not take — the spider drops copies it already holds
// before any signature check. A read outside the write transaction: write() still decides.
import type { NostrEvent } from '../nostr/event.js';
import { addressOf, dTag, isAddressable, DELETION_KIND } from '../nostr/kinds.js';
import { createdAtOf, idHexOf, expirationOfValue } from './codec.js';
import { addrKey, ANY_PUBKEY, idKey, tombIdKey } from './keys.js';
import { addressDeletionCovers, incomingWins, isExpired } from './rules.js';
import { vanishRefusal } from './vanish.js';
import { VANISH_KIND } from '../nostr/vanish.js';
import type { Dbs } from './schema.js';

/** duplicate: the id is stored; deleted: a tombstone blocks it (NIP-09, a ban, NIP-62); replaced: a newer version of its address is stored. */
export type Precheck = 'duplicate' | 'deleted' | 'replaced' | null;

export type PrecheckEvent = Pick<NostrEvent, 'id' | 'pubkey' | 'kind' | 'created_at' | 'tags'>;

export function precheck(dbs: Dbs, ev: PrecheckEvent, now: number): Precheck {
  if (dbs.id.doesExist(idKey(ev.id))) return 'duplicate';
  if (ev.kind !== DELETION_KIND) {
    if ((ev.kind !== VANISH_KIND && dbs.tombId.doesExist(tombIdKey(ev.id, ev.pubkey))) || dbs.tombId.doesExist(tombIdKey(ev.id, ANY_PUBKEY))) return 'deleted';
  }
  // NIP-62: a copy of what a request to vanish covers (the spider meets them on every relay that still holds them)
  if (vanishRefusal(dbs, ev) !== null) return 'deleted';
  if (addressOf(ev) === null) return null;
  const ak = addrKey(ev.kind, ev.pubkey, isAddressable(ev.kind) ? dTag(ev) : '');
  const tomb = dbs.tombAddr.getBinary(ak);
  if (tomb && addressDeletionCovers(tomb.readUInt32BE(0), ev.created_at)) return 'deleted';
  const cur = dbs.addr.getBinary(ak);
  const value = cur && dbs.events.getBinary(cur);
  if (!value) return null;
  // An expired version that was not swept yet no longer counts (as in applyEvent).
  if (isExpired(expirationOfValue(value), now)) return null;
  return incomingWins({ created_at: createdAtOf(value), id: idHexOf(value) }, ev) ? null : 'replaced';
}
