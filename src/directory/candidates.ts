// Relay candidates: URLs the finder read in stored events that are not in the relay directory yet,
// each with where it was found, waiting for the validator. A named LMDB database in the store's
// environment, like the directory. Bounded: at most `max` candidates (new ones are not taken
// beyond it), and a candidate that failed validation `maxFailures` times is dropped.
import type { Database, RootDatabase } from 'lmdb';
import { openNamedDb } from '../store/named-db.js';

export interface CandidateRecord {
  url: string;
  /** source ("kind 3 content", "r tag of kind 10002", "NIP-66 30166", …) -> events seen naming it */
  sources: Record<string, number>;
  /** the first event that named it */
  first: { source: string; event: string; pubkey: string };
  firstSeen: number;
  lastSeen: number;
  /** failed validations in a row */
  failures: number;
  lastAttempt?: number;
  lastError?: string;
}

/** One sighting: `url` named by `event` of `pubkey` through `source`. */
export interface Sighting { url: string; source: string; event: string; pubkey: string }

const META_KEY = '\u0000meta';

export interface FinderMeta {
  /** ms since epoch of the last full scan of the stored events */
  lastFullScan?: number;
}

export class CandidateStore {
  private db: Database<CandidateRecord | FinderMeta, string>;

  constructor(env: RootDatabase, name = 'spider-candidates') {
    this.db = openNamedDb<CandidateRecord | FinderMeta, string>(env, { name, encoding: 'msgpack' });
  }

  get(url: string): CandidateRecord | undefined {
    return url === META_KEY ? undefined : (this.db.get(url) as CandidateRecord | undefined);
  }

  all(): CandidateRecord[] {
    const out: CandidateRecord[] = [];
    for (const { key, value } of this.db.getRange()) if (key !== META_KEY) out.push(value as CandidateRecord);
    return out;
  }

  count(): number {
    return this.db.getCount() - (this.db.get(META_KEY) === undefined ? 0 : 1);
  }

  meta(): FinderMeta {
    return (this.db.get(META_KEY) as FinderMeta | undefined) ?? {};
  }

  async setMeta(m: FinderMeta): Promise<void> {
    await this.db.put(META_KEY, m);
  }

  /**
   * Folds sightings in, in one transaction. `counts`: url -> source -> events naming it; an existing
   * candidate keeps the larger count per source (a rescan sees the same events again). New
   * candidates are taken while fewer than `max` are kept. Returns how many were new / left out.
   */
  async add(counts: Map<string, Map<string, number>>, firsts: Map<string, Sighting>, max: number, now = Date.now()): Promise<{ added: number; updated: number; full: number }> {
    const r = { added: 0, updated: 0, full: 0 };
    if (counts.size === 0) return r;
    let size = this.count();
    await this.db.transaction(() => {
      for (const [url, bySource] of counts) {
        const prev = this.get(url);
        if (!prev && size >= max) { r.full++; continue; }
        const sources = { ...(prev?.sources ?? {}) };
        for (const [s, n] of bySource) sources[s] = Math.max(sources[s] ?? 0, n);
        const f = firsts.get(url)!;
        const rec: CandidateRecord = prev
          ? { ...prev, sources, lastSeen: now }
          : { url, sources, first: { source: f.source, event: f.event, pubkey: f.pubkey }, firstSeen: now, lastSeen: now, failures: 0 };
        void this.db.put(url, rec); // inside transaction(): applied at once, in this transaction
        if (prev) r.updated++; else { r.added++; size++; }
      }
    });
    return r;
  }

  async remove(url: string): Promise<void> {
    await this.db.remove(url);
  }

  /** Counts a failed validation; returns the record (its failures). */
  async failed(url: string, error: string, now = Date.now()): Promise<CandidateRecord | undefined> {
    const prev = this.get(url);
    if (!prev) return undefined;
    const rec = { ...prev, failures: prev.failures + 1, lastAttempt: now, lastError: error.slice(0, 300) };
    await this.db.put(url, rec);
    return rec;
  }

  /** Candidates per source (a candidate found through two sources counts for both). */
  bySource(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const c of this.all()) for (const s of Object.keys(c.sources)) out[s] = (out[s] ?? 0) + 1;
    return out;
  }
}

/** Validation order: least-failed first, then the oldest (first seen), then by URL. */
export function validationOrder(a: CandidateRecord, b: CandidateRecord): number {
  return a.failures - b.failures || a.firstSeen - b.firstSeen || (a.url < b.url ? -1 : a.url > b.url ? 1 : 0);
}
