// The relay directory: what the spider remembers about every relay across runs, in a named LMDB
// database inside the store's environment. One record per normalised URL: hop, referrers, first/
// last seen, last attempt and success, consecutive failures with the backoff they imply, the NIP-11
// document, learned quirks, per-kind cursors, and the relays its kind 10002 lists named. URLs that
// reach one relay (docs/spider.md, "One relay under many URLs") are one record that names the relay
// (its canonical URL, with the list of its aliases) and one record per alias pointing at it.
import type { Database, RootDatabase } from 'lmdb';
import type { Nip11Info } from '../remote/nip11.js';
import type { Cursors, FetchCounts, Quirks, RelayOutcome, WorkResult } from './types.js';
import { openNamedDb } from '../store/named-db.js';

export interface RelayRecord {
  url: string;
  /** hop at which the latest run found it (0: named by a seed's list) */
  hop: number;
  /** relays whose lists named it in the latest run that found it (or 'seed') */
  referrers: string[];
  /** lists naming it when last discovered */
  mentions: number;
  firstSeen: number;
  lastSeen: number;
  lastAttempt?: number;
  lastSuccess?: number;
  lastOutcome?: RelayOutcome;
  lastError?: string;
  /** consecutive failed attempts (refused and self do not count) */
  failures: number;
  nip11?: Nip11Info | null;
  quirks: Quirks;
  cursors: Cursors;
  /** relay URL -> lists naming it, from this relay's kind 10002 events (kept across runs) */
  links: Record<string, number>;
  /** events this relay gave us that were stored, over all runs */
  storedTotal: number;
  /** the counts of the last attempt (fetched, stored, …), for the directory view */
  lastCounts?: FetchCounts;
  /** this URL reaches the relay recorded under that URL: it is neither crawled nor listed by itself */
  aliasOf?: string;
  /** with aliasOf: when its answers last matched the relay's (0: kept on the record, never compared) */
  aliasCheckedAt?: number;
  /** the other URLs that reach this relay */
  aliases?: string[];
}

/** Most links remembered per relay. */
const MAX_LINKS = 10_000;

export interface BackoffPolicy {
  /** wait after the second consecutive failure; doubles with each further one */
  base: number;
  max: number;
}

export class RelayDirectory {
  private db: Database<RelayRecord, string>;

  constructor(env: RootDatabase, name = 'spider-relays') {
    this.db = openNamedDb<RelayRecord, string>(env, { name, encoding: 'msgpack' });
  }

  get(url: string): RelayRecord | undefined {
    return this.db.get(url);
  }

  /** Every record (for status pages and `spider --once` output). */
  all(): RelayRecord[] {
    const out: RelayRecord[] = [];
    for (const { value } of this.db.getRange()) out.push(value);
    return out;
  }

  count(): number {
    return this.db.getCount();
  }

  /** Records that a run found the relay at `hop`. */
  async discovered(url: string, hop: number, referrers: string[], mentions: number, now = Date.now()): Promise<RelayRecord> {
    const prev = this.db.get(url);
    const rec: RelayRecord = prev
      ? { ...prev, hop, referrers: referrers.slice(0, 50), mentions, lastSeen: now }
      : { url, hop, referrers: referrers.slice(0, 50), mentions, firstSeen: now, lastSeen: now, failures: 0, quirks: {}, cursors: {}, links: {}, storedTotal: 0 };
    await this.db.put(url, rec);
    return rec;
  }

  /** Folds a work result into the relay's record. */
  async applyResult(r: WorkResult, now = Date.now()): Promise<RelayRecord> {
    const prev = this.db.get(r.url) ?? { url: r.url, hop: r.hop, referrers: [], mentions: 0, firstSeen: now, lastSeen: now, failures: 0, quirks: {}, cursors: {}, links: {}, storedTotal: 0 };
    const rec: RelayRecord = { ...prev, lastAttempt: r.startedAt, lastOutcome: r.outcome };
    if (r.error) rec.lastError = r.error; else delete rec.lastError;
    if (r.nip11) rec.nip11 = r.nip11;
    rec.quirks = r.quirks;
    rec.cursors = r.cursors;
    if (r.outcome === 'ok' || r.outcome === 'partial') {
      rec.lastSuccess = now;
      rec.failures = 0;
    } else if (r.outcome === 'failed') {
      rec.failures = prev.failures + 1;
    }
    rec.storedTotal = prev.storedTotal + r.counts.stored;
    rec.lastCounts = r.counts;
    if (Object.keys(r.links).length) {
      const merged = { ...prev.links };
      for (const [u, n] of Object.entries(r.links)) merged[u] = Math.max(merged[u] ?? 0, n);
      const entries = Object.entries(merged);
      rec.links = entries.length > MAX_LINKS ? Object.fromEntries(entries.sort((a, b) => b[1] - a[1]).slice(0, MAX_LINKS)) : merged;
    }
    await this.db.put(r.url, rec);
    return rec;
  }

  /** The URL that names the relay `url` reaches: its canonical URL when it is an alias, else itself. */
  relayOf(url: string): string {
    return this.db.get(url)?.aliasOf ?? url;
  }

  /**
   * Records that `canonical` names a relay of its own and that `confirmed` (its answers matched in
   * this run) and `kept` (kept on the record) reach it. One transaction. A URL that becomes an
   * alias keeps no crawl state (its relay's is the canonical's); if it named a relay before, its
   * aliases follow it, and its cursors and quirks go to a canonical that has none (the same relay:
   * what was fetched from it stays fetched). A canonical that was an alias until now is taken off
   * its old relay's list (split) and starts without cursors: what it serves was never fetched as its own.
   */
  async recordRelay(canonical: string, confirmed: string[], kept: string[], now = Date.now()): Promise<RelayRecord> {
    return await this.db.transaction(() => {
      const blank = (url: string): RelayRecord => ({ url, hop: -1, referrers: [], mentions: 0, firstSeen: now, lastSeen: now, failures: 0, quirks: {}, cursors: {}, links: {}, storedTotal: 0 });
      const detach = (url: string, from: string) => {
        const old = this.db.get(from);
        if (old?.aliases?.includes(url)) this.put({ ...old, aliases: old.aliases.filter((a) => a !== url) });
      };
      let c = this.db.get(canonical) ?? blank(canonical);
      if (c.aliasOf !== undefined) {
        detach(canonical, c.aliasOf);
        c = { ...c, cursors: {} };
        delete c.aliasOf;
        delete c.aliasCheckedAt;
      }
      const list = new Set(c.aliases ?? []);
      const alias = (url: string, checkedAt: number) => {
        if (url === canonical) return;
        const r = this.db.get(url) ?? blank(url);
        for (const a of r.aliases ?? []) {
          if (a === canonical) continue;
          const ar = this.db.get(a);
          if (ar) void this.db.put(a, { ...ar, aliasOf: canonical });
          list.add(a);
        }
        if (r.aliasOf === undefined && r.lastSuccess !== undefined && c.lastSuccess === undefined) {
          c = { ...c, cursors: r.cursors, quirks: r.quirks, nip11: c.nip11 ?? r.nip11, lastSuccess: r.lastSuccess, links: { ...r.links, ...c.links } };
        }
        if (r.aliasOf !== undefined && r.aliasOf !== canonical) detach(url, r.aliasOf);
        const rec: RelayRecord = { ...r, aliasOf: canonical, aliasCheckedAt: checkedAt, cursors: {}, links: {} };
        delete rec.aliases;
        void this.db.put(url, rec);
        list.add(url);
      };
      for (const u of confirmed) alias(u, now);
      // kept on the record: when it was last shown stays as it was (a relay named anew is still the relay it matched)
      for (const u of kept) alias(u, this.db.get(u)?.aliasCheckedAt ?? 0);
      list.delete(canonical);
      if (list.size) c.aliases = [...list].sort(); else delete c.aliases;
      void this.db.put(canonical, c);
      return c;
    });
  }

  private put(rec: RelayRecord): void {
    void this.db.put(rec.url, rec);
  }

  /** Time before which a failing relay is not tried again (0: try now). */
  static retryAt(rec: RelayRecord | undefined, p: BackoffPolicy): number {
    if (!rec || rec.failures < 2 || rec.lastAttempt === undefined) return 0;
    return rec.lastAttempt + Math.min(p.max, p.base * 2 ** (rec.failures - 2));
  }
}
