// What the spider reports: the run summary (printed by `spider --once`, kept as the last run), the
// live status (status page, /metrics) and its Prometheus text.
import { zeroCounts, type FetchCounts, type HopSummary, type SpiderSummary } from '../directory/types.js';
import { MetricsText, type MetricType } from '../lib/prometheus-text.js';

export type { HopSummary, SpiderSummary };

export type SpiderPhase = 'idle' | 'seeds' | 'crawling' | 'stopping';

export interface SpiderStatus {
  running: boolean;
  phase: SpiderPhase;
  /** hop being crawled (-1 when idle) */
  hop: number;
  maxHops: number;
  /** relays finished / taken in the current hop */
  relaysDone: number;
  relaysTotal: number;
  /** relays finished in the current run, all hops */
  relaysDoneRun: number;
  /** events of the current run so far (or of the last run when idle) */
  events: FetchCounts;
  /** relays being fetched right now */
  current: string[];
  runs: number;
  lastRun: SpiderSummary | null;
  /** ms since epoch; null when no run is scheduled */
  nextRun: number | null;
  /** relays in the directory */
  directorySize: number;
}

export function emptyStatus(maxHops: number): SpiderStatus {
  return { running: false, phase: 'idle', hop: -1, maxHops, relaysDone: 0, relaysTotal: 0, relaysDoneRun: 0, events: zeroCounts(), current: [], runs: 0, lastRun: null, nextRun: null, directorySize: 0 };
}

const secs = (ms: number) => (ms / 1000).toFixed(1);

/** The summary as the few lines `spider --once` prints. */
export function formatSummary(s: SpiderSummary): string {
  const e = s.events;
  const lines = [
    `spider run ${s.aborted ? 'stopped early' : 'finished'} in ${secs(s.durationMs)} s (${new Date(s.startedAt).toISOString()})`,
    `seeds: ${s.seeds} (${s.seedsWithoutList} without a relay list)`,
    ...s.hops.map((h) => `hop ${h.hop}: ${h.relays} relays, ${h.reached} reached, ${h.failed} failed, ${h.refused} refused, ${h.skipped} skipped${h.aliases ? `, ${h.aliases} aliases` : ''}; ${h.events.fetched} events fetched, ${h.events.stored} stored`),
    `relays: ${s.relays.total} total, ${s.relays.reached} reached, ${s.relays.failed} failed, ${s.relays.refused} refused, ${s.relays.skipped} skipped`,
    ...(s.relays.aliases || s.relays.probed ? [`aliases: ${s.relays.aliases} URLs reach a relay crawled under another URL (${s.relays.probed} URLs asked what they answer)`] : []),
    `events: ${e.fetched} fetched, ${e.stored} stored, ${e.duplicate} duplicate, ${e.rejected} rejected, ${e.invalid} invalid (dropped), ${e.truncated} truncated` +
      (e.truncatedSlices ? `, ${e.truncatedSlices} stuck second(s) unproven` : ''),
    `work: ${e.verified} signatures checked, ${(e.bytes / 1e6).toFixed(1)} MB received`,
  ];
  if (e.nip77Kinds || e.nip77Fallbacks) {
    lines.push(`NIP-77: ${e.nip77Relays} relays reconciled (${e.nip77Kinds} kinds, ${e.nip77Fallbacks} paged after a failed attempt), ${e.nip77Ids} ids the home lacked, ${(e.nip77Bytes / 1e6).toFixed(2)} MB of negentropy messages`);
  }
  for (const f of s.bootstrapFailures.slice(0, 10)) lines.push(`  bootstrap relay ${f.url} not asked: ${f.error}`);
  for (const f of s.refusals.slice(0, 10)) lines.push(`  refused ${f.url}: ${f.error}`);
  for (const f of s.failures.slice(0, 10)) lines.push(`  failed ${f.url}: ${f.error}`);
  return lines.join('\n');
}

/**
 * Why a run crawled nothing, in one sentence for the operator: no relay at all (no relay list of the
 * seeds, and why the bootstrap relays gave none), or every relay refused by the address rules.
 * Null when some relay was reached.
 */
export function nothingCrawled(s: SpiderSummary): string | null {
  const first = (l: Array<{ url: string; error: string }>) => `${l[0].url}: ${l[0].error}`;
  if (s.relays.total === 0) {
    const why = 'no relay to crawl: no relay list (kind 10002) of the seeds was found in the store or on spider.bootstrapRelays';
    return s.bootstrapFailures.length ? `${why}; the bootstrap relays could not be asked (${first(s.bootstrapFailures)})` : why;
  }
  if (s.relays.reached > 0) return null;
  if (s.relays.refused > 0 && s.relays.refused + s.relays.skipped === s.relays.total && s.refusals.length) {
    return `no relay reached: every relay was refused by the address rules (${first(s.refusals)})`;
  }
  return `no relay reached: ${s.relays.failed} failed, ${s.relays.refused} refused, ${s.relays.skipped} skipped${s.failures.length ? ` (${first(s.failures)})` : ''}`;
}

/** Prometheus text for /metrics (the lead appends it to the relay's own). */
export function metricsText(st: SpiderStatus, totals: FetchCounts & { relaysReached: number; relaysFailed: number }): string {
  const out = new MetricsText();
  const m = (name: string, type: MetricType, help: string, value: number) => out.metric(`orbweaver_spider_${name}`, type, help, value);
  m('running', 'gauge', 'Whether a spider run is in progress', st.running ? 1 : 0);
  m('hop', 'gauge', 'Hop being crawled (-1 when idle)', st.hop);
  m('relays_done', 'gauge', 'Relays finished in the current hop', st.relaysDone);
  m('relays_total', 'gauge', 'Relays taken into the current hop', st.relaysTotal);
  m('runs_total', 'counter', 'Spider runs finished', st.runs);
  m('directory_relays', 'gauge', 'Relays in the spider directory', st.directorySize);
  m('relays_reached_total', 'counter', 'Relays fetched successfully (ok or partial)', totals.relaysReached);
  m('relays_failed_total', 'counter', 'Relays that could not be fetched', totals.relaysFailed);
  for (const k of ['fetched', 'stored', 'duplicate', 'rejected', 'invalid', 'truncated', 'verified'] as const) {
    m(`events_${k}_total`, 'counter', `Events ${k} by the spider`, totals[k]);
  }
  m('received_bytes_total', 'counter', 'Bytes received from remote relays', totals.bytes);
  m('nip77_kinds_total', 'counter', 'Kinds of a relay reconciled with NIP-77 instead of paged', totals.nip77Kinds);
  m('nip77_fallbacks_total', 'counter', 'Kinds paged after a failed NIP-77 attempt', totals.nip77Fallbacks);
  m('nip77_ids_total', 'counter', 'Ids a relay had and the home lacked, learnt by NIP-77', totals.nip77Ids);
  if (st.lastRun) {
    m('last_run_timestamp_seconds', 'gauge', 'End of the last run', Math.floor(st.lastRun.finishedAt / 1000));
    m('last_run_duration_seconds', 'gauge', 'Duration of the last run', st.lastRun.durationMs / 1000);
  }
  if (st.nextRun !== null) m('next_run_timestamp_seconds', 'gauge', 'Start of the next scheduled run', Math.floor(st.nextRun / 1000));
  return out.toString();
}
