// Applies the storage rules inside one LMDB write transaction. Every decision reads the
// transaction's own view, so it sees earlier events of the same batch, and LMDB's write lock
// serialises it against other threads and processes writing the same directory.
//
// Every write is journaled with what takes it back (a removal for a key that is new, the old value
// for one that is overwritten or removed), so an operation that throws half way is undone alone
// (run()) and a transaction whose finish() throws is undone whole (undoAll()). It was built while
// the store used LMDB's write map (until 2026-11-29, index.ts), where lmdb-js has no child
// transactions to abort, and stayed.
import type { NostrEvent } from '../nostr/event.js';
import { addressOf, dTag, expirationOf, isAddressable, isEphemeral, isReplaceable, parseAddress, DELETION_KIND } from '../nostr/kinds.js';
import { decodeHeader, encodeValue, idHexOf, jsonOf, MAX_CREATED_AT, type Header } from './codec.js';
import { CounterBatch, CounterUndo, refreshHll } from './counters.js';
import { GraphTxn, graphList, graphOnly, isGraphKind, tagsJson } from './graph.js';
import type { ImportSpool } from './spool.js';
import { appendRemovals } from './removal-log.js';
import { putEntries, putVisit, removeEntries, removeVisit, visitEntries, type Indexed } from './indexer.js';
import { addrKey, ANY_PUBKEY, EMPTY, expiryKey, idKey, MAX_SERIAL, NEXT_SERIAL_KEY, readSerial, serialKey, tombIdKey, u32 } from './keys.js';
import { addressDeletionCovers, deleted, duplicate, incomingWins, invalid, isExpired, mayDeleteStored, MSG, replaced, stored } from './rules.js';
import type { BinDb, Dbs } from './schema.js';
import type { WriteResult } from './types.js';
import { isHex64 } from '../nostr/hex.js';
import { VANISH_KIND } from '../nostr/vanish.js';
import { anyVanish, coveredSerials, deletesVanishRequest, readVanish, vanishKey, vanishRefusal, vanishValue } from './vanish.js';

/**
 * What applyEvent answers. `vanishing` is the writer's alone (writer.ts takes it off before anyone
 * sees the result): the event was a request to vanish whose author's older events are still stored.
 */
export type Applied = WriteResult & { vanishing?: string };

/** One step of applying a request to vanish (WriteTxn.vanishStep). */
export interface VanishStep {
  /** ids deleted in this step */
  removed: string[];
  /** covered events are left for another step (the transaction's entry bound was reached) */
  more: boolean;
}

/** The address key of a replaceable/addressable event, or null for other kinds. */
function addrKeyOf(ev: Pick<NostrEvent, 'kind' | 'pubkey' | 'tags'>): Buffer | null {
  if (addressOf(ev) === null) return null;
  return addrKey(ev.kind, ev.pubkey, isAddressable(ev.kind) ? dTag(ev) : '');
}

/** the tags of an event whose tags are all the graph's (visitEntries reads none of them) */
const NO_TAGS: string[][] = [];

export class WriteTxn {
  private next = 0;
  private startNext = 0;
  /** counted tags' +1/-1 notes, applied in finish() */
  private readonly counters = new CounterBatch();
  /** index entries written or removed so far, the event records and their id/address keys included */
  private entries = 0;
  /** whether any id tombstone exists; looked up once per transaction (most stores have none, which saves two lookups per event) */
  private anyTombIds: boolean | undefined;
  /** whether any author requested to vanish (NIP-62); looked up once per transaction, like anyTombIds */
  private anyVanish: boolean | undefined;

  /** how to take back each write of this transaction, oldest first */
  private readonly journal: Array<() => void> = [];
  /** the counters finish() wrote, with their previous values */
  private readonly counterUndo = new CounterUndo();
  /** the follow graph's writes (graph.ts), journaled with the others */
  private readonly graph: GraphTxn;
  /** serials of the stored events this transaction removed, for the removal log (removal-log.ts) */
  private readonly removedSerials: number[] = [];

  /** Journals a write: `undo` restores what was there before it. */
  private undoWith(undo: () => void): void {
    this.journal.push(undo);
  }

  /**
   * What visitEntries reads of an event, for a journal entry that visits its entries again: a list
   * the graph holds whole has no tag entries, so its tags are left out, and content only matters
   * for the kinds the search index holds. The journal lives until the transaction commits, and a
   * follow list's parsed tags held that long (hundreds of arrays and strings each, a batch of them)
   * were what the writer thread's scavenges copied and promoted: a fifth of its time.
   */
  private entriesView(ev: Indexed): Indexed {
    return {
      pubkey: ev.pubkey,
      created_at: ev.created_at,
      kind: ev.kind,
      tags: ev.graphOnly ? NO_TAGS : ev.tags,
      content: this.dbs.search?.kinds.has(ev.kind) ? ev.content : undefined,
      graphOnly: ev.graphOnly,
    };
  }

  /** Journals putting back `value` under `key` (a removal or an overwrite of a known value). */
  private restoreLater(db: BinDb, key: Buffer, value: Buffer | undefined): void {
    this.journal.push(value === undefined ? () => void db.removeSync(key) : () => db.putSync(key, value));
  }

  /**
   * Applies one operation. If it throws, its writes and its counter notes are taken back before the
   * error goes on, so the transaction holds the operations before it and nothing of this one.
   */
  run<T>(op: () => T): T {
    const start = this.journal.length;
    this.counters.mark();
    const held = this.spool?.markOp();
    try {
      return op();
    } catch (err) {
      this.counters.rollback();
      this.undoFrom(start);
      if (held) this.spool!.restoreOp(held);
      throw err;
    }
  }

  /** Takes back everything this transaction wrote (finish() threw). */
  private undoAll(): void {
    this.counterUndo.back((key, value) => {
      if (value === undefined) this.dbs.tagcount.removeSync(key);
      else this.dbs.tagcount.putSync(key, value);
    });
    this.counterUndo.clear();
    this.undoFrom(0);
  }

  private undoFrom(start: number): void {
    for (let i = this.journal.length - 1; i >= start; i--) this.journal[i]!();
    this.journal.length = start;
  }

  private hasTombIds(): boolean {
    if (this.anyTombIds === undefined) {
      this.anyTombIds = false;
      for (const _ of this.dbs.tombId.getKeys({ limit: 1 })) this.anyTombIds = true;
    }
    return this.anyTombIds;
  }

  private hasVanish(): boolean {
    this.anyVanish ??= anyVanish(this.dbs);
    return this.anyVanish;
  }

  private putTombId(key: Buffer): void {
    if (this.dbs.tombId.doesExist(key)) return;
    this.dbs.tombId.putSync(key, EMPTY);
    this.restoreLater(this.dbs.tombId, key, undefined);
    this.anyTombIds = true;
  }

  constructor(
    private readonly dbs: Dbs,
    private readonly now: number,
    /** what an import holds back (spool.ts); null: every entry is written with its event */
    private readonly spool: ImportSpool | null = null,
  ) {
    // Serials only grow (a deleted event's serial is never reused: a scan that read an index
    // key just before the delete must not find another event under that serial).
    const fromMeta = dbs.meta.get(NEXT_SERIAL_KEY);
    let next = typeof fromMeta === 'number' ? fromMeta : 1;
    for (const k of dbs.events.getKeys({ reverse: true, limit: 1 })) next = Math.max(next, readSerial(k) + 1);
    this.next = this.startNext = next;
    this.graph = new GraphTxn(dbs, (db, key, prev) => this.restoreLater(db, key, prev), this.counters, (fn) => this.undoWith(fn), spool?.edges ?? null);
  }

  /**
   * Entries this transaction has written or removed so far, one per counter it will write in
   * finish() included: about the number of B-tree pages it dirties in a large store, which is what
   * the writer bounds (writer.ts MAX_BATCH_ENTRIES).
   */
  get written(): number {
    return this.entries + this.counters.size;
  }

  /**
   * Persists the serial counter and the counters; call once at the end of the transaction. If that
   * throws, everything the transaction wrote is taken back before the error goes on. The serial
   * counter is not: serials only grow, and one skipped is harmless.
   */
  finish(): void {
    try {
      if (this.next !== this.startNext) this.dbs.meta.putSync(NEXT_SERIAL_KEY, this.next);
      this.counters.apply(this.dbs.tagcount, this.counterUndo);
      this.graph.finish();
      const log = this.dbs.removed;
      if (log && this.removedSerials.length > 0) appendRemovals(log, this.removedSerials, (key, prev) => this.restoreLater(log, key, prev));
      // last, so nothing after it can throw: the first serial whose entries are held back, while any are
      this.spool?.writeMark(this.dbs);
    } catch (err) {
      this.undoAll();
      throw err;
    }
  }

  /** The LMDB transaction has committed (the writer says so): the graph's new ids may be cached. */
  committed(): void {
    this.graph.committed();
  }

  /** Stores recomputed HLL registers of a stale counter if it is unchanged since (counters.ts). */
  refreshHll(key: Buffer, version: number, registers: Uint8Array): boolean {
    // one write, nothing to take back: it either happened or threw
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

  /**
   * `members`: the event is a list of a graph kind whose every tag is a graph tag, and these are its
   * members (graph-json.ts); its `tags` may then be left empty (parseWithoutTags), as nothing
   * here reads the tags of such a list but through its members.
   */
  applyEvent(ev: NostrEvent, json: string, members?: string[]): Applied {
    const { dbs } = this;
    if (isEphemeral(ev.kind)) return invalid(MSG.ephemeral);
    if (ev.created_at > MAX_CREATED_AT) return invalid(MSG.createdAtRange);
    const expiration = expirationOf(ev);
    if (isExpired(expiration, this.now)) return invalid(MSG.expired);

    const idK = idKey(ev.id);
    if (dbs.id.doesExist(idK)) return duplicate();
    // A deletion is never blocked: deleting a kind 5 has no effect (NIP-09), nor has deleting a
    // request to vanish (NIP-62), so a kind 5 that came first does not keep the request out.
    if (ev.kind !== DELETION_KIND && this.hasTombIds()) {
      if (ev.kind !== VANISH_KIND && dbs.tombId.doesExist(tombIdKey(ev.id, ev.pubkey))) return deleted(MSG.deletedId);
      if (dbs.tombId.doesExist(tombIdKey(ev.id, ANY_PUBKEY))) return deleted(MSG.banned);
    }
    // NIP-62: nothing a request to vanish covers comes back, whatever brings it (vanish.ts)
    if (this.hasVanish()) {
      const gone = vanishRefusal(dbs, ev);
      if (gone) return deleted(gone);
    }
    if (ev.kind === DELETION_KIND && deletesVanishRequest(dbs, ev)) return invalid(MSG.vanishUndeletable);

    const removed: string[] = [];
    const isList = isGraphKind(ev.kind);
    /**
     * the graph's view of the list (graph.ts), read once: for a re-publication with the same tags
     * only whether every tag is the graph's (no members: nothing is diffed)
     */
    let list: { members: string[] | null; only: boolean } = { members: null, only: false };
    /** the list re-publishes the tags of the version it replaces */
    let same = false;
    /** the graph members of the version this event replaces (graph.ts: only the difference is written) */
    let before: string[] = [];
    const addrK = addrKeyOf(ev);
    /** what the address entry held before this event, to put back if it throws (deleteStored removes a stored version's) */
    let prevAddr: Buffer | undefined;
    if (addrK) {
      const tomb = dbs.tombAddr.getBinary(addrK);
      if (tomb && addressDeletionCovers(tomb.readUInt32BE(0), ev.created_at)) return deleted(MSG.deletedAddr);
      const cur = dbs.addr.getBinary(addrK);
      const old = cur && this.storedHeader(readSerial(cur));
      if (!old) prevAddr = cur ?? undefined; // dangling: no stored version behind it
      if (old) {
        // An expired version that was not swept yet no longer counts.
        if (!isExpired(old.header.expiration, this.now) && !incomingWins(old.header, ev)) return replaced();
        // a list re-published with the same tags (the network's habit): the old one is not parsed, nothing is diffed
        same = isList && tagsJson(json) === tagsJson(jsonOf(old.value));
        if (same) list = { members: null, only: members !== undefined || graphOnly(ev.kind, ev.tags) };
        before = this.deleteStored(readSerial(cur!), old.value, true, same ? { only: list.only, tags: ev.tags } : undefined);
        removed.push(old.header.id);
      }
    }

    if (isList && !same) list = members !== undefined ? { members, only: true } : graphList(ev.kind, ev.tags);
    const only = list.only;
    const serial = this.allocSerial();
    const sk = serialKey(serial);
    dbs.events.putSync(sk, encodeValue(ev, json, expiration));
    this.restoreLater(dbs.events, sk, undefined);
    dbs.id.putSync(idK, sk);
    this.restoreLater(dbs.id, idK, undefined);
    const indexed = only ? { ...ev, graphOnly: true } : ev;
    // journaled first: removing entries that were never written is harmless, so a put that threw half way is undone whole
    const undone = this.entriesView(indexed);
    this.undoWith(() => visitEntries(dbs, undone, serial, expiration, removeVisit));
    this.entries += 2 + putEntries(dbs, indexed, serial, expiration, this.counters, this.spool?.index.putVisit(serial));
    if (addrK) {
      dbs.addr.putSync(addrK, sk);
      this.restoreLater(dbs.addr, addrK, prevAddr);
      this.entries++;
    }
    if (isList) this.entries += this.graph.replace(ev.kind, ev.pubkey, before, same ? before : list.members!, { createdAt: ev.created_at, serial });

    if (ev.kind === DELETION_KIND) this.applyDeletion(ev, removed);
    // Only the tombstone here: the events it covers go in transactions of their own (vanishStep),
    // bounded like any other, which the writer runs right after this one; an import's held-back
    // index entries do not list them yet, so an import deletes them once it has merged (writer.ts).
    if (ev.kind === VANISH_KIND && this.putVanish(ev.pubkey, ev.created_at) && !this.spool) return { ...stored(removed, serial), vanishing: ev.pubkey };
    return stored(removed, serial);
  }

  /**
   * NIP-62: the author's tombstone up to `upTo`, marked as still to apply. False when a request at
   * that second or later is there already (nothing more is covered).
   */
  private putVanish(pubkey: string, upTo: number): boolean {
    const { dbs } = this;
    const key = vanishKey(pubkey);
    const prev = dbs.tombVanish.getBinary(key) ?? undefined;
    const cur = readVanish(prev);
    if (cur && cur.upTo >= upTo) return false;
    dbs.tombVanish.putSync(key, vanishValue({ upTo, pending: true }));
    this.restoreLater(dbs.tombVanish, key, prev);
    this.anyVanish = true;
    this.entries++;
    return true;
  }

  /**
   * NIP-62: deletes what the author's request to vanish covers (their events up to it, the gift wraps
   * to them) through deleteStored, the path NIP-09 deletions take (indexes, counters, the follow
   * graph, search postings and the removal log stay exact), until this transaction has written
   * `maxEntries` entries. Once none is left the tombstone is marked applied.
   */
  vanishStep(pubkey: string, maxEntries: number): VanishStep {
    const { dbs } = this;
    const key = vanishKey(pubkey);
    const prev = dbs.tombVanish.getBinary(key) ?? undefined;
    const t = readVanish(prev);
    if (!t?.pending) return { removed: [], more: false };
    const removed: string[] = [];
    for (const { serial, value } of coveredSerials(dbs, pubkey, t.upTo)) {
      if (removed.length > 0 && this.written >= maxEntries) return { removed, more: true };
      this.deleteStored(serial, value);
      removed.push(idHexOf(value));
    }
    dbs.tombVanish.putSync(key, vanishValue({ upTo: t.upTo, pending: false }));
    this.restoreLater(dbs.tombVanish, key, prev);
    this.entries++;
    return { removed, more: false };
  }

  /** NIP-09: `e` and `a` tags of a stored kind 5. Appends the ids it removed. */
  private applyDeletion(del: NostrEvent, removed: string[]): void {
    const { dbs } = this;
    for (const t of del.tags) {
      if (t.length < 2) continue;
      if (t[0] === 'e' && isHex64(t[1])) {
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
        if (!tomb || tomb.readUInt32BE(0) < del.created_at) {
          dbs.tombAddr.putSync(ak, u32(del.created_at));
          this.restoreLater(dbs.tombAddr, ak, tomb ?? undefined);
        }
        const cur = dbs.addr.getBinary(ak);
        const target = cur && this.storedHeader(readSerial(cur));
        if (target && addressDeletionCovers(del.created_at, target.header.created_at)) {
          this.deleteStored(readSerial(cur!), target.value);
          removed.push(target.header.id);
        }
      }
    }
  }

  /**
   * Removes a stored event and every index entry pointing at it. A list of a graph kind leaves the
   * graph too, unless `replacing`: then its members are returned, and the caller writes the
   * difference to the new version's. `same`: the replacing list has the same tags (they and its
   * `only` stand for the old one's, which is then not parsed unless the search index needs its
   * content, and no members are returned: there is no difference to write).
   */
  private deleteStored(serial: number, value: Buffer, replacing = false, same?: { only: boolean; tags: string[][] }): string[] {
    const { dbs } = this;
    const h = decodeHeader(value);
    // The tags come from the stored JSON; the indexed fields from the header they were indexed with.
    const { tags, content } = same && !dbs.search?.kinds.has(h.kind)
      ? { tags: same.tags, content: undefined }
      : (JSON.parse(jsonOf(value)) as { tags: string[][]; content: string });
    const list = same || !isGraphKind(h.kind) ? null : graphList(h.kind, tags);
    const ev = { id: h.id, pubkey: h.pubkey, created_at: h.created_at, kind: h.kind, tags, content, graphOnly: same?.only ?? list?.only ?? false };
    const restored = this.entriesView(ev);
    this.undoWith(() => visitEntries(dbs, restored, serial, h.expiration, putVisit));
    this.entries += 2 + removeEntries(dbs, ev, serial, h.expiration, this.counters, this.spool?.index.removeVisit(serial));
    const sk = serialKey(serial);
    const idK = idKey(h.id);
    dbs.id.removeSync(idK);
    this.restoreLater(dbs.id, idK, sk);
    const ak = addrKeyOf(ev);
    if (ak) {
      const cur = dbs.addr.getBinary(ak);
      if (cur && readSerial(cur) === serial) {
        dbs.addr.removeSync(ak);
        this.restoreLater(dbs.addr, ak, cur);
      }
    }
    dbs.events.removeSync(sk);
    this.restoreLater(dbs.events, sk, value);
    this.removedSerials.push(serial);
    this.undoWith(() => void this.removedSerials.pop());
    if (!list) return []; // not a list, or the same tags as the replacing one
    if (replacing) return list.members;
    this.entries += this.graph.replace(h.kind, h.pubkey, list.members, [], null);
    return [];
  }

  /** Operator ban: delete the event if stored, and block its id from any author. */
  remove(idHex: string): boolean {
    const { dbs } = this;
    if (!isHex64(idHex)) return false;
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
      } else {
        dbs.expiry.removeSync(k); // stale entry; should not happen
        this.restoreLater(dbs.expiry, k, EMPTY);
      }
    }
    return { deleted: n, scanned: keys.length };
  }
}
