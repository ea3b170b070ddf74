// What the monitor keeps, in named LMDB databases of the store's environment (like the spider's
// directory): every check as a snapshot per relay (key [url, time], pruned past the retention), the
// latest health of each relay with its uptime and RTT figures computed from those snapshots at
// check time, and the events per kind each relay gave the last crawl (and over all crawls).
import type { Database, RootDatabase } from 'lmdb';
import type { RelayHealth } from '../directory/view.js';
import { relayStats, DAY } from './stats.js';
import { requirements } from './nip66.js';
import { decide, outcomes } from './probes/decide.js';
import type { ProbeReport } from './probes/types.js';
import type { RelayCheck, Snapshot } from './types.js';
import { openNamedDb } from '../store/named-db.js';

/** The latest health of a relay as kept (RelayHealth plus what the detail page shows). */
export interface HealthRecord extends RelayHealth {
  url: string;
  firstChecked: number;
  checks: number;
  /** the NIP-11 document as published in the 30166 content */
  nip11Json: string | null;
  /** the 30166 published for the latest online check, and its created_at (unix seconds) */
  published: string | null;
  publishedAt: number | null;
  /** that 30166's `d` (absent: published before `d` took RFC 3986's "/", when it was the URL itself) */
  publishedD?: string;
  rtt: RelayHealth['rtt'] & { nip11?: number };
  answer: string | null;
  /** the latest probes in full (limits, AUTH, details of each refusal); null: none ran */
  probeReport?: ProbeReport | null;
}

export interface CrawlKinds {
  at: number;
  last: Record<string, number>;
  total: Record<string, number>;
}

type SnapKey = [string, number];

export class MonitorHistory {
  private snaps: Database<Snapshot, SnapKey>;
  private health: Database<HealthRecord, string>;
  private crawl: Database<CrawlKinds, string>;

  constructor(env: RootDatabase, readonly retentionMs = 30 * DAY) {
    this.snaps = openNamedDb<Snapshot, SnapKey>(env, { name: 'monitor-snapshots', encoding: 'msgpack' });
    this.health = openNamedDb<HealthRecord, string>(env, { name: 'monitor-health', encoding: 'msgpack' });
    this.crawl = openNamedDb<CrawlKinds, string>(env, { name: 'monitor-crawl', encoding: 'msgpack' });
  }

  /** Snapshots of a relay with from < t <= to, oldest first. */
  snapshots(url: string, from = 0, to = Number.MAX_SAFE_INTEGER): Snapshot[] {
    const out: Snapshot[] = [];
    for (const { value } of this.snaps.getRange({ start: [url, from + 1], end: [url, to + 1] })) out.push(value);
    return out;
  }

  /** Adds one snapshot (tests and imports use it directly; record() for checks). */
  async addSnapshot(url: string, s: Snapshot): Promise<void> {
    await this.snaps.put([url, s.t], s);
  }

  /** Deletes a relay's snapshots older than the retention; returns how many. */
  async prune(url: string, now = Date.now()): Promise<number> {
    const keys: SnapKey[] = [];
    for (const k of this.snaps.getKeys({ start: [url, 0], end: [url, now - this.retentionMs + 1] })) keys.push(k as SnapKey);
    if (keys.length === 0) return 0;
    await this.snaps.transaction(() => { for (const k of keys) this.snaps.remove(k); });
    return keys.length;
  }

  /** Keeps one check: its snapshot, the pruned history, and the relay's health with fresh figures. */
  async record(c: RelayCheck, published: { id: string; createdAt: number; d?: string } | null = null): Promise<HealthRecord> {
    const snap: Snapshot = { t: c.checkedAt, on: c.online };
    if (c.rtt.open !== undefined) snap.o = c.rtt.open;
    if (c.rtt.read !== undefined) snap.r = c.rtt.read;
    if (c.rtt.write !== undefined) snap.w = c.rtt.write;
    if (!c.online && c.error) snap.e = c.error.slice(0, 120);
    const probed = outcomes(c.probes);
    if (Object.keys(probed).length) snap.p = probed;
    await this.addSnapshot(c.url, snap);
    await this.prune(c.url, c.checkedAt);
    const prev = this.health.get(c.url);
    const snaps = this.snapshots(c.url, c.checkedAt - this.retentionMs, c.checkedAt);
    const st = relayStats(snaps, c.checkedAt, this.retentionMs);
    let lastOnline = c.online ? c.checkedAt : prev?.lastOnline ?? null;
    // no record yet (history imported, or written by another process): the snapshots know
    if (lastOnline === null) for (let i = snaps.length - 1; i >= 0 && lastOnline === null; i--) if (snaps[i].on) lastOnline = snaps[i].t;
    // a check without a document (offline, or it stopped serving one) keeps what was last known of it
    const nip11 = c.nip11;
    // N and T as published: the claims corrected by the probes (src/monitor/probes/decide.ts)
    const pub = decide(nip11, c.probes);
    const fresh = nip11 !== null || c.probes !== undefined;
    const rec: HealthRecord = {
      url: c.url,
      checkedAt: c.checkedAt,
      online: c.online,
      lastOnline,
      network: c.network,
      rtt: { ...c.rtt },
      name: nip11?.name ?? prev?.name ?? null,
      software: nip11?.software ?? prev?.software ?? null,
      version: nip11 ? nip11.version ?? null : prev?.version ?? null,
      nips: fresh ? pub.nips : prev?.nips ?? [],
      claimedNips: nip11 ? pub.claimed : prev?.claimedNips ?? [],
      differences: fresh ? pub.differences : prev?.differences ?? [],
      probes: c.probes ? probed : c.online ? {} : prev?.probes ?? {},
      requirements: nip11 || c.online ? requirements(nip11, c.observed) : prev?.requirements ?? [],
      types: fresh ? pub.types : prev?.types ?? [],
      ssl: c.ssl ? { valid: c.ssl.valid, ...(c.ssl.expires !== undefined ? { expires: c.ssl.expires } : {}), ...(c.ssl.issuer ? { issuer: c.ssl.issuer } : {}) } : prev?.ssl ?? null,
      error: c.error ?? null,
      uptimeDay: st.uptimeDay,
      uptimeWeek: st.uptimeWeek,
      uptimeMonth: st.uptimeMonth,
      rttOpen: { p50: st.rttOpen.p50, p90: st.rttOpen.p90 },
      rttRead: { p50: st.rttRead.p50, p90: st.rttRead.p90 },
      firstChecked: prev?.firstChecked ?? c.checkedAt,
      checks: (prev?.checks ?? 0) + 1,
      nip11Json: c.nip11Json ?? prev?.nip11Json ?? null,
      published: published?.id ?? prev?.published ?? null,
      publishedAt: published?.createdAt ?? prev?.publishedAt ?? null,
      ...(published ? (published.d !== undefined ? { publishedD: published.d } : {}) : prev?.publishedD !== undefined ? { publishedD: prev.publishedD } : {}),
      answer: c.answer ?? null,
      probeReport: c.probes ?? (c.online ? null : prev?.probeReport ?? null),
    };
    await this.health.put(c.url, rec);
    return rec;
  }

  /** Its last 30166 was withdrawn (an alias: docs/spider.md): nothing stands published for it now. Its date stays, so a later 30166 is newer. */
  async withdrawn(url: string): Promise<void> {
    const prev = this.health.get(url);
    if (prev?.published) await this.health.put(url, { ...prev, published: null });
  }

  latest(url: string): HealthRecord | undefined {
    return this.health.get(url);
  }

  allLatest(): HealthRecord[] {
    const out: HealthRecord[] = [];
    for (const { value } of this.health.getRange()) out.push(value);
    return out;
  }

  checkedCount(): number {
    return this.health.getCount();
  }

  /** Folds one crawl's events per kind into the relay's record. */
  async noteCrawl(url: string, kinds: Record<string, number>, at = Date.now()): Promise<void> {
    const prev = this.crawl.get(url);
    const total = { ...(prev?.total ?? {}) };
    for (const [k, n] of Object.entries(kinds)) total[k] = (total[k] ?? 0) + n;
    await this.crawl.put(url, { at, last: { ...kinds }, total });
  }

  crawlKinds(url: string): CrawlKinds | undefined {
    return this.crawl.get(url);
  }
}
