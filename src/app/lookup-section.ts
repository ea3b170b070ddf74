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
      ['stale, followed live', String(s.coveredLive)],
      ['remote relays', `${s.remoteReqs} REQs on ${s.connections} connections (${s.openConnections} open), ${s.failures} failed`],
      ['events stored / invalid', `${s.eventsStored} / ${s.eventsInvalid}`],
      ['wait before EOSE', s.waitMs > 0 ? `${s.waitMs} ms` : 'none (EOSE at once)'],
    ],
  };
}

export function lookupMetricsText(s: LookupStatus): string {
  return new MetricsText()
    .metric('orbweaver_lookup_requests_total', 'counter', 'lookup requests that started or joined a lookup on a miss (a REQ with both absent and stale authors makes two)', s.requests)
    .metric('orbweaver_lookup_authors_total', 'counter', 'authors looked up on the network', s.authors)
    .metric('orbweaver_lookup_found_total', 'counter', 'authors looked up with at least one list found', s.found)
    .metric('orbweaver_lookup_missed_total', 'counter', 'authors looked up and found nowhere', s.missed)
    .metric('orbweaver_lookup_remembered', 'gauge', 'authors and kinds remembered as looked up recently', s.remembered)
    .metric('orbweaver_lookup_in_flight', 'gauge', 'authors and kinds being looked up', s.inFlight)
    .samples('orbweaver_lookup_refused_total', 'counter', 'authors (address, busy) or asks (remote) left out by a budget',
      [['{budget="address"}', s.refusedAddress], ['{budget="busy"}', s.refusedBusy], ['{budget="remote"}', s.refusedRemote]])
    .metric('orbweaver_lookup_remote_reqs_total', 'counter', 'REQs sent to remote relays for lookups', s.remoteReqs)
    .metric('orbweaver_lookup_connections_total', 'counter', 'connections opened to remote relays for lookups', s.connections)
    .metric('orbweaver_lookup_events_stored_total', 'counter', 'events found by lookups and stored', s.eventsStored)
    .toString();
}
