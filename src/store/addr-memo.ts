// Address -> serial, remembered per store handle (so per query thread), for the replaceable-kind
// lookups of the outbox model ({"kinds":[10002],"authors":[150 pubkeys]}): each lookup is then one
// LMDB read (the event) instead of two (the address index, then the event). Measured on the
// directory benchmark: ~1 µs per get, two gets per author, ~3 µs per author in all.
//
// Why a remembered serial needs no invalidation: serials are never reused, and the write that
// replaces or deletes the event at an address removes that event in the same transaction (txn.ts).
// So if the event at the remembered serial is still stored in the reader's snapshot, it is the
// address's current version in that snapshot; if it is gone, the address index is read again.
//
// Kept per kind, keyed by the pubkey's hex string as the filter gave it: a string parsed once per
// REQ hashes once, where a `kind:pubkey` name made per lookup was a new string to build and hash
// each time (measured: half the lookup loop's own time on the outbox shape).
import type { BinDb } from './schema.js';

/** Entries kept per store handle before the memo starts over (~100 bytes each). */
const MAX_ENTRIES = 100_000;

export class AddrMemo {
  private readonly byKind = new Map<number, Map<string, number>>();
  private size = 0;

  get(kind: number, pubkey: string): number | undefined {
    return this.byKind.get(kind)?.get(pubkey);
  }

  set(kind: number, pubkey: string, serial: number): void {
    if (this.size >= MAX_ENTRIES) {
      this.byKind.clear();
      this.size = 0;
    }
    let m = this.byKind.get(kind);
    if (!m) this.byKind.set(kind, (m = new Map()));
    const before = m.size;
    m.set(pubkey, serial);
    this.size += m.size - before;
  }

  delete(kind: number, pubkey: string): void {
    const m = this.byKind.get(kind);
    if (m?.delete(pubkey)) this.size--;
  }
}

const memos = new WeakMap<BinDb, AddrMemo>();

/** The memo of the store whose address index is `addr`. */
export function addrMemo(addr: BinDb): AddrMemo {
  let m = memos.get(addr);
  if (!m) memos.set(addr, (m = new AddrMemo()));
  return m;
}
