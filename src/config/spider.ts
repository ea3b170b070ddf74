// Directory spider settings (issue: directory spider). Owned by src/spider; documented in README.
import { z } from 'zod';
import { bool, duration, int, intList, pubkeyList, redisUrl, relayUrlList, secretKey, str } from './fields.js';

export const spiderSchema = z
  .object({
    enabled: bool(false, 'run the directory spider inside the relay (env alias ORBWEAVER_SPIDER)').meta({ env: 'SPIDER' }),
    interval: duration('24h', 'time between spider runs'),
    hops: int(3, 'relay discovery hops beyond the seeds\' own relays', 0, 10),
    seeds: pubkeyList('seed pubkeys'),
    admins: pubkeyList('pubkeys whose kind 3 follows also become seeds'),
    bootstrapRelays: relayUrlList('relays (ws:// or wss://) asked for the seeds\' kind 10002 lists when the local store lacks them'),
    kinds: intList([0, 3, 10000, 10002], 'kinds fetched completely from every discovered relay'),
    selfUrls: relayUrlList('our own public relay URLs, never crawled'),
    allowPrivate: bool(false, 'allow loopback, private and link-local relay addresses (tests)'),
    maxRelaysPerHop: int(500, 'most relays taken into each hop', 1),
    maxRelays: int(2000, 'most relays in one run', 1),
    maxRelayTagsPerList: int(200, 'kind 10002 lists with more r tags than this are ignored for discovery', 1),
    concurrency: int(1, 'relays fetched at the same time', 1, 64),
    pause: duration('500ms', 'pause between relays'),
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
    failureBackoff: duration('1d', 'after two consecutive failures a relay waits this long, doubling per further failure'),
    maxFailureBackoff: duration('30d', 'longest wait for a failing relay'),
    lookback: duration('1h', 'overlap with the last cursor, for events that arrive late'),
    redis: redisUrl('redis:// URL: share the crawl with workers through Redis (empty: in-process queue); a password in it is masked by orbweaver config'),
    queueKey: str('orbweaver:spider', 'Redis key prefix of the spider queue'),
    work: bool(true, 'with Redis: this relay also works queue items itself'),
    leaseTtl: duration('60s', 'with Redis: a leased item whose worker has not renewed its lease for this long goes back to pending (renewed every third of it)'),
    maxAttempts: int(3, 'with Redis: attempts per item (worker died, stalled, crashed or could not deliver) before it goes to the dead-letter list', 1, 100),
    workerKey: secretKey('orbweaver worker: secret key (hex or nsec) it authenticates with (NIP-42) to the home relay; keep it out of shared config'),
    workerPubkeys: pubkeyList('relay side: pubkeys of spider workers; once authenticated they are exempt from rate limits'),
    deliveryTimeout: duration('5m', 'orbweaver worker: how long it keeps retrying delivery of an event to the home relay before the attempt fails'),
    // NIP-66 monitor, finder and validator (src/monitor; docs/monitor.md)
    monitor: bool(false, 'run the NIP-66 monitor: check every directory relay each monitorInterval, publish kind 30166/10166, validate relay candidates found in stored events'),
    monitorInterval: duration('1h', 'time between monitor cycles (every directory relay checked once per cycle); at least 1s').refine((v) => v >= 1000, 'expected at least 1s'),
    monitorKey: secretKey('secret key (hex or nsec) that signs the monitor\'s events; empty: one is generated once and kept in <dataDir>/monitor.key (mode 0600)'),
    monitorRelays: relayUrlList('relays the monitor also publishes its kind 30166/10166/0 events to (they always go through our own ingest path)'),
    monitorTimeout: duration('10s', 'timeout of each check of a relay (NIP-11, open, read, write), also announced in kind 10166; at least 100ms').refine((v) => v >= 100, 'expected at least 100ms'),
    monitorConcurrency: int(8, 'relays checked (or candidates validated) at the same time', 1, 64),
    monitorWrite: bool(false, 'also measure rtt-write: publish the monitor\'s kind 10166 announcement to relays whose NIP-11 does not require auth, payment or restrict writes'),
    monitorRetention: duration('30d', 'check history kept per relay (uptime and RTT figures look back at most this far)'),
    finderKinds: intList([2, 3, 10002], 'stored kinds whose r tags name relay candidates (kind 3 and kind 2 content are read too; NIP-66 30166 of other monitors always)'),
    validateBatch: int(100, 'relay candidates validated per monitor cycle, least-failed and oldest first (0: none)', 0, 100_000),
    candidateMaxFailures: int(5, 'a candidate that failed validation this many times is dropped', 1, 1000),
    maxCandidates: int(100_000, 'most relay candidates kept waiting for validation', 1),
  })
  .strict()
  .prefault({})
  .describe('directory spider');
