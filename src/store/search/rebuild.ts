// The search index's format version. The index is kept by the writer and persists; when this
// orbweaver's format (SEARCH_FORMAT_VERSION) or the configured kinds differ from what the database
// was indexed with, it is rebuilt once at open from the stored events, in batches, with progress in
// the log. The marker is written last, so a rebuild cut short (kill -9) starts over at the next open.
import type { RootDatabase } from 'lmdb';
import { decodeEvent } from '../codec.js';
import { EMPTY, kindPrefix, keySerial, serialKey, timeRange } from '../keys.js';
import type { Dbs } from '../schema.js';
import { visitSearchEntries } from './entries.js';
import type { SearchDbs } from './schema.js';

/** Bump when what is indexed or how keys are laid out changes: existing indexes are rebuilt. */
export const SEARCH_FORMAT_VERSION = 1;
export const SEARCH_META_KEY = 'searchIndex';
const BATCH = 2000;
const PROGRESS_MS = 2000;

interface Marker {
  version: number;
  kinds: number[];
}

export interface RebuildReport {
  rebuilt: boolean;
  /** events indexed by the rebuild */
  events: number;
}

type Logger = { info?(o: object, msg?: string): void; warn(o: object, msg?: string): void };

const wanted = (s: SearchDbs): Marker => ({ version: SEARCH_FORMAT_VERSION, kinds: [...s.kinds].sort((a, b) => a - b) });

function searchIndexCurrent(dbs: Dbs): boolean {
  if (!dbs.search) return true;
  const have = dbs.meta.get(SEARCH_META_KEY) as Marker | undefined;
  const want = wanted(dbs.search);
  return have !== undefined && have.version === want.version && have.kinds.length === want.kinds.length && have.kinds.every((k, i) => k === want.kinds[i]);
}

export function ensureSearchIndex(env: RootDatabase, dbs: Dbs, logger?: Logger): RebuildReport {
  const s = dbs.search;
  if (!s || searchIndexCurrent(dbs)) return { rebuilt: false, events: 0 };
  const from = (dbs.meta.get(SEARCH_META_KEY) as Marker | undefined) ?? null;
  const to = wanted(s);
  const ranges = to.kinds.map((k) => timeRange(kindPrefix(k), 0, 0xffffffff));
  const total = ranges.reduce((n, r) => n + dbs.kind.getKeysCount({ start: r.end, end: r.start }), 0);
  const started = Date.now();
  if (total > 0) logger?.info?.({ from, to, events: total }, 'search index: rebuilding (new index format or search.kinds changed)');
  env.transactionSync(() => {
    s.keys.clearSync();
    s.docs.clearSync();
  });
  let done = 0;
  let lastLog = started;
  for (const r of ranges) {
    // forward over the kind's range, one write transaction per batch of events
    let start: Buffer = r.end;
    let exclusive = false;
    for (;;) {
      const keys = Array.from(dbs.kind.getKeys({ start, end: r.start, exclusiveStart: exclusive, limit: BATCH }));
      if (keys.length === 0) break;
      env.transactionSync(() => {
        for (const k of keys) {
          const serial = keySerial(k);
          const value = dbs.events.getBinary(serialKey(serial));
          if (value) visitSearchEntries(s, decodeEvent(value), serial, (db, key, v) => db.putSync(key, v ?? EMPTY));
        }
      });
      done += keys.length;
      start = keys[keys.length - 1];
      exclusive = true;
      if (Date.now() - lastLog >= PROGRESS_MS) {
        lastLog = Date.now();
        logger?.info?.({ indexed: done, of: total, pct: Math.floor((100 * done) / Math.max(1, total)) }, 'search index: rebuilding');
      }
      if (keys.length < BATCH) break;
    }
  }
  env.transactionSync(() => dbs.meta.putSync(SEARCH_META_KEY, to));
  if (total > 0) logger?.info?.({ events: done, ms: Date.now() - started }, 'search index: rebuilt');
  return { rebuilt: true, events: done };
}
