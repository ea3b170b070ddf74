// What /directory.json (and `orbweaver directory --json`) answers: the directory rows with their
// NIP-66 health (src/directory/view.ts makes them, for every reader), the summary views, the
// candidates waiting for validation and the monitor's own state; and, for one relay, its detail:
// uptime per day, the checks of the retention window (thinned for the chart), RTT percentiles, its
// NIP-11 document and its events per kind from the crawl.
import type { RootDatabase } from 'lmdb';
import { servingNow, type DirectoryRow, type DirectoryView, type ViewContext } from '../directory/view.js';
import type { ProbeReport } from './probes/types.js';
import { CandidateStore } from '../directory/candidates.js';
import { MonitorHistory, type CrawlKinds } from './history.js';
import { dailyUptime, relayStats, thin, type DayUptime } from './stats.js';
import type { RelayStats } from './types.js';
import type { MonitorStatus } from './monitor.js';

export interface MonitorInfo {
  enabled: boolean;
  pubkey: string | null;
  npub: string | null;
  intervalMs: number;
  cycles: number;
  running: boolean;
  lastCycle: MonitorStatus['lastCycle'];
  nextCycle: number | null;
}

export interface DirectoryDocument extends DirectoryView {
  monitor: MonitorInfo;
  candidates: { total: number; bySource: Record<string, number> };
}

/** A check as the chart draws it: [ms, online 0/1, rtt open, rtt read, rtt write]. */
export type CheckPoint = [number, 0 | 1, number | null, number | null, number | null];

export interface RelayDetail {
  url: string;
  generatedAt: number;
  row: DirectoryRow | null;
  /** uptime per UTC day, the last 30 days */
  days: DayUptime[];
  /** the checks of the retention window, oldest first, at most MAX_POINTS */
  checks: CheckPoint[];
  /** how many checks the window holds (checks may be thinned) */
  checksInWindow: number;
  stats: RelayStats;
  /** the NIP-11 document as last published in its 30166 */
  nip11: unknown;
  crawl: CrawlKinds | null;
  /** id of the latest 30166 published for it */
  published: string | null;
  firstChecked: number | null;
  retentionMs: number;
  /** the latest probes in full (null: none ran) */
  probeReport: ProbeReport | null;
  /** each probe's history like the round-trip times': [ms, outcome by NIP] of the checks that probed, thinned */
  probes: Array<[number, Record<string, string>]>;
  /** per probed NIP, how often each outcome was seen over the window */
  probeStats: Record<string, Record<string, number>>;
}

/** The finder's answer: the relays online now that serve a NIP, lowest latency first. */
export interface ServingAnswer {
  nip: number;
  generatedAt: number;
  relays: Array<Pick<DirectoryRow, 'url' | 'rttRead' | 'rttOpen' | 'uptimeWeek' | 'nips' | 'claimedNips' | 'probes' | 'software'>>;
}

export function servingAnswer(view: DirectoryView, nip: number): ServingAnswer {
  return {
    nip,
    generatedAt: view.generatedAt,
    relays: servingNow(view.rows, nip).map((r) => ({ url: r.url, rttRead: r.rttRead, rttOpen: r.rttOpen, uptimeWeek: r.uptimeWeek, nips: r.nips, claimedNips: r.claimedNips, probes: r.probes, software: r.software })),
  };
}

const MAX_POINTS = 720;

/** The lookups the directory rows take from the monitor's records (they may be empty: never monitored). */
export function healthLookups(history: MonitorHistory): Pick<ViewContext, 'health' | 'eventsByKind'> {
  return {
    health: (url) => history.latest(url),
    eventsByKind: (url) => history.crawlKinds(url)?.last,
  };
}

/** Opens the monitor's databases of a store (a read-only store that never had them reads them as empty: store/named-db.ts). */
export function openMonitorRecords(env: RootDatabase, retentionMs: number): { history: MonitorHistory; candidates: CandidateStore } {
  return { history: new MonitorHistory(env, retentionMs), candidates: new CandidateStore(env) };
}

export function directoryDocument(view: DirectoryView, monitor: MonitorInfo, candidates: CandidateStore | null): DirectoryDocument {
  return {
    ...view,
    monitor,
    candidates: candidates ? { total: candidates.count(), bySource: candidates.bySource() } : { total: 0, bySource: {} },
  };
}

export function relayDetail(url: string, row: DirectoryRow | null, history: MonitorHistory, now = Date.now()): RelayDetail {
  const snaps = history.snapshots(url, now - history.retentionMs, now);
  const latest = history.latest(url);
  let nip11: unknown = null;
  if (latest?.nip11Json) { try { nip11 = JSON.parse(latest.nip11Json); } catch { nip11 = null; } }
  return {
    url,
    generatedAt: now,
    row,
    days: dailyUptime(snaps, now, 30),
    checks: thin(snaps, MAX_POINTS).map((s) => [s.t, s.on ? 1 : 0, s.o ?? null, s.r ?? null, s.w ?? null]),
    checksInWindow: snaps.length,
    stats: relayStats(snaps, now, history.retentionMs),
    nip11,
    crawl: history.crawlKinds(url) ?? null,
    published: latest?.published ?? null,
    firstChecked: latest?.firstChecked ?? null,
    retentionMs: history.retentionMs,
    probeReport: latest?.probeReport ?? null,
    probes: thin(snaps.filter((s) => s.p), MAX_POINTS).map((s) => [s.t, s.p!]),
    probeStats: probeStats(snaps),
  };
}

function probeStats(snaps: ReadonlyArray<{ p?: Record<string, string> }>): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  for (const s of snaps) for (const [nip, o] of Object.entries(s.p ?? {})) {
    const m = (out[nip] ??= {});
    m[o] = (m[o] ?? 0) + 1;
  }
  return out;
}
