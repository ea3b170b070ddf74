// Access, policy and rate-limit settings. Owned by src/policy (write rules) and src/relay/policy
// (per connection).
// Message rates are generous by default (a heavy client sending ~10k events/s is not throttled);
// what one client may hold or occupy at once — connections, events in flight, AUTH attempts, scans,
// filter values, unsent output — is bounded for a public relay (docs/security.md). The benchmarks
// start the relay with their own limits (bench/README.md); docs/operating.md shows tight rates.
import { z } from 'zod';
import { bool, duration, int, intList, pubkeyList, str, strList } from './fields.js';

export const authSchema = z
  .object({
    required: z
      .enum(['off', 'write', 'read', 'all'])
      .default('off')
      .describe('NIP-42: require authentication to write (EVENT), to read (REQ/COUNT), for both (all), or not at all (off)'),
    challenge: z
      .enum(['auto', 'connect', 'on-demand'])
      .default('auto')
      .describe('when the NIP-42 challenge is sent: connect (first message on every connection), on-demand (right before the first auth-required: answer on a connection, or in answer to an AUTH sent before any challenge), auto (connect when auth.required is read or all, else on-demand). Several client libraries misbehave when challenged on connect for nothing'),
    writeKinds: intList([], 'kinds that may only be published from an authenticated connection, whatever auth.required says'),
    // 13: a NIP-59 seal is signed by the real sender and carries no tags, so only its author can
    // read it here; served to anyone, it told who wrote to someone, which the gift wrap hides
    readKinds: intList([4, 13, 1059], 'kinds only their author or a p-tagged recipient may read, after AUTH (NIP-04 DMs 4, NIP-59 seals 13 and gift wraps 1059; a seal has no p tag, so only its author); empty list: anyone may read them'),
    maxAge: duration('10m', 'an AUTH event whose created_at is further than this from now is refused'),
    relayHosts: strList([], 'host names (host or host:port) the NIP-42 relay tag and the NIP-98 u tag may name besides publicUrl and the listen address; the client\'s Host header is never trusted'),
  })
  .prefault({})
  .describe('NIP-42 authentication');

/**
 * When the NIP-42 challenge goes out, with `auto` resolved: on connect where reading needs AUTH
 * (every client must authenticate before anything works, so it may as well start at once), on
 * demand otherwise — a client that never needs AUTH never sees a challenge.
 */
export function challengeMode(auth: { required: string; challenge: string }): 'connect' | 'on-demand' {
  if (auth.challenge === 'connect' || auth.challenge === 'on-demand') return auth.challenge;
  return auth.required === 'read' || auth.required === 'all' ? 'connect' : 'on-demand';
}

export const rateSchema = (event: number, req: number, count: number, auth: number, what: string) =>
  z
    .object({
      event: int(event, `EVENT messages per second ${what}; 0 = unlimited`),
      req: int(req, `REQ messages per second ${what}; 0 = unlimited`),
      count: int(count, `COUNT messages per second ${what}; 0 = unlimited`),
      auth: int(auth, `AUTH messages per second ${what} (each costs a signature check); 0 = unlimited`),
    })
    .prefault({});

export const rateLimitsSchema = z
  .object({
    perIp: rateSchema(100_000, 100_000, 100_000, 20, 'from one client IP (IPv6: one /64)').describe('token buckets per client IP'),
    perConnection: rateSchema(50_000, 20_000, 20_000, 5, 'on one connection').describe('token buckets per connection'),
    perPubkey: rateSchema(50_000, 20_000, 20_000, 0, 'from one authenticated pubkey (across its connections)').describe('token buckets per authenticated pubkey'),
    burstSeconds: int(2, 'bucket size in seconds of the rate: a client may burst rate x burstSeconds messages before being limited', 1, 3600),
    messagesPerIp: int(2_000, 'WebSocket messages per second from one client IP (IPv6: one /64), of any kind; beyond, messages are dropped unread with a NOTICE rate-limited: (at most one a second); 0 = unlimited', 0),
    // 1 MiB/s: a REQ full of short filter values costs ~80 ns per byte to parse (an EVENT ~2 ns), so
    // this keeps what one address can make the main thread parse under ~10% of it
    bytesPerIp: int(1024 * 1024, 'bytes of WebSocket messages per second from one client IP (IPv6: one /64); beyond, dropped the same way; 0 = unlimited', 0),
    maxConnectionsPerIp: int(128, 'open WebSocket connections and HTTP requests being answered from one client IP (IPv6: one /64); 0 = unlimited', 0),
    // 50/s (bursts of burstSeconds' worth): far above what a browser on the status page, a monitor
    // or clients fetching NIP-11 need, far below the 10,000/s one address could make us build
    httpRequestsPerIp: int(50, 'HTTP requests per second from one client IP (IPv6: one /64), any path and method; beyond: 429 Too Many Requests with Retry-After; 0 = unlimited', 0),
    liveEventsPerIp: int(5_000, 'live events per second sent to the subscriptions of one client IP (IPv6: one /64), bursts of burstSeconds worth; a subscription that would get one more is closed with CLOSED rate-limited: (one address\'s live searches and publications cannot take the main thread from everyone else); 0 = unlimited', 0),
    maxInFlightPerConnection: int(256, 'EVENTs and AUTHs of one connection being checked and stored, waiting for their OK; more get OK false rate-limited: (bounds the signature work one client queues); 0 = unlimited', 0),
    maxInFlightPerIp: int(512, 'the same for all connections of one IP (IPv6: one /64); 0 = unlimited', 0),
  })
  .prefault({})
  .describe('rate limits (token buckets); refusals use rate-limited:');

export const writePolicySchema = z
  .object({
    pubkeyAllow: pubkeyList('when not empty, only events by these pubkeys are accepted (NIP-86 allowpubkey adds to this)'),
    pubkeyDeny: pubkeyList('events by these pubkeys are refused (NIP-86 banpubkey adds to this)'),
    kindAllow: z.array(z.union([z.number().int().min(0), z.string()])).default([]).describe('when not empty, only these kinds are accepted; entries are kinds or ranges like 30000-39999 (NIP-86 allowkind adds to this)'),
    kindDeny: z.array(z.union([z.number().int().min(0), z.string()])).default([]).describe('these kinds (or ranges like 20000-29999) are refused (NIP-86 disallowkind adds to this)'),
    ipAllow: strList([], 'when not empty, only clients from these IPs or CIDR ranges (IPv4 and IPv6) may connect'),
    ipDeny: strList([], 'clients from these IPs or CIDR ranges may not connect or write (NIP-86 blockip adds to this)'),
    minPow: int(0, 'minimum NIP-13 proof of work (leading zero bits of the id) for every event; 0 = none (NIP-11 min_pow_difficulty)', 0, 256),
    powKinds: strList([], 'per-kind minimum proof of work as kind:bits, e.g. 1:20,7:8 (overrides minPow for those kinds)'),
  })
  .prefault({})
  .describe('write policy: allow/deny lists and proof of work');

export const readLimitsSchema = z
  .object({
    maxConcurrentQueries: int(4, 'REQ scans and COUNTs running at once per connection; more wait their turn', 1, 1000),
    maxQueuedQueries: int(200, 'REQs and COUNTs waiting for a slot on one connection; more are refused with rate-limited:', 0),
    maxConcurrentQueriesPerIp: int(4, 'REQ scans and COUNTs running at once for all connections of one IP (IPv6: one /64): one client cannot fill the query threads', 1, 10_000),
    maxQueuedQueriesPerIp: int(256, 'REQs and COUNTs waiting for a slot for one IP (IPv6: one /64); more are refused with rate-limited:', 0),
    resultBytesPerIp: int(32 * 1024 * 1024, 'bytes of stored events sent per second in REQ results to one IP (IPv6: one /64); past it that address\'s next scans wait their turn (bursts of 2 s worth pass); 0 = unlimited', 0),
    answerPieceBytes: int(4 * 1024 * 1024, 'a REQ\'s stored events are read and sent in pieces of at most this many bytes (one event more when a single event is larger), each reserved against its address\'s limits.maxBufferedBytesPerIp before it is read and read once the connection has room for it below limits.maxBufferedBytes: an answer of any size arrives at the pace the client reads, and a client that stops reading holds at most its address\'s cap. An answer in several pieces goes out filter by filter, each newest first (docs/queries.md)', 65536),
    scanBudget: int(200_000, 'index entries one REQ or COUNT may read before it is cut short with CLOSED error: (counted in steps of store.queryYieldEvery; planning and each index range opened count too)', 100),
    offloadWhenBusy: bool(false, 'point lookups (ids, addresses: one author\'s follow list) and answer-bounded scans run on the main thread, where they cost least; true: while it is saturated (event-loop utilisation >= 90% over the last 200 ms) and a query thread has nothing in flight, they go to that thread. Off by default: on 2 cores it made the follow-list shape 13-32% slower (the hand-off costs the main thread about what the lookup does; bench/RESULTS.md, docs/queries.md)'),
    queryTimeout: duration('10s', 'a REQ scan or COUNT running longer than this is stopped and answered CLOSED error:'),
  })
  .prefault({})
  .describe('read-side protection');

export const policySchemaShape = {
  adminPubkeys: pubkeyList('admin pubkeys for the NIP-86 management API (NIP-98 signed), comma-separated'),
  trustedProxyHeader: str('', 'behind a reverse proxy: the header carrying the client IP (e.g. x-forwarded-for, x-real-ip); empty = use the socket address. Only set it when every client connects through the proxy'),
  auth: authSchema,
  rateLimits: rateLimitsSchema,
  policy: writePolicySchema,
  read: readLimitsSchema,
};
