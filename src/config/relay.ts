// Core relay settings: listening, store, limits (advertised in NIP-11), relay information.
import { z } from 'zod';
import { bool, duration, int, pubkey, relayUrl, str } from './fields.js';

export const infoSchema = z
  .object({
    name: str('orbweaver', 'relay name shown in NIP-11 and on the status page'),
    description: str('A Nostr relay with a built-in directory spider', 'relay description (NIP-11)'),
    pubkey: pubkey('operator pubkey (NIP-11 pubkey, published as hex)'),
    self: pubkey('the relay\'s own pubkey, apart from its operator\'s: events it publishes with its own key (NIP-11 self, published as hex)'),
    contact: str('', 'operator contact, e.g. mailto: or a URL (NIP-11)'),
    icon: str('', 'URL of an icon (NIP-11)'),
    banner: str('', 'URL of a banner image (NIP-11)'),
    termsOfService: str('', 'URL of the terms of service (NIP-11 terms_of_service)'),
    // NIP-11 dropped posting_policy (nostr-protocol/nips b914aef, 2026-02); its text called the page
    // "detail and legal terms", which is what terms_of_service now names: an existing setting keeps working
    postingPolicy: str('', 'URL of the posting policy: published as NIP-11 terms_of_service when info.termsOfService is unset (NIP-11 no longer has posting_policy)'),
  })
  .strict()
  .prefault({})
  .describe('NIP-11 relay information');

export const limitsSchema = z
  .object({
    maxMessageLength: int(131072, 'largest WebSocket message accepted, bytes; an EVENT may be as large as maxListEventBytes allows a list', 1024),
    maxEventBytes: int(65536, 'largest event accepted, bytes of its JSON (lists: maxListEventBytes)', 256),
    // the network's largest follow lists are hundreds of KB (5,000 people: ~350 KB) and belong to the
    // people who follow the most, whom a web of trust leans on: refusing them loses the directory's core
    maxListEventBytes: int(1024 * 1024, 'largest list accepted (follow lists, kind 3, and the replaceable lists 10000-19999), bytes of its JSON; from clients, the spider, sync and import alike. An EVENT message may be this large (and 4 KiB), every other message meets maxMessageLength (NIP-11 max_message_length says the larger)', 256),
    maxListEventTags: int(20_000, 'most tags on one list (kinds 3 and 10000-19999); other events meet maxEventTags (NIP-11 max_event_tags says the larger)', 0),
    maxContentLength: int(65536, 'longest content accepted, characters (NIP-11 max_content_length)', 0),
    maxEventTags: int(2000, 'most tags on one event other than a list (lists: maxListEventTags)', 0),
    maxTagValueLength: int(4096, 'longest single tag value, characters; a longer one is refused invalid:', 64),
    maxSubscriptions: int(200, 'open subscriptions per connection (NIP-11 max_subscriptions)', 1),
    maxFilters: int(20, 'filters in one REQ or COUNT', 1),
    maxFilterValues: int(5000, 'values in one filter list (ids, authors, kinds, one tag)', 1),
    // Per-client memory (docs/security.md): what a client's filters hold in the live index and in
    // waiting COUNTs is charged to its connection and to its address (IPv6: its /64), each filter
    // counting one plus its values, so no number of connections or REQs buys more than this.
    maxValuesPerReq: int(10_000, 'filter values in one REQ or COUNT, all lists of all its filters together; more: CLOSED restricted:', 1),
    maxValuesPerConnection: int(25_000, 'filter values held by one connection (open subscriptions and waiting COUNTs; each filter counts 1 + its values); more: CLOSED rate-limited:', 1),
    maxValuesPerIp: int(100_000, 'the same for all connections of one IP address (IPv6: one /64); more: CLOSED rate-limited:', 1),
    maxFiltersPerIp: int(2_000, 'filters of open subscriptions of one IP address (IPv6: one /64); every published event may be checked against each, so this bounds what one client adds to every publish; more: CLOSED rate-limited:', 1),
    maxLimit: int(500, 'largest limit honoured for a scan; larger limits are clamped (NIP-11 max_limit). A lookup (ids; authors with replaceable kinds; addressable kinds with #d) is answered whole instead, and one REQ returns at most maxLimit x maxFilters events (NIP-11 max_lookup_limit; docs/queries.md)', 1),
    defaultLimit: int(500, 'limit applied to a scan filter without one (NIP-11 default_limit); a lookup without one gets its own size', 1),
    maxSubIdLength: int(64, 'longest subscription id (NIP-11 max_subid_length)', 1, 1024),
    createdAtFutureSeconds: int(900, 'refuse events dated more than this far in the future (NIP-11 created_at_upper_limit)', 0),
    createdAtPastSeconds: int(0, 'refuse events older than this many seconds; 0 = no lower limit (NIP-11 created_at_lower_limit)', 0),
    maxBufferedBytes: int(8 * 1024 * 1024, 'a connection whose unsent output exceeds this is closed (slow reader); a REQ answer larger than this is let through while it drains', 65536),
    maxBufferedBytesPerIp: int(64 * 1024 * 1024, 'unsent output of all connections of one IP address (IPv6: one /64) together; past it the one holding most is closed (slow reader)', 65536),
    idleTimeout: duration('10m', 'close connections silent this long'),
    pageSnapshot: duration('1s', 'the heavy HTTP pages (/, /status.json, /metrics, /directory, /directory.json) are built at most this often and served from that snapshot meanwhile; 0 = built for every request'),
  })
  .strict()
  .prefault({})
  .describe('limits, enforced and advertised in NIP-11 limitation');

type Limits = z.infer<typeof limitsSchema>;

/** The largest list accepted, bytes: never below what any other event may be. */
export const listEventBytes = (l: Limits): number => Math.max(l.maxEventBytes, l.maxListEventBytes);
/** The most tags on a list: never below what any other event may carry. */
export const listEventTags = (l: Limits): number => Math.max(l.maxEventTags, l.maxListEventTags);
/** The largest EVENT message read (a list and its envelope); every other message meets maxMessageLength. */
export const maxEventMessageLength = (l: Limits): number => Math.max(l.maxMessageLength, listEventBytes(l) + 4096);

export const storeSchema = z
  .object({
    mapSize: int(64 * 1024 ** 3, 'LMDB map size, bytes (address space, not disk)', 1024 ** 2),
    maxBatch: int(1000, 'most events written in one LMDB transaction', 1),
    maxBatchTime: duration('0', 'how long one LMDB write transaction may spend applying events before it commits what it has; 0 = no bound. With store.writerThread false it runs on the main thread, which answers no connection meanwhile: a bound shortens those pauses in a deep store and costs ingest rate (docs/storage.md, "The main-thread pause")'),
    expirySweep: duration('30s', 'how often expired events (NIP-40) are deleted'),
    queryYieldEvery: int(2000, 'index entries a scan reads before yielding to other connections', 16),
    answerCache: int(128 * 1024 ** 2, 'bytes of large REQ answers (64 KiB and more, asked at least twice) each query thread keeps and gives again while no event added since matches the REQ and none in the answer was removed; 0 = every REQ is scanned (docs/storage.md, "Answers kept")', 0),
    minFreeBytes: int(256 * 1024 ** 2, 'writes are refused (OK false, "error: the relay\'s disk is full ...") while the data directory\'s file system has less than this free, and resume by themselves when it has more: a full disk would otherwise fail each write transaction as it commits (docs/operating.md, "A full disk"). It must cover one write transaction (a few MiB usually, 250 MiB at worst); 0 = no check', 0),
    writerThread: bool(true, 'run the store\'s write transactions on a thread of their own, so the main thread keeps serving connections while they are written (in a deep store readers then do not wait on a transaction; on two cores it cost 150-200 MB of memory; measured while the store ran without LMDB\'s write map, ingest was ~5% slower than with the writer on the main thread into a fresh store, 9-16% into one of 600,000 directory events); false: on the main thread (docs/storage.md, "A writer thread"). `orbweaver import` keeps its writer, which holds its spool, on its own thread'),
    readAhead: bool(false, 'let the kernel read ahead around each page of the store it loads (LMDB without MDB_NORDAHEAD). Off: pages are cached and written back one by one, which on a large store writes far less (docs/storage.md, "Read-ahead"); on: a small or cold store warms faster'),
  })
  .strict()
  .prefault({})
  .describe('LMDB event store');

/**
 * How every opener of the store maps it, from the config: the relay's main thread and query
 * threads, the import and the other commands. One place, so a setting reaches all of them.
 */
export function storeMapOptions(config: { dataDir: string; store: z.infer<typeof storeSchema> }): { dir: string; mapSize: number; queryYieldEvery: number; readAhead: boolean; minFreeBytes: number; answerCacheBytes: number } {
  return { dir: config.dataDir, mapSize: config.store.mapSize, queryYieldEvery: config.store.queryYieldEvery, readAhead: config.store.readAhead, minFreeBytes: config.store.minFreeBytes, answerCacheBytes: config.store.answerCache };
}

export const relaySchemaShape = {
  host: str('127.0.0.1', 'address to listen on (0.0.0.0 for all interfaces)'),
  port: int(7447, 'TCP port for WebSocket and HTTP', 0, 65535),
  dataDir: str('./data', 'directory of the LMDB store'),
  logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info').describe('pino log level'),
  logFormat: z.enum(['auto', 'json', 'pretty']).default('auto').describe('json: one JSON object per line; pretty: readable lines; auto: pretty when stderr (where logs go) is a terminal, else json'),
  publicUrl: relayUrl('our public ws:// or wss:// URL (NIP-42 relay tag, NIP-98, spider self-detection, the status page)'),
  allowJsFallback: bool(false, 'start even when the native uWebSockets.js binary cannot load (slow pure-JS shim)'),
  verifier: z.enum(['auto', 'libsecp256k1', 'native', 'wasm']).default('auto').describe('signature backend: auto picks the system libsecp256k1 (native/schnorr) when built, else native bcrypto when built, else nostr-wasm'),
  verifyThreads: int(1, 'worker threads for id and signature checks; 0 checks on the main thread', 0, 16),
  // Default 2, by measurement on 2 vCPUs (bench/RESULTS.md, "query pool"): 2 is never slower than
  // 0 beyond the noise, COUNT ~1.8x, and the main thread drops from ~97% to ~45% during query load;
  // 1 was slower for small scans (#t, window) because each query waits for one busy worker.
  // NIP-67 (draft): off by default because two client libraries the project tests with drop an EOSE
  // with a third element and then never see the end of their query (nostr-fetch 0.17: "malformed
  // R2C EOSE"; @nostrify/nostrify 0.54: a strict zod tuple): test/clients shows it
  nip67: bool(false, 'NIP-67: end a stored answer with ["EOSE", <sub>, ["finish"]] when every stored match was sent, so a client or spider need not page further (NIP-11 then lists 67). Off by default: nostr-fetch and @nostrify/nostrify drop such an EOSE and their queries never end; turn it on where the readers are spiders and clients that know NIP-67 (docs/queries.md)'),
  queryThreads: int(2, 'worker threads that run REQ/COUNT scans on their own read-only store handle; 0 runs them on the main thread', 0, 16),
  info: infoSchema,
  limits: limitsSchema,
  store: storeSchema,
};
