// What every crawl of a relay is given, built in one place for the three that crawl: the
// coordinator's runs (spider.ts), a queue worker's items (queue/worker.ts) and live mode's
// catch-up (live/live.ts).
import type { Config } from '../../config/schema.js';
import { pageBytes } from '../../config/spider.js';
export { pageBytes };
import type { EventStore } from '../../store/types.js';
import type { EventSink } from '../../ingest/sink.js';
import { MAX_PENDING_EVENTS, type CrawlOptions } from './crawl.js';
import { nothingKnown, storeKnown, type KnownCheck } from './admit.js';

export function crawlOptions(c: Config['spider']): CrawlOptions {
  return {
    pageSize: c.pageSize, idleTimeout: c.idleTimeout, pageDeadline: c.pageDeadline, maxPageBytes: pageBytes(c), maxEventBytes: c.maxEventBytes, maxEventsPerRelay: c.maxEventsPerRelay,
    rateLimitBackoff: c.rateLimitBackoff, maxRetries: c.maxRetries, splitBatch: c.splitBatch, maxSplitQueries: c.maxSplitQueries, maxStuckSlices: c.maxStuckSlices,
    lookback: Math.floor(c.lookback / 1000), connectTimeout: c.connectTimeout, relayBudget: c.relayBudget,
    maxRelayTagsPerList: c.maxRelayTagsPerList, subscriptionsPerRelay: c.subscriptionsPerRelay, allowPrivate: c.allowPrivate,
    maxPendingEvents: MAX_PENDING_EVENTS, negentropy: c.negentropy,
  };
}

/** What the home already holds: the remote sink's answer, or the store an in-process sink writes into. */
export function knownCheckFor(sink: EventSink, store: Pick<EventStore, 'precheck'> | undefined): KnownCheck {
  if (sink.known) return (evs) => sink.known!(evs);
  return sink.kind === 'ingest' && store ? storeKnown(store) : nothingKnown;
}
