// NIP-66 events as templates (pure: no I/O, no signing): the kind 30166 relay discovery event of one
// check, the monitor's kind 10166 announcement, its kind 0 profile and kind 10002 relay list.
//
// Tag choices where NIP-66 leaves room (docs/monitor.md):
// - rtt-* in whole milliseconds, rounded up (a loopback answer in 0.3 ms is 1, never 0);
// - `timeout` as ["timeout", <check>, <ms>], the form of the NIP's example (its prose has the
//   indexes the other way round; monitors in the wild follow the example);
// - `s` carries the NIP-11 software and, when given, its version as a third element;
// - the certificate of a wss:// relay as `ssl` (valid / !valid), `ssl-expires` (unix seconds) and
//   `ssl-issuer`, the names BigBrotr's monitor uses;
// - `N` and `T` as observed (src/monitor/probes/decide.ts): a NIP a probe saw served is published
//   whether claimed or not, a claimed one the probe saw refused is not, the claim is kept where no
//   probe can tell; `T Search` only for a relay that answered a search (with probes off: the claims);
// - `R` from NIP-11's limitation, corrected by what the check saw: only a refusal shows a
//   requirement (`auth-required:` makes `auth`, `payment-required:` makes `payment`, a write refused
//   `restricted:` or `blocked:` makes `writes`, `pow:` makes `pow`). An AUTH challenge alone is no
//   requirement: many relays challenge every connection and serve it without AUTH.
import type { Nip11Info } from '../remote/nip11.js';
import type { Network, Observed, RelayCheck } from './types.js';
import { decide } from './probes/decide.js';

export const RELAY_DISCOVERY_KIND = 30166;
export const MONITOR_ANNOUNCEMENT_KIND = 10166;

export interface EventTemplate {
  kind: number;
  created_at: number;
  tags: string[][];
  content: string;
}

/** NIP-66 `n` from the relay's host name. */
export function networkOf(url: string): Network {
  let host: string;
  try { host = new URL(url).hostname.toLowerCase(); } catch { return 'clearnet'; }
  if (host.endsWith('.onion')) return 'tor';
  if (host.endsWith('.i2p')) return 'i2p';
  if (host.endsWith('.loki')) return 'loki';
  return 'clearnet';
}

/** Whole milliseconds, rounded up, at least 1. */
export const wholeMs = (ms: number): number => Math.max(1, Math.ceil(ms));

/**
 * The NIP-66 requirement a refusal shows, by its NIP-01 prefix: of a REQ (`read`) only AUTH and
 * payment (a read refused `restricted:` says nothing of writes); of our EVENT also `writes` and
 * `pow`. Other refusals (rate-limited:, invalid:, error:, duplicate:) are no requirement.
 */
export function refusalRequirement(message: string, of: 'read' | 'write'): keyof Observed | null {
  const prefix = /^([a-z-]+):/.exec(message)?.[1];
  if (prefix === 'auth-required') return 'auth';
  if (prefix === 'payment-required') return 'payment';
  if (of === 'read') return null;
  if (prefix === 'restricted' || prefix === 'blocked') return 'writes';
  if (prefix === 'pow') return 'pow';
  return null;
}

/** NIP-66 `R` values: NIP-11's limitation, with a requirement the check saw winning over a `false` claim. */
export function requirements(nip11: Nip11Info | null, observed: Observed): string[] {
  const lim = nip11?.limitation ?? {};
  const out: string[] = [];
  const flag = (name: keyof Observed, claimed: boolean | undefined) => {
    if (observed[name] !== undefined || claimed === true) out.push(name);
    else if (claimed === false) out.push(`!${name}`);
  };
  flag('auth', lim.auth_required);
  flag('payment', lim.payment_required);
  flag('writes', lim.restricted_writes);
  flag('pow', lim.min_pow_difficulty === undefined ? undefined : lim.min_pow_difficulty > 0);
  return out;
}

/** NIP-66 `T` values that can be told from outside. */
export function relayTypes(nip11: Nip11Info | null): string[] {
  return nip11?.supported_nips?.includes(50) ? ['Search'] : [];
}

/** The supported NIPs of a NIP-11 document: each once, ascending, non-negative. */
export function supportedNips(nip11: Nip11Info | null): number[] {
  return [...new Set((nip11?.supported_nips ?? []).filter((n) => Number.isSafeInteger(n) && n >= 0))].sort((a, b) => a - b);
}

/** Kind 30166 for one check of an online relay. */
export function discoveryEvent(c: RelayCheck, createdAt: number): EventTemplate {
  const tags: string[][] = [['d', c.url], ['n', c.network]];
  if (c.rtt.open !== undefined) tags.push(['rtt-open', String(c.rtt.open)]);
  if (c.rtt.read !== undefined) tags.push(['rtt-read', String(c.rtt.read)]);
  if (c.rtt.write !== undefined) tags.push(['rtt-write', String(c.rtt.write)]);
  const pub = decide(c.nip11, c.probes);
  for (const n of pub.nips) tags.push(['N', String(n)]);
  for (const r of requirements(c.nip11, c.observed)) tags.push(['R', r]);
  for (const t of pub.types) tags.push(['T', t]);
  if (c.nip11?.software) tags.push(c.nip11.version ? ['s', c.nip11.software, c.nip11.version] : ['s', c.nip11.software]);
  for (const t of c.nip11?.tags ?? []) tags.push(['t', t]);
  for (const l of c.nip11?.language_tags ?? []) tags.push(['l', l, 'ISO-639-1']);
  if (c.ssl) {
    tags.push(['ssl', c.ssl.valid ? 'valid' : '!valid']);
    if (c.ssl.expires !== undefined) tags.push(['ssl-expires', String(c.ssl.expires)]);
    if (c.ssl.issuer) tags.push(['ssl-issuer', c.ssl.issuer]);
  }
  return { kind: RELAY_DISCOVERY_KIND, created_at: createdAt, tags, content: c.nip11Json ?? '' };
}

/** The checks a monitor announces (`c` tags), in the order they run; the probes as `nip50`, `nip45`, `nip77`, `nip42`, `limits`. */
export function monitorChecks(write: boolean, probes = false): string[] {
  return ['nip11', 'ssl', 'open', 'read', ...(write ? ['write'] : []), ...(probes ? ['nip50', 'nip45', 'nip77', 'nip42', 'limits'] : [])];
}

/** Kind 10166: how often this monitor publishes, what it checks and with which timeouts. */
export function announcementEvent(o: { intervalMs: number; timeoutMs: number; write: boolean; probes?: boolean }, createdAt: number): EventTemplate {
  const checks = monitorChecks(o.write, o.probes);
  const tags: string[][] = [['frequency', String(Math.round(o.intervalMs / 1000))]];
  for (const c of checks) tags.push(['timeout', c, String(o.timeoutMs)]);
  for (const c of checks) tags.push(['c', c]);
  return { kind: MONITOR_ANNOUNCEMENT_KIND, created_at: createdAt, tags, content: '' };
}

/** Kind 0 of the monitor. */
export function monitorProfile(o: { relayName: string; relayUrl?: string }, createdAt: number): EventTemplate {
  const name = `${o.relayName || 'orbweaver'} monitor`;
  const about = `NIP-66 relay monitor of ${o.relayUrl || o.relayName || 'an orbweaver relay'}: checks the relays of its directory and publishes kind 30166 relay discovery events.`;
  return { kind: 0, created_at: createdAt, tags: [], content: JSON.stringify({ name, about, ...(o.relayUrl ? { website: o.relayUrl.replace(/^ws/, 'http') } : {}) }) };
}

/**
 * Kind 5 (NIP-09) withdrawing the 30166 last published for a URL found to be an alias of `relay`
 * (docs/spider.md, "One relay under many URLs"): the relay is published once, under its own URL, so
 * what was said of the alias as if it were a relay of its own is taken back (by id and by address).
 */
export function aliasRetraction(pubkey: string, url: string, id: string, relay: string, createdAt: number): EventTemplate {
  return {
    kind: 5, created_at: createdAt,
    tags: [['e', id], ['a', `${RELAY_DISCOVERY_KIND}:${pubkey}:${url}`], ['k', String(RELAY_DISCOVERY_KIND)]],
    content: `${url} reaches the relay published as ${relay}`,
  };
}

/** Kind 10002 naming the relays the monitor publishes to (NIP-66: monitors SHOULD publish one). */
export function monitorRelayList(relays: string[], createdAt: number): EventTemplate {
  return { kind: 10002, created_at: createdAt, tags: relays.map((r) => ['r', r, 'write']), content: '' };
}
