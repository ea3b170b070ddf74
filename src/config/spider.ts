// Directory spider settings (issue: directory spider). Owned by src/spider; documented in README.
import { z } from 'zod';
import { bool, duration, int, intList, str, strList } from './fields.js';

export const spiderSchema = z
  .object({
    enabled: bool(false, 'run the directory spider inside the relay (env alias ORBWEAVER_SPIDER)').meta({ env: 'SPIDER' }),
    interval: duration('24h', 'time between spider runs'),
    hops: int(3, 'relay discovery hops beyond the seeds\' own relays', 0, 10),
    seeds: strList([], 'seed pubkeys, hex or npub'),
    admins: strList([], 'pubkeys whose kind 3 follows also become seeds, hex or npub'),
    bootstrapRelays: strList([], 'relays asked for the seeds\' kind 10002 lists when the local store lacks them'),
    kinds: intList([0, 3, 10000, 10002], 'kinds fetched completely from every discovered relay'),
    selfUrls: strList([], 'our own public relay URLs, never crawled'),
    allowPrivate: bool(false, 'allow loopback, private and link-local relay addresses (tests)'),
    maxRelaysPerHop: int(500, 'most relays taken into each hop', 1),
    maxRelays: int(2000, 'most relays in one run', 1),
    maxRelayTagsPerList: int(200, 'kind 10002 lists with more r tags than this are ignored for discovery', 1),
    concurrency: int(4, 'relays fetched at the same time (politeness is per server: see pause)', 1, 64),
    pause: duration('500ms', 'pause between two fetches from the same server (host and port); other servers are fetched meanwhile'),
    connectTimeout: duration('10s', 'WebSocket connect timeout'),
    idleTimeout: duration('15s', 'a subscription silent this long ends its page (relays that never send EOSE)'),
    relayBudget: duration('10m', 'most time spent on one relay in one run'),
    pageSize: int(500, 'limit asked per page (lowered to a relay\'s NIP-11 max_limit)', 1, 5000),
    maxEventsPerRelay: int(1_000_000, 'most events taken from one relay in one run', 1),
    maxEventBytes: int(131072, 'largest event accepted from a remote relay, bytes', 256),
    subscriptionsPerRelay: int(4, 'subscriptions open at once on one relay (one per kind)', 1, 32),
    rateLimitBackoff: duration('2s', 'first pause after a rate-limited answer; doubles on each retry'),
    maxRetries: int(5, 'rate-limited answers tolerated per page before giving up on that kind', 0, 20),
    splitBatch: int(200, 'authors per query when splitting a second that holds more events than a page', 1, 1000),
    maxSplitQueries: int(200, 'most queries spent per relay on splitting such seconds', 0),
    maxStuckSlices: int(50, 'most stuck seconds split per kind and relay; further ones are counted as unproven (truncatedSlices) without a query', 0),
    failureBackoff: duration('1d', 'after two consecutive failures a relay waits this long, doubling per further failure'),
    maxFailureBackoff: duration('30d', 'longest wait for a failing relay'),
    lookback: duration('1h', 'overlap with the last cursor, for events that arrive late'),
    redis: str('', 'redis:// URL: share the crawl with workers through Redis (empty: in-process queue)'),
    queueKey: str('orbweaver:spider', 'Redis key prefix of the spider queue'),
    work: bool(true, 'with Redis: this relay also works queue items itself'),
    leaseTtl: duration('60s', 'with Redis: a leased item whose worker has not renewed its lease for this long goes back to pending (renewed every third of it)'),
    maxAttempts: int(3, 'with Redis: attempts per item (worker died, stalled, crashed or could not deliver) before it goes to the dead-letter list', 1, 100),
    workerKey: str('', 'orbweaver worker: secret key (hex or nsec) it authenticates with (NIP-42) to the home relay; keep it out of shared config'),
    workerPubkeys: strList([], 'relay side: pubkeys (hex or npub) of spider workers; once authenticated they are exempt from rate limits'),
    deliveryTimeout: duration('5m', 'orbweaver worker: how long it keeps retrying delivery of an event to the home relay before the attempt fails'),
  })
  .strict()
  .prefault({})
  .describe('directory spider');
