// The lookup on a miss on the relay's pages: a status-page section (lookups, found, misses
// remembered, budget refusals) and its /metrics lines; and its wiring into the relay's REQ handler.
// Read from the lookup's status; nothing is kept here.
import type { Config } from '../config.js';
import type { Section } from '../relay/dashboard/status.js';
import type { RelayHandle } from '../relay/server.js';
import type { Logger } from '../lib/logger.js';
import type { Pipeline } from './pipeline.js';
import { RelayDirectory } from '../directory/records.js';
import { ingestSink } from '../ingest/sink.js';
import { createLookup, type Lookup, type LookupStatus } from '../spider/lookup/index.js';
import type { Live } from '../spider/live/index.js';
import { MetricsText } from '../lib/prometheus-text.js';

/** On whenever the spider is on (`auto`), or on without the crawl (`on`), or never (`off`). */
export const lookupEnabled = (c: Config['spider']): boolean => c.lookup.enabled === 'on' || (c.lookup.enabled === 'auto' && c.enabled);

/** Starts the lookup and hands it to the relay's REQ handler and pages; undefined when it is off. */
export function startLookup(config: Config, logger: Logger, pipeline: Pipeline, relay: RelayHandle, o: { directory?: RelayDirectory; live?: Live; selfUrls: string[] }): Lookup | undefined {
  if (!lookupEnabled(config.spider)) return undefined;
  const live = o.live;
  let liveSet: { at: number; urls: Set<string> } | null = null;
  const lookup = createLookup({
    config: config.spider, store: pipeline.store, sink: ingestSink(pipeline.ingest), log: logger, selfUrls: o.selfUrls,
    directory: o.directory ?? new RelayDirectory(pipeline.store.env),
    // the relays live mode follows, read at most once a second
    liveRelays: live ? () => {
      if (!liveSet || Date.now() - liveSet.at > 1000) liveSet = { at: Date.now(), urls: new Set(live.status().remotes.filter((r) => r.state === 'live').map((r) => r.url)) };
      return liveSet.urls;
    } : undefined,
  });
  relay.setLookup(lookup);
  relay.addStatusSection(() => lookupSection(lookup.status()));
  relay.addMetricsText(() => lookupMetricsText(lookup.status()));
  logger.info({ wait: config.spider.lookup.wait, spider: config.spider.enabled }, 'lookup on a miss: on');
  return lookup;
}

export function lookupSection(s: LookupStatus): Section {
  return {
    title: 'Lookup on a miss',
    rows: [
      ['lookups', `${s.requests} requests; ${s.authors} authors looked up: ${s.found} found, ${s.missed} found nowhere; ${s.inFlight} in flight`],
      ['remembered', `${s.remembered} authors and kinds (not looked up again for a while)`],
      ['refused by budgets', `${s.refusedAddress} per address, ${s.refusedBusy} too many at once, ${s.refusedRemote} per remote relay`],
      ['refused by cost', refusedByCost(s)],
      ['stale, followed live', String(s.coveredLive)],
      ['remote relays', `${s.remoteReqs} REQs on ${s.connections} connections (${s.openConnections} open) of ${s.attempts} attempts, ${s.failures} failed; ${s.bytes} bytes received; ${s.hostsDown} hosts remembered as failed`],
      ['remote pages cut', `${s.cut.hostile} lying, ${s.cut.flood} flooding, ${s.cut.deadline} past the deadline, ${s.cut.silent} silent, ${s.cut.bytes} at their bytes`],
      ['events stored / invalid', `${s.eventsStored} / ${s.eventsInvalid}`],
      ['wait before EOSE', s.waitMs > 0 ? `${s.waitMs} ms` : 'none (EOSE at once)'],
    ],
  };
}

/** Asks not sent because of what they would have cost, by budget (docs/spider.md "Lookup on a miss", Bounds). */
function refusedByCost(s: LookupStatus): string {
  const r = s.refusedCost;
  return `connection attempts: ${r.connects_host} per address and host, ${r.connects_address} per address, ${r.host_connects} per host; ` +
    `REQs: ${r.reqs_address} per address; bytes: ${r.bytes_address} per address; ${r.host_down} to hosts remembered as failed; ${r.slots} without a connection slot`;
}

export function lookupMetricsText(s: LookupStatus): string {
  return new MetricsText()
    .metric('orbweaver_lookup_requests_total', 'counter', 'lookup requests that started or joined a lookup on a miss (a REQ with both absent and stale authors makes two)', s.requests)
    .metric('orbweaver_lookup_authors_total', 'counter', 'authors looked up on the network', s.authors)
    .metric('orbweaver_lookup_found_total', 'counter', 'authors looked up with at least one list found', s.found)
    .metric('orbweaver_lookup_missed_total', 'counter', 'authors looked up and found nowhere', s.missed)
    .metric('orbweaver_lookup_remembered', 'gauge', 'authors and kinds remembered as looked up recently', s.remembered)
    .metric('orbweaver_lookup_in_flight', 'gauge', 'authors and kinds being looked up', s.inFlight)
    .samples('orbweaver_lookup_refused_total', 'counter', 'authors (address, busy) or asks (the others: what they would cost other relays) left out by a budget',
      [['{budget="address"}', s.refusedAddress], ['{budget="busy"}', s.refusedBusy], ['{budget="remote"}', s.refusedRemote],
        ...(Object.entries(s.refusedCost) as Array<[string, number]>).filter(([k]) => k !== 'host_reqs').map(([k, v]): [string, number] => [`{budget="${k}"}`, v])])
    .metric('orbweaver_lookup_remote_reqs_total', 'counter', 'REQs sent to remote relays for lookups', s.remoteReqs)
    .metric('orbweaver_lookup_connection_attempts_total', 'counter', 'connection attempts to remote relays for lookups (each charged to the client address first)', s.attempts)
    .metric('orbweaver_lookup_connections_total', 'counter', 'connections opened to remote relays for lookups', s.connections)
    .metric('orbweaver_lookup_received_bytes_total', 'counter', 'bytes received from remote relays for lookups', s.bytes)
    .samples('orbweaver_lookup_pages_cut_total', 'counter', 'lookup REQs whose page a remote ended early: forged or malformed events (hostile), more than the limit (flood), past the deadline, silent, at the bytes charged',
      (Object.entries(s.cut) as Array<[string, number]>).map(([k, v]): [string, number] => [`{reason="${k}"}`, v]))
    .metric('orbweaver_lookup_hosts_down', 'gauge', 'remote hosts remembered as failed (not connected to for spider.lookup.failureMemory)', s.hostsDown)
    .metric('orbweaver_lookup_events_stored_total', 'counter', 'events found by lookups and stored', s.eventsStored)
    .toString();
}
