// The item scan of a NEG-OPEN as the query runner carries it (to a worker thread or inline): the
// filter, the record cap, and which protected kinds (DMs) the reader may not see. The visibility
// rule is ProtectedKinds' (policy/read.ts), applied to the stored value: only values of a protected
// kind are parsed, and an event the reader could not fetch with REQ is not offered by negentropy.
import type { Filter } from '../../nostr/filter.js';
import { jsonOf, kindOf } from '../../store/codec.js';
import { ProtectedKinds } from '../policy/read.js';
import { RECORD_BYTES } from '../../nostr/negentropy-storage.js';
import type { NegentropyItems } from '../../store/negentropy.js';

/** Protected kinds and the pubkeys the reader authenticated as: plain data, so it crosses threads. */
export interface HiddenKinds {
  kinds: number[];
  authed: string[];
}

export interface NegItemsRequest {
  maxItems: number;
  /** set when the filter could match protected events the reader may not see */
  hidden?: HiddenKinds;
}

export type { Filter };

/** The store's accept() hook for a request, or undefined when every match is visible. */
export function visibleValue(hidden: HiddenKinds | undefined): ((value: Buffer) => boolean) | undefined {
  if (!hidden || hidden.kinds.length === 0) return undefined;
  const pk = new ProtectedKinds(hidden.kinds);
  const authed = new Set(hidden.authed);
  return (value) => !pk.kinds.has(kindOf(value)) || pk.canSeeJson(jsonOf(value), authed);
}

/**
 * The item set of a NEG-OPEN with several filters: each filter's records (one scan each, sharing
 * the caller's signal and so its scan budget), merged into the sorted union as they arrive, capped
 * while collecting: a filter is asked for at most `maxItems` records and the union is abandoned as
 * soon as it passes `maxItems`, so memory is bounded by about twice the cap whatever the number of
 * filters. The merge yields to the event loop every MERGE_CHUNK records (it runs in a query worker,
 * or on the main thread when the relay has no query threads).
 */
export async function unionItems(
  filters: Filter[],
  maxItems: number,
  items: (f: Filter) => Promise<NegentropyItems>,
): Promise<NegentropyItems> {
  let acc: Uint8Array = new Uint8Array(0);
  for (const f of filters) {
    const part = await items(f);
    if (part.overLimit || !part.complete) return { records: new Uint8Array(0), count: 0, overLimit: part.overLimit, complete: part.complete };
    acc = acc.length === 0 ? part.records : await mergeRecords(acc, part.records);
    if (acc.length / RECORD_BYTES > maxItems) return { records: new Uint8Array(0), count: 0, overLimit: true, complete: true };
  }
  // a view over a larger buffer would be copied whole when transferred: give it its own bytes
  const records = acc.byteOffset === 0 && acc.byteLength === acc.buffer.byteLength ? acc : acc.slice();
  return { records, count: records.length / RECORD_BYTES, overLimit: false, complete: true };
}

const MERGE_CHUNK = 65_536;

const yieldTurn = (): Promise<void> => new Promise((r) => setImmediate(r));

/** The sorted union of two sorted record lists, equal records kept once. */
async function mergeRecords(a: Uint8Array, b: Uint8Array): Promise<Uint8Array> {
  const out = new Uint8Array(a.length + b.length);
  let i = 0;
  let j = 0;
  let w = 0;
  let steps = 0;
  while (i < a.length || j < b.length) {
    let c: number;
    if (i >= a.length) c = 1;
    else if (j >= b.length) c = -1;
    else c = compareRecords(a, i, b, j);
    if (c <= 0) {
      out.set(a.subarray(i, i + RECORD_BYTES), w);
      i += RECORD_BYTES;
      if (c === 0) j += RECORD_BYTES;
    } else {
      out.set(b.subarray(j, j + RECORD_BYTES), w);
      j += RECORD_BYTES;
    }
    w += RECORD_BYTES;
    if (++steps % MERGE_CHUNK === 0) await yieldTurn();
  }
  return out.subarray(0, w);
}

/** Record order: created_at (uint32 LE), then id bytes. */
function compareRecords(a: Uint8Array, ia: number, b: Uint8Array, ib: number): number {
  for (let k = 3; k >= 0; k--) if (a[ia + k] !== b[ib + k]) return a[ia + k] - b[ib + k];
  for (let k = 4; k < RECORD_BYTES; k++) if (a[ia + k] !== b[ib + k]) return a[ia + k] - b[ib + k];
  return 0;
}

/** The distinct filters of a list (same conditions in any key or value order count once). */
export function distinctFilters(filters: Filter[]): Filter[] {
  const seen = new Set<string>();
  const out: Filter[] = [];
  for (const f of filters) {
    const key = canonical(f);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(f);
  }
  return out;
}

function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).sort().join(',')}]`;
  if (v && typeof v === 'object') return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`).join(',')}}`;
  return JSON.stringify(v);
}
