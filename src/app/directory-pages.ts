// The relay directory on the relay's HTTP port: the status page's table and /status.json (through
// the dashboard's DirectorySource), /directory (the page) and /directory.json (the document, or one
// relay's detail with ?relay=<url>) — all from the one row function of src/directory/view.ts,
// with the NIP-66 monitor's health where it has checked relays. The monitor, when it runs, also
// gets a status section and its /metrics lines. Wired by app.ts; the relay knows none of this.
import type { Config } from '../config.js';
import type { RelayHandle } from '../relay/server.js';
import type { RelayDirectory } from '../directory/records.js';
import type { SpiderStatus } from '../spider/index.js';
import { parseServes, rowOf, utc, type DirectoryView } from '../directory/view.js';
import type { Section } from '../relay/dashboard/status.js';
import { directorySource, type HealthSource } from './spider-section.js';
import type { SpiderRuns } from '../directory/runs.js';
import type { Monitor, MonitorMetrics, MonitorStatus } from '../monitor/monitor.js';
import type { Registry } from '../relay/metrics.js';
import { directoryDocument, healthLookups, openMonitorRecords, relayDetail, servingAnswer, type MonitorInfo } from '../monitor/document.js';
import { directoryPage } from '../monitor/page.js';
import { normalizeRelayUrl } from '../remote/url.js';
import type { LiveStatus } from '../spider/live/index.js';
import { liveHtml } from './live-section.js';

export function monitorInfo(config: Config, st: MonitorStatus | null): MonitorInfo {
  return {
    enabled: config.spider.monitor, pubkey: st?.pubkey ?? null, npub: st?.npub ?? null, intervalMs: config.spider.monitorInterval,
    cycles: st?.cycles ?? 0, running: st?.running ?? false, lastCycle: st?.lastCycle ?? null, nextCycle: st?.nextCycle ?? null,
  };
}

export function monitorSection(st: MonitorStatus, intervalMs: number): Section {
  const c = st.lastCycle;
  return {
    title: 'NIP-66 monitor',
    rows: [
      ['monitor pubkey', st.npub],
      ['phase', st.running ? 'checking relays' : 'idle'],
      ['relays checked', String(st.checked)],
      ['last cycle', c ? `${utc(c.finishedAt)}: ${c.checked} checked, ${c.online} online, ${c.published} kind 30166 published` : '-'],
      ['candidates waiting', String(st.candidates)],
      ['next cycle', st.running ? 'after this one' : `${utc(st.nextCycle)} (every ${Math.round(intervalMs / 60_000)} min)`],
      ['details', '/directory'],
    ],
  };
}

/** The monitor's figures in the relay's /metrics: gauges read on scrape, counters it increments. */
export function monitorMetrics(registry: Registry, status: () => MonitorStatus): MonitorMetrics {
  registry.gauge('orbweaver_monitor_running', '1 while a monitor cycle runs', () => (status().running ? 1 : 0));
  registry.gauge('orbweaver_monitor_relays_checked', 'relays with a NIP-66 health record', () => status().checked);
  registry.gauge('orbweaver_monitor_relays_online', 'relays online at the last monitor cycle', () => status().lastCycle?.online ?? 0);
  registry.gauge('orbweaver_monitor_candidates', 'relay candidates waiting for validation', () => status().candidates);
  return {
    cycles: registry.counter('orbweaver_monitor_cycles_total', 'monitor cycles finished'),
    checks: registry.counter('orbweaver_monitor_checks_total', 'relay checks, by result (online, offline)'),
    published: registry.counter('orbweaver_monitor_published_total', 'kind 30166 events stored by our ingest path'),
    probes: registry.counter('orbweaver_monitor_probes_total', 'probe outcomes by NIP (50, 45, 77) and outcome (served, refused, wrong, empty, silent, skipped)'),
  };
}

export function mountDirectory(relay: RelayHandle, o: { config: Config; directory: RelayDirectory; spiderStatus?: () => SpiderStatus; monitor?: Monitor; emptyHint?: string; runs?: SpiderRuns; live?: () => LiveStatus }): { cached(): DirectoryView } {
  const { config, monitor } = o;
  const records = monitor ? { history: monitor.history, candidates: monitor.candidates } : openMonitorRecords(relay.store.env, config.spider.monitorRetention);
  const health: HealthSource = {
    lookups: healthLookups(records.history),
    stamp: () => {
      const st = monitor?.status();
      // while a cycle runs the rows change with every check: at most every 10 s
      return st ? (st.running ? `m${st.cycles}:${Math.floor(Date.now() / 10_000)}` : `m${st.stamp}`) : 'm';
    },
  };
  const source = directorySource(o.directory, config, o.spiderStatus, health, o.runs);
  relay.setStatusDirectory(o.emptyHint ? { ...source, emptyHint: o.emptyHint } : source);
  const document = () => {
    const doc = directoryDocument(source.cached(), monitorInfo(config, monitor?.status() ?? null), records.candidates);
    return o.live ? { ...doc, live: o.live() } : doc;
  };
  relay.addPage('/directory', () => {
    const body = directoryPage(document(), config.info.name);
    // live mode's table, before the page's footer
    return { type: 'text/html; charset=utf-8', body: o.live ? body.replace('<footer>', `${liveHtml(o.live())}\n<footer>`) : body };
  });
  relay.addPage('/directory.json', (query) => {
    const asked = query.get('relay');
    const nip = query.get('serves');
    if (nip !== null) {
      const n = parseServes(nip);
      if (n === null) return { status: '400 Bad Request', type: 'application/json', body: JSON.stringify({ error: 'serves: a NIP number (50, 45, 77, 42) or search, count, negentropy' }) };
      return { type: 'application/json', body: JSON.stringify(servingAnswer(source.cached(), n)) };
    }
    if (asked === null) return { type: 'application/json', body: JSON.stringify(document()) };
    const url = normalizeRelayUrl(asked) ?? asked;
    // an alias answers with the relay it reaches
    const row = rowOf(source.cached(), url) ?? null;
    if (!row) return { status: '404 Not Found', type: 'application/json', body: JSON.stringify({ error: `not in the relay directory: ${asked.slice(0, 200)}` }) };
    return { type: 'application/json', body: JSON.stringify(relayDetail(row.url, row, records.history)) };
  });
  if (monitor) relay.addStatusSection(() => monitorSection(monitor.status(), config.spider.monitorInterval));
  return source;
}
