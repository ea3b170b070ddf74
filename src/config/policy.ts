// Access, policy and rate-limit settings (issue: operating it in public). Owned by src/relay/policy.
// Defaults are generous: one heavy client (the benchmarks: 16 connections x 200 events in flight,
// ~10k events/s from one address) is never throttled. docs/operating.md shows tight public settings.
import { z } from 'zod';
import { duration, int, intList, pubkeyList, str, strList } from './fields.js';

export const authSchema = z
  .object({
    required: z
      .enum(['off', 'write', 'read', 'all'])
      .default('off')
      .describe('NIP-42: require authentication to write (EVENT), to read (REQ/COUNT), for both (all), or not at all (off); the challenge is sent on connect either way'),
    writeKinds: intList([], 'kinds that may only be published from an authenticated connection, whatever auth.required says'),
    readKinds: intList([4, 1059], 'kinds only their author or a p-tagged recipient may read, after AUTH (DMs, gift wraps); empty list: anyone may read them'),
    maxAge: duration('10m', 'an AUTH event whose created_at is further than this from now is refused'),
  })
  .prefault({})
  .describe('NIP-42 authentication');

export const rateSchema = (event: number, req: number, count: number, what: string) =>
  z
    .object({
      event: int(event, `EVENT messages per second ${what}; 0 = unlimited`),
      req: int(req, `REQ messages per second ${what}; 0 = unlimited`),
      count: int(count, `COUNT messages per second ${what}; 0 = unlimited`),
    })
    .prefault({});

export const rateLimitsSchema = z
  .object({
    perIp: rateSchema(100_000, 100_000, 100_000, 'from one client IP').describe('token buckets per client IP'),
    perConnection: rateSchema(50_000, 20_000, 20_000, 'on one connection').describe('token buckets per connection'),
    perPubkey: rateSchema(50_000, 20_000, 20_000, 'from one authenticated pubkey (across its connections)').describe('token buckets per authenticated pubkey'),
    burstSeconds: int(2, 'bucket size in seconds of the rate: a client may burst rate x burstSeconds messages before being limited', 1, 3600),
    maxConnectionsPerIp: int(8192, 'open WebSocket connections from one client IP; 0 = unlimited', 0),
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
    scanBudget: int(200_000, 'index entries one REQ or COUNT may read before it is cut short with CLOSED error: (counted in steps of store.queryYieldEvery)', 100),
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
