// Applies the storage rules inside one LMDB write transaction. Every decision reads the
// transaction's own view, so it sees earlier events of the same batch, and LMDB's write lock
// serialises it against other threads and processes writing the same directory.
import type { NostrEvent } from '../nostr/event.js';
import { addressOf, dTag, expirationOf, isAddressable, isEphemeral, isReplaceable, parseAddress, DELETION_KIND } from '../nostr/kinds.js';
import { decodeHeader, encodeValue, jsonOf, MAX_CREATED_AT, type Header } from './codec.js';
import { CounterBatch, refreshHll } from './counters.js';
import { putEntries, removeEntries } from './indexer.js';
import { addrKey, ANY_PUBKEY, EMPTY, expiryKey, idKey, MAX_SERIAL, NEXT_SERIAL_KEY, readSerial, serialKey, tombIdKey, u32 } from './keys.js';
import { addressDeletionCovers, deleted, duplicate, incomingWins, invalid, isExpired, mayDeleteStored, MSG, replaced, stored } from './rules.js';
import type { Dbs } from './schema.js';
import type { WriteResult } from './types.js';

const HEX64 = /^[0-9a-f]{64}$/;

/** The address key of a replaceable/addressable event, or null for other kinds. */
function addrKeyOf(ev: Pick<NostrEvent, 'kind' | 'pubkey' | 'tags'>): Buffer | null {
  if (addressOf(ev) === null) return null;
  return addrKey(ev.kind, ev.pubkey, isAddressable(ev.kind) ? dTag(ev) : '');
}

export class WriteTxn {
  private next = 0;
  private startNext = 0;
  /** counted tags' +1/-1 notes, applied in finish() */
  private readonly counters = new CounterBatch();
  /** index entries written or removed so far, the event records and their id/address keys included */
  private entries = 0;
  /** whether any id tombstone exists; looked up once per transaction (most stores have none, which saves two lookups per event) */
  private anyTombIds: boolean | undefined;

  private hasTombIds(): boolean {
    if (this.anyTombIds === undefined) {
      this.anyTombIds = false;
      for (const _ of this.dbs.tombId.getKeys({ limit: 1 })) this.anyTombIds = true;
    }
    return this.anyTombIds;
  }

  private putTombId(key: Buffer): void {
    this.dbs.tombId.putSync(key, EMPTY);
    this.anyTombIds = true;
  }

  constructor(
    private readonly dbs: Dbs,
    private readonly now: number,
  ) {
    // Serials only grow (a deleted event's serial is never reused: a scan that read an index
    // key just before the delete must not find another event under that serial).
    const fromMeta = dbs.meta.get(NEXT_SERIAL_KEY);
    let next = typeof fromMeta === 'number' ? fromMeta : 1;
    for (const k of dbs.events.getKeys({ reverse: true, limit: 1 })) next = Math.max(next, readSerial(k) + 1);
    this.next = this.startNext = next;
  }

  /**
   * Entries this transaction has written or removed so far, one per counter it will write in
   * finish() included: about the number of B-tree pages it dirties in a large store, which is what
   * the writer bounds (writer.ts MAX_BATCH_ENTRIES).
   */
  get written(): number {
    return this.entries + this.counters.size;
  }

  /** Persists the serial counter and the counters; call once at the end of the transaction. */
  finish(): void {
    if (this.next !== this.startNext) this.dbs.meta.putSync(NEXT_SERIAL_KEY, this.next);
    this.counters.apply(this.dbs.tagcount);
  }

  /** Stores recomputed HLL registers of a stale counter if it is unchanged since (counters.ts). */
  refreshHll(key: Buffer, version: number, registers: Uint8Array): boolean {
    return refreshHll(this.dbs.tagcount, key, version, registers);
  }

  private allocSerial(): number {
    if (this.next > MAX_SERIAL) throw new Error('event serials exhausted');
    return this.next++;
  }

  private storedHeader(serial: number): { value: Buffer; header: Header } | undefined {
    const value = this.dbs.events.getBinary(serialKey(serial));
    return value ? { value, header: decodeHeader(value) } : undefined;
  }

  applyEvent(ev: NostrEvent, json: string): WriteResult {
    const { dbs } = this;
    if (isEphemeral(ev.kind)) return invalid(MSG.ephemeral);
    if (ev.created_at > MAX_CREATED_AT) return invalid(MSG.createdAtRange);
    const expiration = expirationOf(ev);
    if (isExpired(expiration, this.now)) return invalid(MSG.expired);

    const idK = idKey(ev.id);
    if (dbs.id.doesExist(idK)) return duplicate();
    // A deletion is never blocked: deleting a kind 5 has no effect (NIP-09).
    if (ev.kind !== DELETION_KIND && this.hasTombIds()) {
      if (dbs.tombId.doesExist(tombIdKey(ev.id, ev.pubkey))) return deleted(MSG.deletedId);
      if (dbs.tombId.doesExist(tombIdKey(ev.id, ANY_PUBKEY))) return deleted(MSG.banned);
    }

    const removed: string[] = [];
    const addrK = addrKeyOf(ev);
    if (addrK) {
      const tomb = dbs.tombAddr.getBinary(addrK);
      if (tomb && addressDeletionCovers(tomb.readUInt32BE(0), ev.created_at)) return deleted(MSG.deletedAddr);
      const cur = dbs.addr.getBinary(addrK);
      const old = cur && this.storedHeader(readSerial(cur));
      if (old) {
        // An expired version that was not swept yet no longer counts.
        if (!isExpired(old.header.expiration, this.now) && !incomingWins(old.header, ev)) return replaced();
        this.deleteStored(readSerial(cur!), old.value);
        removed.push(old.header.id);
      }
    }

    const serial = this.allocSerial();
    const sk = serialKey(serial);
    dbs.events.putSync(sk, encodeValue(ev, json, expiration));
    dbs.id.putSync(idK, sk);
    this.entries += 2 + putEntries(dbs, ev, serial, expiration, this.counters);
    if (addrK) {
      dbs.addr.putSync(addrK, sk);
      this.entries++;
    }

    if (ev.kind === DELETION_KIND) this.applyDeletion(ev, removed);
    return stored(removed, serial);
  }

  /** NIP-09: `e` and `a` tags of a stored kind 5. Appends the ids it removed. */
  private applyDeletion(del: NostrEvent, removed: string[]): void {
    const { dbs } = this;
    for (const t of del.tags) {
      if (t.length < 2) continue;
      if (t[0] === 'e' && HEX64.test(t[1])) {
        const cur = dbs.id.getBinary(idKey(t[1]));
        const target = cur && this.storedHeader(readSerial(cur));
        if (target) {
          // Another author's event, or a deletion: no effect, and no tombstone either.
          if (!mayDeleteStored(target.header, del.pubkey)) continue;
          this.deleteStored(readSerial(cur!), target.value);
          removed.push(target.header.id);
        }
        // Also when the target is not (yet) stored: it is blocked if it arrives from this author.
        this.putTombId(tombIdKey(t[1], del.pubkey));
      } else if (t[0] === 'a') {
        const a = parseAddress(t[1]);
        if (!a || a.pubkey !== del.pubkey || !(isReplaceable(a.kind) || isAddressable(a.kind))) continue;
        const ak = addrKey(a.kind, a.pubkey, isAddressable(a.kind) ? a.d : '');
        const tomb = dbs.tombAddr.getBinary(ak);
        if (!tomb || tomb.readUInt32BE(0) < del.created_at) dbs.tombAddr.putSync(ak, u32(del.created_at));
        const cur = dbs.addr.getBinary(ak);
        const target = cur && this.storedHeader(readSerial(cur));
        if (target && addressDeletionCovers(del.created_at, target.header.created_at)) {
          this.deleteStored(readSerial(cur!), target.value);
          removed.push(target.header.id);
        }
      }
    }
  }

  /** Removes a stored event and every index entry pointing at it. */
  private deleteStored(serial: number, value: Buffer): void {
    const { dbs } = this;
    const h = decodeHeader(value);
    // The tags come from the stored JSON; the indexed fields from the header they were indexed with.
    const { tags, content } = JSON.parse(jsonOf(value)) as { tags: string[][]; content: string };
    const ev = { id: h.id, pubkey: h.pubkey, created_at: h.created_at, kind: h.kind, tags, content };
    this.entries += 2 + removeEntries(dbs, ev, serial, h.expiration, this.counters);
    dbs.id.removeSync(idKey(h.id));
    const ak = addrKeyOf(ev);
    if (ak) {
      const cur = dbs.addr.getBinary(ak);
      if (cur && readSerial(cur) === serial) dbs.addr.removeSync(ak);
    }
    dbs.events.removeSync(serialKey(serial));
  }

  /** Operator ban: delete the event if stored, and block its id from any author. */
  remove(idHex: string): boolean {
    const { dbs } = this;
    if (!HEX64.test(idHex)) return false;
    const cur = dbs.id.getBinary(idKey(idHex));
    const target = cur && this.storedHeader(readSerial(cur));
    if (target) this.deleteStored(readSerial(cur!), target.value);
    this.putTombId(tombIdKey(idHex, ANY_PUBKEY));
    return Boolean(target);
  }

  /** Deletes up to `max` events whose expiration is at or before `now`. */
  sweep(now: number, max: number): { deleted: number; scanned: number } {
    const { dbs } = this;
    const keys = Array.from(dbs.expiry.getKeys({ start: expiryKey(0, 0), end: expiryKey(now, MAX_SERIAL), inclusiveEnd: true, limit: max }));
    let n = 0;
    for (const k of keys) {
      const serial = readSerial(k, 4);
      const target = this.storedHeader(serial);
      if (target) {
        this.deleteStored(serial, target.value);
        n++;
      } else dbs.expiry.removeSync(k); // stale entry; should not happen
    }
    return { deleted: n, scanned: keys.length };
  }
}
