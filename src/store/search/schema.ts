// The NIP-50 search index in LMDB: two named databases beside the event store's, written in the
// same transaction as the event (indexer.ts visitEntries calls visitSearchEntries), so what was
// acknowledged is searchable after a crash, and an event leaves the index when it leaves the store.
//
//   ev.search_keys  class (1) + key (UTF-8) + 0x00 + ~serial (5)  -> ''
//   ev.search_docs  serial (5)                                    -> the event's SearchDoc (encodeDoc)
//
// class: 0 whole fields, 1 name terms, 2 body terms, 3 nip05 domain (KEY_CLASS). Keys of one class
// sharing a prefix form one contiguous range (the query "ali" reads "ali", "alia", "alice", ...),
// an exact key comes first in it (0x00 sorts before any character), and within one key the
// serial is stored inverted so the most recently stored event comes first.
import type { RootDatabase } from 'lmdb';
import { MAX_SERIAL, SERIAL_BYTES } from '../keys.js';
import { missingDb, type BinDb } from '../schema.js';

export interface SearchDbs {
  keys: BinDb;
  docs: BinDb;
  /** kinds indexed (config search.kinds) */
  kinds: ReadonlySet<number>;
  /** index entries one search filter reads at most (config search.maxPostings) */
  maxPostings: number;
  /** with trust ranks stored: candidates of the best match class read so the most trusted come first (config trust.searchWindow; 0 = no ranking) */
  rankWindow: number;
}

export interface SearchOptions {
  /** kinds to index; default [0] (profiles) */
  kinds?: readonly number[];
  /** default 10,000 */
  maxPostings?: number;
  /** default 0: results are not ordered by trust rank */
  rankWindow?: number;
}

export const SEARCH_DEFAULTS = { kinds: [0] as readonly number[], maxPostings: 10_000 };

export function openSearchDbs(env: RootDatabase, opts: SearchOptions = {}): SearchDbs {
  const bin = (name: string): BinDb => env.openDB<Buffer, Buffer>({ name: `ev.${name}`, keyEncoding: 'binary', encoding: 'binary' }) ?? missingDb(`ev.${name}`);
  return {
    keys: bin('search_keys'),
    docs: bin('search_docs'),
    kinds: new Set(opts.kinds ?? SEARCH_DEFAULTS.kinds),
    maxPostings: opts.maxPostings ?? SEARCH_DEFAULTS.maxPostings,
    rankWindow: opts.rankWindow ?? 0,
  };
}

/** The index key of one posting: class + key + 0x00 + inverted serial. */
export function postingKey(cls: number, key: string, serial: number): Buffer {
  const n = Buffer.byteLength(key, 'utf8');
  const b = Buffer.allocUnsafe(1 + n + 1 + SERIAL_BYTES);
  b[0] = cls;
  b.write(key, 1, n, 'utf8');
  b[1 + n] = 0;
  b.writeUIntBE(MAX_SERIAL - serial, 2 + n, SERIAL_BYTES);
  return b;
}

export const postingSerial = (key: Buffer): number => MAX_SERIAL - key.readUIntBE(key.length - SERIAL_BYTES, SERIAL_BYTES);

/** Forward range of every posting whose key starts with `prefix` in class `cls` (UTF-8 never holds 0xff). */
export function prefixRange(cls: number, prefix: string): { start: Buffer; end: Buffer } {
  const p = Buffer.from(prefix, 'utf8');
  const start = Buffer.allocUnsafe(1 + p.length);
  start[0] = cls;
  p.copy(start, 1);
  const end = Buffer.allocUnsafe(start.length + 1);
  start.copy(end, 0);
  end[start.length] = 0xff;
  return { start, end };
}

/** Forward range of the postings of exactly `key` in class `cls`. */
export function exactRange(cls: number, key: string): { start: Buffer; end: Buffer } {
  const { start } = prefixRange(cls, key);
  const s = Buffer.allocUnsafe(start.length + 1);
  start.copy(s, 0);
  s[start.length] = 0;
  const e = Buffer.from(s);
  e[start.length] = 1;
  return { start: s, end: e };
}
