// NIP-62 in the store: the tombstone a request to vanish leaves, the checks every write makes
// against it, and the events it covers. A request is an author-wide NIP-09 address tombstone: the
// author's pubkey -> the created_at of the newest request (ev.tomb_vanish), checked inside the
// write transaction (txn.ts) and by the spider's precheck (precheck.ts), so no source brings back
// what it covers. Like the other tombstones it is not derived from the events: `verify --repair`
// leaves it as it is (commands/check/vanish.ts only checks that every stored request has one).
//
// The value ends in a byte that says whether the author's older events (and the gift wraps to them)
// may still be stored: 1 from the request's transaction until the last of them is deleted. A relay
// deletes them in transactions of their own right after (writer.ts), an import once its held-back
// index entries are merged (spool.ts), and an open for writing finishes what a killed process left
// (vanish-resume.ts): the flag is what says there is something to finish.
import type { NostrEvent } from '../nostr/event.js';
import { isHex64 } from '../nostr/hex.js';
import { GIFT_WRAP_KIND, VANISH_KIND, vanishCovers, wrapCovered, wrapRecipients } from '../nostr/vanish.js';
import { decodeHeader } from './codec.js';
import { idKey, keySerial, MAX_SERIAL, PK_PREFIX_BYTES, serialKey, tagKindPrefix, tagPrefix, withSuffix } from './keys.js';
import { MSG } from './rules.js';
import type { BinDb, Dbs } from './schema.js';

export interface VanishTomb {
  /** created_at of the newest request to vanish */
  upTo: number;
  /** events it covers may still be stored */
  pending: boolean;
}

export const vanishKey = (pubkey: string): Buffer => Buffer.from(pubkey, 'hex');

export function vanishValue(t: VanishTomb): Buffer {
  const b = Buffer.allocUnsafe(5);
  b.writeUInt32BE(t.upTo, 0);
  b[4] = t.pending ? 1 : 0;
  return b;
}

export function readVanish(value: Buffer | undefined | null): VanishTomb | null {
  if (!value || value.length < 4) return null;
  return { upTo: value.readUInt32BE(0), pending: value.length > 4 && value[4] === 1 };
}

export const vanishTomb = (dbs: Pick<Dbs, 'tombVanish'>, pubkey: string): VanishTomb | null =>
  readVanish(dbs.tombVanish.getBinary(vanishKey(pubkey)));

/** Whether any author has requested to vanish (most stores: none, and the per-event lookups are skipped). */
export function anyVanish(dbs: Pick<Dbs, 'tombVanish'>): boolean {
  for (const _ of dbs.tombVanish.getKeys({ limit: 1 })) return true;
  return false;
}

/**
 * The refusal (an OK message) when a request to vanish covers `ev`: its author's, or, for a gift
 * wrap, a recipient's. null: none does.
 */
export function vanishRefusal(dbs: Pick<Dbs, 'tombVanish'>, ev: Pick<NostrEvent, 'pubkey' | 'created_at' | 'kind' | 'tags'>): string | null {
  const own = vanishTomb(dbs, ev.pubkey);
  if (own && vanishCovers(own.upTo, ev)) return MSG.vanished;
  if (ev.kind === GIFT_WRAP_KIND) {
    for (const p of wrapRecipients(ev)) {
      const t = vanishTomb(dbs, p);
      if (t && wrapCovered(t.upTo, ev)) return MSG.vanishedWrap;
    }
  }
  return null;
}

/**
 * Whether a NIP-09 deletion is aimed at a request to vanish: a `k` tag of 62, or an `e` tag naming a
 * stored kind 62. NIP-62: such a deletion has no effect; the store refuses it (txn.ts).
 */
export function deletesVanishRequest(dbs: Pick<Dbs, 'id' | 'events'>, del: Pick<NostrEvent, 'tags'>): boolean {
  for (const t of del.tags) {
    if (t.length < 2) continue;
    if (t[0] === 'k' && t[1] === String(VANISH_KIND)) return true;
    if (t[0] === 'e' && isHex64(t[1]!)) {
      const at = dbs.id.getBinary(idKey(t[1]!));
      const value = at && dbs.events.getBinary(at);
      if (value && decodeHeader(value).kind === VANISH_KIND) return true;
    }
  }
  return false;
}

/** keys read from an index per look, between which the caller may delete what it was given */
const PAGE = 256;

/** Keys of `db` from `start` to `end` (both inclusive), read a page at a time: no read is open while the caller has a key. */
function* pages(db: BinDb, start: Buffer, end: Buffer): Generator<Buffer> {
  let from = start;
  let exclusive = false;
  for (;;) {
    const keys: Buffer[] = [];
    for (const k of db.getKeys({ start: from, end, inclusiveEnd: true, exclusiveStart: exclusive, limit: PAGE })) keys.push(Buffer.from(k));
    for (const k of keys) yield k;
    if (keys.length < PAGE) return;
    from = keys[keys.length - 1]!;
    exclusive = true;
  }
}

/**
 * The serials of the stored events a request to vanish by `pubkey` at `upTo` covers: the author's
 * (the pubkey index: 8-byte prefix, the full pubkey checked in the header) and the gift wraps that
 * p-tag the author (the tag+kind index). Read a page at a time and never more than once, so the
 * caller may delete each as it is given.
 */
export function* coveredSerials(dbs: Pick<Dbs, 'pubkey' | 'tagkind' | 'events'>, pubkey: string, upTo: number): Generator<{ serial: number; value: Buffer }> {
  const pk = Buffer.from(pubkey, 'hex').subarray(0, PK_PREFIX_BYTES);
  for (const k of pages(dbs.pubkey, withSuffix(pk, 0, 0), withSuffix(pk, upTo, MAX_SERIAL))) {
    const serial = keySerial(k);
    const value = dbs.events.getBinary(serialKey(serial));
    if (!value) continue;
    const h = decodeHeader(value);
    if (h.pubkey === pubkey && vanishCovers(upTo, h)) yield { serial, value };
  }
  const wraps = tagKindPrefix(tagPrefix('p', pubkey).prefix, GIFT_WRAP_KIND);
  for (const k of pages(dbs.tagkind, withSuffix(wraps, 0, 0), withSuffix(wraps, upTo, MAX_SERIAL))) {
    const serial = keySerial(k);
    const value = dbs.events.getBinary(serialKey(serial));
    if (value) yield { serial, value };
  }
}

/** Authors whose request to vanish is not fully applied yet (the flag above). */
export function pendingVanishes(dbs: Pick<Dbs, 'tombVanish'>): string[] {
  const out: string[] = [];
  for (const { key, value } of dbs.tombVanish.getRange({})) if (readVanish(value)?.pending) out.push(Buffer.from(key).toString('hex'));
  return out;
}
