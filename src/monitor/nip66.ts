// NIP-66 events as templates (pure: no I/O, no signing): the kind 30166 relay discovery event of one
// check, the monitor's kind 10166 announcement, its kind 0 profile and kind 10002 relay list, and
// the kind 5 that retracts a 30166 published under an earlier spelling of its `d` tag. Written
// against the NIP-66 text at nostr-protocol/nips db5fe3de (docs/nip-texts.md).
//
// Tag choices where NIP-66 leaves room (docs/monitor.md, docs/nip-texts.md):
// - `d` in RFC 3986's normal form, which the NIP asks for: a URL without a path gets "/"
//   ("wss://relay.example/", as in the NIP's example and nostr-tools' normalizeURL), while the
//   directory keys relays by the spider's spelling without it;
// - rtt-* in whole milliseconds, rounded up (a loopback answer in 0.3 ms is 1, never 0);
// - `timeout` as ["timeout", <check>, <ms>], the form of the NIP's example (its prose has the
//   indexes the other way round; monitors in the wild follow the example);
// - only the single-letter tags NIP-66 lists (d n T N R t k g): single letters are what relays
//   index and clients filter by, so one the NIP does not define is a filter with someone else's
//   meaning (`l` left NIP-66 in b516adb; `s` is NIP-69's status). The relay's software and version
//   are in the content (its NIP-11 document);
// - the certificate of a wss:// relay as `ssl` (valid / !valid), `ssl-expires` (unix seconds) and
//   `ssl-issuer`, the names BigBrotr's monitor uses (NIP-66's list of tags says "include": longer
//   names are room for such extensions);
// - `N` and `T` as observed (src/monitor/probes/decide.ts): a NIP a probe saw served is published
//   whether claimed or not, a claimed one the probe saw refused is not, the claim is kept where no
//   probe can tell; `T Search` only for a relay that answered a search (with probes off: the claims);
// - `R` from NIP-11's limitation, corrected by what the check saw: only a refusal shows a
//   requirement (`auth-required:` makes `auth`, `payment-required:` makes `payment`, a write refused
//   `restricted:` or `blocked:` makes `writes`, `pow:` makes `pow`). An AUTH challenge alone is no
//   requirement: many relays challenge every connection and serve it without AUTH;
// - `t` from NIP-11's `tags`, lower-cased (NIP-24) and each once;
// - `k` only for a kind the relay was seen to accept: the write test's event answered `OK true`.
//   Nothing else tells a kind accepted or refused (a stored event may predate a rule; a refusal's
//   reason rarely names the kind), and no NIP-11 field lists kinds since `retention` was removed.
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

/**
 * The 30166 `d` of a relay: its URL in RFC 3986's normal form (section 6.2.3: an empty path is
 * "/"). The directory's spelling (src/nostr/relay-url.ts) drops that slash; every other part is
 * already normal there (scheme and host lower-cased, default port dropped).
 */
export function discoveryAddress(url: string): string {
  return /^wss?:\/\/[^/]+$/.test(url) ? `${url}/` : url;
}

/** Kind 30166 for one check of an online relay. */
export function discoveryEvent(c: RelayCheck, createdAt: number): EventTemplate {
  const tags: string[][] = [['d', discoveryAddress(c.url)], ['n', c.network]];
  if (c.rtt.open !== undefined) tags.push(['rtt-open', String(c.rtt.open)]);
  if (c.rtt.read !== undefined) tags.push(['rtt-read', String(c.rtt.read)]);
  if (c.rtt.write !== undefined) tags.push(['rtt-write', String(c.rtt.write)]);
  const pub = decide(c.nip11, c.probes);
  for (const n of pub.nips) tags.push(['N', String(n)]);
  for (const r of requirements(c.nip11, c.observed)) tags.push(['R', r]);
  for (const t of pub.types) tags.push(['T', t]);
  for (const k of c.acceptedKinds ?? []) tags.push(['k', String(k)]);
  // NIP-11's `tags` (gone from NIP-11 in b914aef, still served by many relays) as topics: NIP-24
  // says a `t` value MUST be lowercase
  for (const t of new Set((c.nip11?.tags ?? []).map((x) => x.toLowerCase()))) tags.push(['t', t]);
  if (c.ssl) {
    tags.push(['ssl', c.ssl.valid ? 'valid' : '!valid']);
    if (c.ssl.expires !== undefined) tags.push(['ssl-expires', String(c.ssl.expires)]);
    if (c.ssl.issuer) tags.push(['ssl-issuer', c.ssl.issuer]);
  }
  return { kind: RELAY_DISCOVERY_KIND, created_at: createdAt, tags, content: c.nip11Json ?? '' };
}

/**
 * Kind 5 (NIP-09) retracting the 30166 this monitor published under an older `d` of the same relay
 * (before `d` took RFC 3986's "/"): a new `d` is a new address, so the old event would otherwise
 * stay beside the new one, ever older. The `a` tag removes every version at that address, the `e`
 * tag the one known. Also for a URL found to be an alias of another relay (docs/spider.md, "One
 * relay under many URLs"): the relay is published once, under its own URL, so what was said of the
 * alias as a relay of its own is taken back (`reason` says so).
 */
export function retractionEvent(o: { pubkey: string; oldAddress: string; id: string | null; reason?: string }, createdAt: number): EventTemplate {
  const tags: string[][] = [['a', `${RELAY_DISCOVERY_KIND}:${o.pubkey}:${o.oldAddress}`], ['k', String(RELAY_DISCOVERY_KIND)]];
  if (o.id) tags.unshift(['e', o.id]);
  return { kind: 5, created_at: createdAt, tags, content: o.reason ?? 'superseded: this relay\'s NIP-66 discovery event now has d in RFC 3986 normal form' };
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

/** Kind 10002 naming the relays the monitor publishes to (NIP-66: monitors SHOULD publish one). */
export function monitorRelayList(relays: string[], createdAt: number): EventTemplate {
  return { kind: 10002, created_at: createdAt, tags: relays.map((r) => ['r', r, 'write']), content: '' };
}
