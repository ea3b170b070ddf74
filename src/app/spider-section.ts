// The spider on the status page: its progress as a section (phase, hop, relays done / failed this
// run, events, runs) and the relay directory as a cached source for the table and /status.json.
// The directory rows come from src/directory/view.ts, the same function `orbweaver
// directory` uses; what only the running spider knows (the relays being fetched, the next run)
// is added here.
import type { SpiderStatus } from '../spider/index.js';
import type { Config } from '../config.js';
import type { RelayDirectory } from '../directory/records.js';
import { directoryView, utc, type DirectoryView, type ViewContext } from '../directory/view.js';
import type { RunRecord, SpiderRuns } from '../directory/runs.js';
import type { DirectorySource, Section } from '../relay/dashboard/status.js';

/** The monitor's part of the rows: its health lookups, and a stamp that changes with its records. */
export interface HealthSource {
  lookups: Pick<ViewContext, 'health' | 'eventsByKind'>;
  stamp(): string;
}

/** Directory rows, rebuilt only when the stamp changes (`spider --once` may write beside us: at least once a minute). */
export function directorySource(directory: RelayDirectory, config: Config, status?: () => SpiderStatus, health?: HealthSource, runs?: SpiderRuns): DirectorySource & { cached(): DirectoryView } {
  let cache: { stamp: string; view: DirectoryView } | null = null;
  // during a run the rows change with every relay: at most every 10 s, so a page left open does
  // not fetch a large directory every poll; between runs once a minute
  const stamp = () => {
    const s = status?.();
    const now = Date.now();
    // a run recorded by `orbweaver spider` beside the relay changes the rows at once
    const h = (health ? `:${health.stamp()}` : '') + (runs ? `:r${runs.count()}` : '');
    return (s?.running ? `run:${s.runs}:${Math.floor(now / 10_000)}` : `idle:${s?.runs ?? 0}:${s?.nextRun ?? 0}:${Math.floor(now / 60_000)}`) + h;
  };
  const cached = () => {
    const st = stamp();
    if (cache?.stamp !== st) {
      const s = status?.();
      cache = {
        stamp: st,
        view: directoryView(directory.all(), {
          now: Date.now(),
          backoff: { base: config.spider.failureBackoff, max: config.spider.maxFailureBackoff },
          crawling: s?.current ?? [],
          nextRun: s?.nextRun ?? null,
          ...health?.lookups,
        }),
      };
    }
    return cache.view;
  };
  return { stamp, view: cached, cached };
}

/** The latest run as the directory recorded it, whoever made it (this relay or `orbweaver spider`). */
export function lastRunText(last: RunRecord | null): string {
  if (!last) return '-';
  return `${utc(last.finishedAt)} by ${last.by}${last.aborted ? ' (stopped early)' : ''}: ${last.relays.reached} reached, ${last.relays.failed} failed, ${last.relays.refused} refused, ${last.stored} events stored`;
}

/** Unless the spider runs in this relay, the section says so and how to run it; the runs recorded still show. */
export function spiderOffSection(view: DirectoryView, runs: SpiderRuns): Section {
  return {
    title: 'Directory spider',
    rows: [
      ['phase', `off in this relay: ${SPIDER_HINT}`],
      ['relays in the directory', String(view.total)],
      ['runs', String(runs.count())],
      ['last run', lastRunText(runs.last())],
    ],
  };
}

/** How to turn the spider on, as the status page and /directory say it. */
export const SPIDER_HINT = 'ORBWEAVER_SPIDER=1 (spider.enabled) runs it here, or orbweaver spider --once crawls once beside the relay';

export function spiderSection(s: SpiderStatus, view: DirectoryView, problem: string | null, runs?: SpiderRuns): Section {
  // the directory's record: runs made beside the relay (`orbweaver spider --once`) count too
  const recorded = runs?.last() ?? null;
  const last = s.lastRun;
  // this run's relays: those attempted since the previous run finished
  const since = last?.finishedAt ?? 0;
  const thisRun = s.running ? view.rows.filter((r) => r.lastCrawl !== null && r.lastCrawl >= since && r.state !== 'crawling') : [];
  const count = (...states: string[]) => thisRun.filter((r) => states.includes(r.state)).length;
  const rows: Array<[string, string]> = [];
  if (problem) rows.push(['problem', problem]);
  rows.push(
    ['phase', s.running ? `${s.phase}${s.hop >= 0 ? `, hop ${s.hop} (hops 0–${s.maxHops})` : ''}` : 'idle'],
    ['relays this run', s.running ? `${s.relaysDoneRun} done: ${count('ok')} ok, ${count('partial')} partial, ${count('failed', 'backoff')} failed; this hop ${s.relaysDone} / ${s.relaysTotal}` : '-'],
    ['fetching now', s.current.join(', ') || '-'],
    ['events fetched / stored', s.running || !recorded ? `${s.events.fetched} / ${s.events.stored}${s.running ? ' (this run)' : ' (last run)'}` : `${recorded.fetched} / ${recorded.stored} (last run)`],
    ['relays in the directory', String(view.total)],
    ['runs', String(runs ? runs.count() : s.runs)],
    ['last run', runs ? lastRunText(recorded) : last ? `${utc(last.finishedAt)}: ${last.relays.reached} reached, ${last.relays.failed} failed, ${last.events.stored} events stored` : '-'],
    ['next run', s.running ? 'after this one' : utc(s.nextRun)],
  );
  return { title: 'Directory spider', rows };
}
