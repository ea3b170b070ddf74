// What the status page shows, as one JSON document (GET /status.json; the page embeds the first
// one and polls for the next): the relay's figures with rates over the last minute, the last hour
// as chart series (sampler.ts), refusals by reason and verb (policy/refusals.ts), the access figures,
// sections other modules add (the spider's progress) and the relay directory. The relay knows
// nothing of the spider: src/app gives it the sections and the directory as functions.
import type { Config } from '../../config.js';
import type { Counter, RelayMetrics } from '../metrics.js';
import type { RefusalCounts, RefusalLog } from '../policy/refusals.js';
import { Sampler, type Series, type Window } from './sampler.js';
import { VERSION } from '../version.js';
import { dashboardPage } from './page.js';
import { challengeMode } from '../../config/policy.js';
import type { DiskState } from '../../lib/disk-guard.js';

export interface Section { title: string; rows: Array<[string, string]> }

/** The relay directory as src/app provides it: `stamp` changes whenever `view` would change. */
export interface DirectorySource {
  stamp(): string;
  /** JSON-able rows (src/directory/view.ts DirectoryView) */
  view(): unknown;
  /** shown instead of an empty table: how to fill the directory (the spider is off) */
  emptyHint?: string;
}

export interface DashboardData {
  name: string;
  description: string;
  version: string;
  /** ms since epoch */
  now: number;
  startedAt: number;
  /** publicUrl when set; the page otherwise shows the address it was loaded from */
  publicUrl: string | null;
  /** ws://host:port the relay listens on (host as configured, e.g. 0.0.0.0) */
  listenUrl: string;
  relay: {
    connections: number;
    subscriptions: number;
    /** events in the store, and its size */
    events: number;
    storeBytes: number;
    /** free space against the write reserve; full: writes are refused (lib/disk-guard.ts) */
    disk: DiskState | null;
    /** since start: events stored (every source), by source; duplicates (already stored, OK true) */
    stored: number;
    storedBySource: Record<string, number>;
    duplicates: number;
    /** since start: EVENTs refused (OK false), and every refusal sent (all verbs) */
    refused: number;
    refusals: number;
    uptimeSeconds: number;
  };
  /** the last minute: per-second rates (stored, refused, reqs, deliveries), query latency in ms */
  recent: Window;
  /** the last hour, one point per sampler step */
  series: Series;
  access: Record<string, number>;
  /** NIP-42: what needs AUTH (auth.required) and when the challenge is sent */
  auth: { required: string; challenge: 'connect' | 'on-demand' };
  refusals: RefusalCounts;
  sections: Section[];
  /** changes whenever `directory` would; the page refetches the directory only then */
  directoryStamp: string | null;
  /** omitted with ?directory=0 */
  directory?: unknown;
  /** what the page says when the directory is empty (the spider is off: how to turn it on) */
  directoryHint: string | null;
}

export interface DashboardDeps {
  config: Config;
  metrics: RelayMetrics;
  refusals: RefusalLog;
  access: () => Record<string, number>;
  connections: () => number;
  subscriptions: () => number;
  store: () => { events: number; bytes: number; disk: DiskState | null };
  listenUrl: () => string;
}

export interface Dashboard {
  addSection(fn: () => Section): void;
  setDirectory(source: DirectorySource | undefined): void;
  /** /status.json; `directory=0` leaves the directory out (the page polls without it) */
  json(query?: URLSearchParams): string;
  page(): string;
  stop(): void;
}

const sum = (c: Counter) => c.entries().reduce((a, [, n]) => a + n, 0);

/** The `source` label's value in a Counter entry key (`source="client"`). */
const labelValue = (key: string) => /="([^"]*)"/.exec(key)?.[1] ?? key;

export function createDashboard(d: DashboardDeps): Dashboard {
  const started = Date.now();
  const sections: Array<() => Section> = [];
  let directory: DirectorySource | undefined;
  const sampler = new Sampler({
    counters: {
      stored: () => sum(d.metrics.eventsStored),
      refused: () => d.refusals.count('EVENT'),
      reqs: () => d.metrics.reqs.get(),
      deliveries: () => d.metrics.deliveries.get(),
    },
    gauges: { connections: d.connections, subscriptions: d.subscriptions },
    histograms: { query: () => d.metrics.queryLatency.snapshot() },
  });
  sampler.start();

  const data = (withDirectory: boolean): DashboardData => {
    const now = Date.now();
    const store = d.store();
    const out: DashboardData = {
      name: d.config.info.name,
      description: d.config.info.description,
      version: VERSION,
      now,
      startedAt: started,
      publicUrl: d.config.publicUrl || null,
      listenUrl: d.listenUrl(),
      relay: {
        connections: d.connections(),
        subscriptions: d.subscriptions(),
        events: store.events,
        storeBytes: store.bytes,
        disk: store.disk,
        stored: sum(d.metrics.eventsStored),
        storedBySource: Object.fromEntries(d.metrics.eventsStored.entries().map(([k, n]) => [labelValue(k), n])),
        duplicates: d.metrics.eventsRejected.get({ reason: 'duplicate' }),
        refused: d.refusals.count('EVENT'),
        refusals: d.refusals.total,
        uptimeSeconds: Math.round((now - started) / 1000),
      },
      recent: sampler.window(now),
      series: sampler.series(now),
      access: d.access(),
      auth: { required: d.config.auth.required, challenge: challengeMode(d.config.auth) },
      refusals: d.refusals.snapshot(),
      sections: sections.map((f) => f()),
      directoryStamp: directory ? directory.stamp() : null,
      directoryHint: directory?.emptyHint ?? null,
    };
    if (withDirectory && directory) out.directory = directory.view();
    return out;
  };

  return {
    addSection: (fn) => { sections.push(fn); },
    setDirectory: (source) => { directory = source; },
    json: (query) => JSON.stringify(data(query?.get('directory') !== '0')),
    page: () => dashboardPage(data(true)),
    stop: () => sampler.stop(),
  };
}
