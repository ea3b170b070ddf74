// The (created_at, id) pairs of every event matching one filter, ascending, packed as negentropy
// records (src/nostr/negentropy-storage.ts: created_at uint32 LE + 32-byte id): the item set a
// NIP-77 reconciliation works on. The filter's plan scans its index as a REQ would (keys end in
// created_at + serial); each match reads only the stored value's fixed header for the id and never
// decodes the event's JSON (unless the filter has tag conditions the index did not decide, as for
// REQ). One allocation of 36 bytes per item, transferable between threads.
import type { Filter } from '../nostr/filter.js';
import { RECORD_BYTES } from '../nostr/negentropy-storage.js';
import { OFF_ID } from './codec.js';
import { canMatch, drive, FilterScan, type ScanEnv } from './query.js';

export interface NegentropyItems {
  /** records sorted ascending by (created_at, id), RECORD_BYTES each; empty when overLimit */
  records: Uint8Array;
  /** matches (after the filter's limit) */
  count: number;
  /** more than maxItems events match: nothing is returned (the caller refuses the request) */
  overLimit: boolean;
  /** false when the scan was stopped by its signal */
  complete: boolean;
}

export interface NegentropyItemOptions {
  /** most items returned; past it the result is overLimit */
  maxItems: number;
  /** events the reader may not see are left out (checked on the stored value) */
  accept?: (value: Buffer) => boolean;
}

const ID_BYTES = 32;

export async function runNegentropyItems(env: ScanEnv, f: Filter, opts: NegentropyItemOptions): Promise<NegentropyItems> {
  const none = (overLimit: boolean, complete: boolean): NegentropyItems => ({ records: new Uint8Array(0), count: 0, overLimit, complete });
  if (!canMatch(f) || f.limit === 0) return none(false, true);
  const limit = f.limit ?? Infinity;
  const { maxItems, accept } = opts;

  // matches in scan order: newest first from index plans
  let buf = new Uint8Array(RECORD_BYTES * Math.min(Math.max(maxItems, 1) + 1, 4096));
  let n = 0;
  let lastCa = Infinity;
  let descending = true;
  let overLimit = false;
  const sink = (ca: number, value: Buffer): boolean => {
    if (accept && !accept(value)) return true;
    // The filter's limit keeps the newest `limit` events; the run of the second where it falls is
    // read whole so the lowest ids of that second can be kept (NIP-01 order).
    if (n >= limit && ca < lastCa && descending) return false;
    if (n >= maxItems) {
      overLimit = true;
      return false;
    }
    if (ca > lastCa) descending = false;
    lastCa = ca;
    if ((n + 1) * RECORD_BYTES > buf.length) {
      const next = new Uint8Array(Math.min(buf.length * 2, (maxItems + 1) * RECORD_BYTES));
      next.set(buf);
      buf = next;
    }
    const at = n * RECORD_BYTES;
    buf[at] = ca & 0xff;
    buf[at + 1] = (ca >>> 8) & 0xff;
    buf[at + 2] = (ca >>> 16) & 0xff;
    buf[at + 3] = (ca >>> 24) & 0xff;
    buf.set(value.subarray(OFF_ID, OFF_ID + ID_BYTES), at + 4);
    n++;
    return true;
  };
  const scan = new FilterScan(env, { ...f, limit: undefined }, Infinity, { sink });
  const complete = await drive(scan, env);
  if (overLimit) return none(true, complete);
  if (!complete) return none(false, false);

  const order = descending ? ascendingFromNewestFirst(buf, n) : sortAll(buf, n);
  const kept = Math.min(n, limit);
  const records = new Uint8Array(kept * RECORD_BYTES);
  // ascending order: the oldest items are first; a limit drops from the oldest second the highest ids
  const drop = n - kept;
  let w = 0;
  if (drop > 0) {
    const cutCa = caAt(buf, order[drop]);
    let firstOfCut = 0;
    while (caAt(buf, order[firstOfCut]) < cutCa) firstOfCut++;
    // items [firstOfCut, drop + ...) share cutCa; keep the lowest ids of that second
    const keepInCut = kept - countAbove(buf, order, cutCa);
    for (let i = firstOfCut; i < firstOfCut + keepInCut; i++) copyRecord(buf, order[i], records, w++);
    let i = firstOfCut;
    while (i < n && caAt(buf, order[i]) === cutCa) i++;
    for (; i < n; i++) copyRecord(buf, order[i], records, w++);
  } else {
    for (let i = 0; i < n; i++) copyRecord(buf, order[i], records, w++);
  }
  return { records, count: kept, overLimit: false, complete: true };
}

const caAt = (buf: Uint8Array, i: number): number => {
  const at = i * RECORD_BYTES;
  return (buf[at] | (buf[at + 1] << 8) | (buf[at + 2] << 16) | (buf[at + 3] << 24)) >>> 0;
};

function countAbove(buf: Uint8Array, order: Uint32Array, ca: number): number {
  let c = 0;
  for (let i = order.length - 1; i >= 0 && caAt(buf, order[i]) > ca; i--) c++;
  return c;
}

function copyRecord(src: Uint8Array, i: number, dst: Uint8Array, j: number): void {
  dst.set(src.subarray(i * RECORD_BYTES, (i + 1) * RECORD_BYTES), j * RECORD_BYTES);
}

function compareIds(buf: Uint8Array, a: number, b: number): number {
  const pa = a * RECORD_BYTES + 4;
  const pb = b * RECORD_BYTES + 4;
  for (let k = 0; k < ID_BYTES; k++) {
    const d = buf[pa + k] - buf[pb + k];
    if (d !== 0) return d;
  }
  return 0;
}

/**
 * Items in index order (created_at descending, equal created_at in arrival order) to ascending
 * (created_at, id): the runs of one second are read from the end, each sorted by id. O(n) plus the
 * sorts of crowded seconds.
 */
function ascendingFromNewestFirst(buf: Uint8Array, n: number): Uint32Array {
  const order = new Uint32Array(n);
  let w = 0;
  let end = n;
  while (end > 0) {
    const ca = caAt(buf, end - 1);
    let start = end - 1;
    while (start > 0 && caAt(buf, start - 1) === ca) start--;
    if (end - start === 1) order[w++] = start;
    else {
      const run = Array.from({ length: end - start }, (_, k) => start + k);
      run.sort((a, b) => compareIds(buf, a, b));
      for (const i of run) order[w++] = i;
    }
    end = start;
  }
  return order;
}

/** Items in any order (ids plan) to ascending (created_at, id). */
function sortAll(buf: Uint8Array, n: number): Uint32Array {
  const idx = Array.from({ length: n }, (_, i) => i);
  idx.sort((a, b) => caAt(buf, a) - caAt(buf, b) || compareIds(buf, a, b));
  return Uint32Array.from(idx);
}
