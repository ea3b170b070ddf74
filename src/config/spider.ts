// Directory spider settings (issue: directory spider). Owned by src/spider; documented in docs/spider.md and docs/configuration.md.
import { z } from 'zod';
import { bool, duration, int, intList, pubkeyList, redisUrl, relayUrlList, secretKey, str } from './fields.js';

// Live mode (docs/spider.md "Live mode"): subscriptions kept open for the directory kinds on the
// relays that matter most, with catch-up after a disconnect. Bounds are per remote and in total.
const liveSchema = z
  .object({
    enabled: bool(true, 'with the spider on: keep live subscriptions (since = now, the directory kinds) open on the most valuable relays'),
    maxRelays: int(50, 'relays followed live at once (one connection each): ~50 suits a small VPS, thousands a big machine', 0, 100_000),
    generalShare: int(20, 'percent of maxRelays given to the big general relays (most events stored from them) before the write relays of the most pubkeys', 0, 100),
    // -1 by default: the live set is where the directory's pubkeys write, which may lie past spider.hops (hop.ts)
    maxHop: int(-1, 'bounds the relays live mode contacts (live set and outbox refresh) to those a crawl found at this hop or nearer (0 = the seeds\' own relays); relays no crawl placed (named only by lists beyond spider.hops, or found another way) count as beyond; -1 = no bound: the write relays of the most pubkeys are followed whatever their hop, also past spider.hops', -1, 10),
    refresh: duration('10m', 'time between two choices of the live set (also after each spider run)'),
    eventsPerSecond: int(50, 'events per second accepted from one live remote (burst: 10 s worth); beyond, the remote is cut off as a flood and caught up later', 1),
    bytesPerSecond: int(256 * 1024, 'bytes per second accepted from one live remote (burst: 10 s worth); beyond, cut off as a flood', 1024),
    maxPending: int(64, 'events from one live remote being checked and stored at once; beyond, cut off as a flood', 1, 10_000),
    maxFuture: duration('15m', 'an event dated further ahead than this is a lie: the remote is cut off'),
    reconnectBackoff: duration('2s', 'first wait before reconnecting a dropped live remote; doubles per failed attempt'),
    maxReconnectBackoff: duration('10m', 'longest wait between reconnect attempts'),
    hostileBackoff: duration('1h', 'wait before a remote cut off for lying or flooding is connected again (doubles per offence, up to 24 h)'),
    catchUpBudget: duration('2m', 'most time one catch-up (what a dropped remote sent while we were away) may take'),
    outboxInterval: duration('1h', 'outbox refresh: time between two rounds that fetch stale or uncrawled pubkeys\' directory events from their own write relays; 0 = off'),
    outboxStale: duration('7d', 'outbox refresh: a pubkey whose relay list is older than this is refreshed'),
    outboxPubkeys: int(1000, 'outbox refresh: most pubkeys refreshed per round', 0, 1_000_000),
    outboxBatch: int(100, 'outbox refresh: authors per REQ', 1, 1000),
    outboxRelaysPerPubkey: int(2, 'outbox refresh: write relays asked per pubkey', 1, 10),
  })
  .strict()
  .prefault({})
  .describe('live subscriptions for the directory kinds');

// Lookup on a miss (docs/spider.md "Lookup on a miss"): a REQ for the directory lists of authors
// the store lacks (or holds stale) makes the relay ask the authors' write relays, else the indexer
// and bootstrap relays, and deliver what it finds on the open subscription. Budgets per client
// address, per remote server and in total keep one REQ naming thousands of authors small.
const lookupSchema = z
  .object({
    enabled: z.enum(['auto', 'on', 'off']).default('auto').describe('lookup on a miss: auto = on whenever the spider is on (spider.enabled), on = also without the crawl, off = never'),
    wait: duration('2s', 'how long a REQ that started a lookup waits for it before its EOSE (what is found later still comes on the open subscription); 0 = EOSE at once'),
    waitStale: bool(false, 'also hold the EOSE for authors whose lists are held but stale (by default the stored version is the answer and a newer one found follows the EOSE)'),
    staleAge: duration('7d', 'a stored list older than this is looked up again (unless its author\'s write relays are followed live)'),
    remember: duration('15m', 'an author and kind looked up (found or not) is not looked up again for this long'),
    maxRemembered: int(100_000, 'authors and kinds remembered as looked up (the oldest are forgotten first)', 1, 10_000_000),
    indexerRelays: relayUrlList('relays (ws:// or wss://) asked for authors whose relay list is not known, besides spider.bootstrapRelays (indexers such as wss://purplepag.es)'),
    perAddress: int(300, 'authors one client address may have looked up per minute (a burst of as many); the rest of a REQ is answered from the store alone', 0, 1_000_000),
    maxPending: int(5000, 'authors being looked up at once, all clients together; beyond, the rest is answered from the store alone', 1, 1_000_000),
    maxConnections: int(8, 'connections to remote relays working at once for lookups (idle ones lingering for more asks hold no slot: at most as many again)', 1, 256),
    connectionsPerAddress: int(2, 'of those, connections opened for one client address\'s lookups at once (its other relays wait for one of its own, at most `timeout`): a few slow remotes named by one client cannot hold them all', 1, 256),
    connectionsPerHost: int(2, 'of those, connections to one remote host (host and port, whatever the path) at once', 1, 256),
    remoteReqsPerMinute: int(30, 'REQs sent to one remote server (host and port) per minute for lookups, all clients together (a burst of as many); asks beyond are not sent (and not remembered: a later REQ asks again)', 1, 10_000),
    hostConnectsPerMinute: int(30, 'connection attempts to one remote host (host and port, whatever the path) per minute for lookups, all clients together; asks that would need one more are not sent', 0, 10_000),
    connectsPerHost: int(4, 'connection attempts per minute to one remote host (host and port, whatever the path) that one client address\'s lookups may cause, charged before the attempt (0 = no limit)', 0, 10_000),
    connectsPerAddress: int(20, 'connection attempts per minute to remote relays that one client address\'s lookups may cause in all, charged before the attempt (0 = no limit)', 0, 100_000),
    reqsPerAddress: int(60, 'REQs per minute to remote relays that one client address\'s lookups may cause, charged when an ask starts a REQ (0 = no limit)', 0, 100_000),
    bytesPerAddress: int(64 << 20, 'bytes per minute the remote answers to one client address\'s lookups may bring, charged bytesPerList per author and kind asked before the REQ (0 = no limit)', 0),
    bytesPerList: int(16 << 10, 'bytes charged per author and kind asked of a remote: a REQ may bring what its asks were charged (at least one event of spider.maxEventBytes, at most spider.maxPageBytes), then it is cut', 256, 16 << 20),
    batch: int(100, 'authors per REQ to a remote relay', 1, 1000),
    relaysPerAuthor: int(3, 'write relays asked per author', 1, 20),
    timeout: duration('5s', 'connect and idle timeout of a lookup on one remote relay, and the longest wait for a connection slot'),
    deadline: duration('10s', 'most time one lookup REQ to a remote relay may take, whatever it sends; a remote cut by it is remembered as failed'),
    linger: duration('10s', 'an idle lookup connection stays open this long (socket paused, holding no connection slot) for more asks to its relay: a client looking up one author after another on one popular relay reuses it instead of costing new connection attempts; 0 = closed at once'),
    failureMemory: duration('5m', 'a remote host (host and port, whatever the path) that failed, answered nothing, dripped past the deadline or was cut off for lying or flooding is not connected to again by any lookup for this long'),
  })
  .strict()
  .prefault({})
  .describe('lookup on a miss');

export const spiderSchema = z
  .object({
    enabled: bool(false, 'run the directory spider inside the relay (env alias ORBWEAVER_SPIDER)').meta({ env: 'SPIDER' }),
    interval: duration('24h', 'time between spider runs'),
    hops: int(3, 'relay discovery hops beyond the seeds\' own relays', 0, 10),
    seeds: pubkeyList('seed pubkeys'),
    admins: pubkeyList('pubkeys whose kind 3 follows also become seeds'),
    bootstrapRelays: relayUrlList('relays (ws:// or wss://) asked for the seeds\' kind 10002 lists when the local store lacks them'),
    kinds: intList([0, 3, 10000, 10002, 10050, 10007, 10006, 10063, 10019, 62], 'kinds fetched completely from every discovered relay (and followed live): profiles, follows, mute lists, relay lists, DM relays, search relays, blocked relays, blob servers, nutzap info, requests to vanish (NIP-62: one made elsewhere to ALL_RELAYS applies here too)'),
    allLists: bool(false, 'also fetch (and follow live) the other replaceable lists of the 10000-19999 range that NIPs define (NIP-51 pins, bookmarks, communities, chats, interests, emojis, relay sets, wiki…), besides spider.kinds'),
    selfUrls: relayUrlList('our own public relay URLs, never crawled'),
    allowPrivate: bool(false, 'allow loopback, private and link-local relay addresses (tests)'),
    maxRelaysPerHop: int(500, 'most relays taken into each hop', 1),
    maxRelays: int(2000, 'most relays in one run', 1),
    maxRelayTagsPerList: int(200, 'kind 10002 lists with more r tags than this are ignored for discovery', 1),
    heapMb: int(256, 'V8 old-space limit (MB) of a standalone `orbweaver spider` or `orbweaver worker` process (it runs itself with --max-old-space-size, and --max-semi-space-size=2 unless NODE_OPTIONS sets one; node\'s defaults let a long crawl\'s heap grow to several times what is alive); 0 = node\'s defaults. Ignored when the flag is set in NODE_OPTIONS; the spider inside the relay shares the relay\'s heap', 0, 1_048_576),
    concurrency: int(4, 'relays fetched at the same time (politeness is per server: see pause)', 1, 64),
    pause: duration('500ms', 'pause between two fetches from the same server (host and port); other servers are fetched meanwhile'),
    connectTimeout: duration('10s', 'WebSocket connect timeout'),
    idleTimeout: duration('15s', 'a page with no event accepted for this long ends (relays that never send EOSE); events refused (forged, malformed, outside the filter) do not keep it open'),
    pageDeadline: duration('60s', 'most time one page (a REQ to a remote relay, read to its EOSE) may take, whatever the relay sends; a page cut by it is not the end: paging asks again from where it stopped. Also the deadline of each of sync\'s REQs by id'),
    maxPageBytes: int(8 << 20, 'most bytes of frames one page may bring from a remote relay (refused ones included) before it is cut; paging asks again from where it stopped. Unchecked events are held only a window at a time (500 events or 4 MiB), so this bounds what a page keeps. At least maxEventBytes', 256),
    relayBudget: duration('10m', 'most time spent on one relay in one run'),
    aliases: bool(true, 'recognise URLs of one server (host and port) that reach one relay under other paths by what they answer (the NIP-11 document and a small REQ), and crawl, list and monitor that relay once, its other URLs kept as aliases; off: every URL is crawled as a relay of its own'),
    aliasRecheck: duration('7d', 'a URL shown to be an alias is trusted without asking it again for this long; then its answers are compared again (a URL that answers differently is split off and crawled on its own); 0 = every run'),
    pageSize: int(500, 'limit asked per page (lowered to a relay\'s NIP-11 max_limit)', 1, 5000),
    maxEventsPerRelay: int(1_000_000, 'most events taken from one relay in one run', 1),
    // a list's limit and its envelope (limits.maxListEventBytes): the network's largest follow lists
    // are hundreds of KB, and a crawl that drops them loses the lists a web of trust leans on
    maxEventBytes: int(1024 * 1024 + 4096, 'largest event read from a remote relay, bytes (larger frames are dropped unread); the ingest path then applies limits.maxEventBytes, or limits.maxListEventBytes to lists, as to any event. Every read is also bounded by maxPageBytes', 256),
    subscriptionsPerRelay: int(4, 'subscriptions open at once on one relay (one per kind)', 1, 32),
    rateLimitBackoff: duration('2s', 'first pause after a rate-limited answer; doubles on each retry'),
    maxRetries: int(5, 'rate-limited answers tolerated per page before giving up on that kind', 0, 20),
    splitBatch: int(200, 'authors per query when splitting a second that holds more events than a page', 1, 1000),
    maxSplitQueries: int(200, 'most queries spent per relay on splitting such seconds', 0),
    maxStuckSlices: int(50, 'most stuck seconds split per kind and relay; further ones are counted as unproven (truncatedSlices) without a query', 0),
    failureBackoff: duration('1d', 'after two consecutive failures a relay waits this long, doubling per further failure'),
    maxFailureBackoff: duration('30d', 'longest wait for a failing relay'),
    lookback: duration('1h', 'overlap with the last cursor, for events that arrive late'),
    negentropy: z.enum(['listed', 'probe', 'off']).default('listed').describe('NIP-77 instead of paging, per kind, where the home\'s store is readable by this process: listed = relays whose NIP-11 lists 77 or that answered NEG-OPEN before; probe = also try every other relay once; off = always page'),
    redis: redisUrl('redis:// URL: share the crawl with workers through Redis (empty: in-process queue); a password in it is masked by orbweaver config'),
    queueKey: str('orbweaver:spider', 'Redis key prefix of the spider queue'),
    work: bool(true, 'with Redis: this relay also works queue items itself'),
    leaseTtl: duration('60s', 'with Redis: a leased item whose worker has not renewed its lease for this long goes back to pending (renewed every third of it)'),
    maxAttempts: int(3, 'with Redis: attempts per item (worker died, stalled, crashed or could not deliver) before it goes to the dead-letter list', 1, 100),
    workerKey: secretKey('orbweaver worker: secret key (hex or nsec) it authenticates with (NIP-42) to the home relay; keep it out of shared config'),
    workerPubkeys: pubkeyList('relay side: pubkeys of spider workers; once authenticated they are exempt from rate limits'),
    deliveryTimeout: duration('5m', 'orbweaver worker: how long it keeps retrying delivery of an event to the home relay before the attempt fails'),
    live: liveSchema,
    lookup: lookupSchema,
    // NIP-66 monitor, finder and validator (src/monitor; docs/monitor.md)
    monitor: bool(false, 'run the NIP-66 monitor: check every directory relay each monitorInterval, publish kind 30166/10166, validate relay candidates found in stored events'),
    monitorInterval: duration('1h', 'time between monitor cycles (every directory relay checked once per cycle); at least 1s').refine((v) => v >= 1000, 'expected at least 1s'),
    monitorKey: secretKey('secret key (hex or nsec) that signs the monitor\'s events; empty: one is generated once and kept in <dataDir>/monitor.key (mode 0600)'),
    monitorRelays: relayUrlList('relays the monitor also publishes its kind 30166/10166/0 events to (they always go through our own ingest path)'),
    monitorTimeout: duration('10s', 'timeout of each check of a relay (NIP-11, open, read, write), also announced in kind 10166; at least 100ms').refine((v) => v >= 100, 'expected at least 100ms'),
    monitorConcurrency: int(8, 'relays checked (or candidates validated) at the same time', 1, 64),
    monitorWrite: bool(false, 'also measure rtt-write: publish the monitor\'s kind 10166 announcement to relays whose NIP-11 does not require auth, payment or restrict writes'),
    monitorProbes: bool(true, 'probe what each online relay serves (NIP-50 search, NIP-77 NEG-OPEN, NIP-45 COUNT, NIP-42 AUTH, limits) with a few read-only messages, and publish N/T tags as observed rather than as NIP-11 claims (docs/monitor.md)'),
    monitorProbeBudget: duration('30s', 'most time the probes spend on one relay per check (each request also has monitorTimeout); at least 100ms').refine((v) => v >= 100, 'expected at least 100ms'),
    monitorRetention: duration('30d', 'check history kept per relay (uptime and RTT figures look back at most this far)'),
    finderKinds: intList([2, 3, 10002], 'stored kinds whose r tags name relay candidates (kind 3 and kind 2 content are read too; NIP-66 30166 of other monitors always)'),
    validateBatch: int(100, 'relay candidates validated per monitor cycle, least-failed and oldest first (0: none)', 0, 100_000),
    candidateMaxFailures: int(5, 'a candidate that failed validation this many times is dropped', 1, 1000),
    maxCandidates: int(100_000, 'most relay candidates kept waiting for validation', 1),
  })
  .strict()
  .prefault({})
  .describe('directory spider');

/** The bytes one page from a remote may bring: maxPageBytes, but never less than one event of the largest size and its frame. */
export const pageBytes = (c: { maxPageBytes: number; maxEventBytes: number }): number => Math.max(c.maxPageBytes, c.maxEventBytes + 1024);
