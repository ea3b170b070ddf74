// Address -> serial, remembered per store handle (so per query thread), for the replaceable-kind
// lookups of the outbox model ({"kinds":[10002],"authors":[150 pubkeys]}): each lookup is then one
// LMDB read (the event) instead of two (the address index, then the event). Measured on the
// directory benchmark: ~1 µs per get, two gets per author, ~3 µs per author in all.
//
// Why a remembered serial needs no invalidation: serials are never reused, and the write that
// replaces or deletes the event at an address removes that event in the same transaction (txn.ts).
// So if the event at the remembered serial is still stored in the reader's snapshot, it is the
// address's current version in that snapshot; if it is gone, the address index is read again.
import type { BinDb } from './schema.js';

/** Entries kept per store handle before the memo starts over (~100 bytes each). */
const MAX_ENTRIES = 100_000;

const memos = new WeakMap<BinDb, Map<string, number>>();

/** The memo of the store whose address index is `addr`. */
export function addrMemo(addr: BinDb): Map<string, number> {
  let m = memos.get(addr);
  if (!m) memos.set(addr, (m = new Map()));
  return m;
}

export function remember(memo: Map<string, number>, name: string, serial: number): void {
  if (memo.size >= MAX_ENTRIES) memo.clear();
  memo.set(name, serial);
}
