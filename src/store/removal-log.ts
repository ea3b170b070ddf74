// The serials of the events each write transaction removed (replaced, deleted by NIP-09, expired,
// banned), in commit order: `ev.removed`, key = the transaction's sequence number (6 bytes,
// big-endian: it never wraps), value = the removed serials (5 bytes each).
//
// Why: a reader that kept an answer (answer-cache.ts) must know whether the store changed under it.
// Additions need no log, since serials only grow and the events table is keyed by them: the events
// above the serial the answer was made at are the additions. Removals leave no trace in the events
// table, so the writer records them here, one put per transaction that removed anything (not one
// per event), in the same transaction, so a reader sees the log and the store from one snapshot.
//
// Only the newest KEEP records are kept: each record written removes the one KEEP before it. A
// reader whose last look is older than the oldest record cannot tell what it missed and treats the
// answer as changed.
import type { BinDb } from './schema.js';
import { readSerial, SERIAL_BYTES } from './keys.js';

/** Records (write transactions that removed something) kept. */
export const REMOVAL_LOG_KEEP = 4096;
const SEQ_BYTES = 6;

export function removalKey(seq: number): Buffer {
  const b = Buffer.allocUnsafe(SEQ_BYTES);
  b.writeUIntBE(seq, 0, SEQ_BYTES);
  return b;
}

/** The sequence number of the newest record, 0 when there is none (or no log). */
export function lastRemoval(db: BinDb | undefined): number {
  if (!db) return 0;
  for (const k of db.getKeys({ reverse: true, limit: 1 })) return k.readUIntBE(0, SEQ_BYTES);
  return 0;
}

/**
 * Writes one record for `serials` (a write transaction's removals, non-empty) and drops the record
 * KEEP before it. `journal(key, previous)` is told each write so the transaction can take it back.
 */
export function appendRemovals(db: BinDb, serials: readonly number[], journal: (key: Buffer, previous: Buffer | undefined) => void): void {
  const seq = lastRemoval(db) + 1;
  const value = Buffer.allocUnsafe(serials.length * SERIAL_BYTES);
  for (let i = 0; i < serials.length; i++) value.writeUIntBE(serials[i]!, i * SERIAL_BYTES, SERIAL_BYTES);
  const key = removalKey(seq);
  db.putSync(key, value);
  journal(key, undefined);
  if (seq > REMOVAL_LOG_KEEP) {
    const old = removalKey(seq - REMOVAL_LOG_KEEP);
    const prev = db.getBinary(old);
    if (prev) {
      db.removeSync(old);
      journal(old, Buffer.from(prev));
    }
  }
}

/**
 * Visits the serials removed by the records after `seq` up to `upTo` (both sequence numbers), until
 * `visit` returns true. 'complete': every record in between was there and visited; 'stopped':
 * visit returned true; 'missing': some records after `seq` were dropped.
 */
export function removalsSince(db: BinDb, seq: number, upTo: number, visit: (serial: number) => boolean): 'complete' | 'stopped' | 'missing' {
  if (upTo === seq) return 'complete';
  if (upTo < seq) return 'missing';
  let expect = seq + 1;
  for (const { key, value } of db.getRange({ start: removalKey(seq + 1), end: removalKey(upTo), inclusiveEnd: true })) {
    if (key.readUIntBE(0, SEQ_BYTES) !== expect) return 'missing';
    expect++;
    for (let o = 0; o + SERIAL_BYTES <= value.length; o += SERIAL_BYTES) if (visit(readSerial(value, o))) return 'stopped';
  }
  return expect === upTo + 1 ? 'complete' : 'missing';
}
