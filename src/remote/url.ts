// Relay URL address safety (the spelling: nostr/relay-url.ts). A relay URL found in someone's kind
// 10002 list is untrusted input: only ws:// and wss://, normalised to one spelling, and never a loopback, private,
// link-local or otherwise special address (checked on the literal and again after DNS resolution)
// unless the operator allows private targets. The resolved address is pinned for the connection,
// so a second DNS answer cannot swap in a private address (DNS rebinding).
import { BlockList, isIP } from 'node:net';
import { lookup as dnsLookup } from 'node:dns/promises';

import { normalizeRelayUrl } from '../nostr/relay-url.js';

export { MAX_URL_LENGTH, normalizeRelayUrl } from '../nostr/relay-url.js';

// Special-purpose address blocks (IANA registries), checked with node's BlockList.
const special4 = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16],
  ['172.16.0.0', 12], ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16],
  ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) special4.addSubnet(net, bits, 'ipv4');

// IPv6: only global unicast (2000::/3) is public, minus the special blocks inside it. Every form that
// embeds an IPv4 address lies outside 2000::/3 (::/96 IPv4-compatible, ::ffff:0:0/96 mapped,
// ::ffff:0:0:0/96 SIIT, 64:ff9b::/96 and 64:ff9b:1::/48 NAT64) or is refused inside it (2002::/16
// 6to4, 2001::/32 Teredo), so `[::127.0.0.1]` and friends never reach a loopback or private host.
// An allow-list rather than a deny-list: a form nobody thought of is refused, not let through.
const global6 = new BlockList();
global6.addSubnet('2000::', 3, 'ipv6');
const special6 = new BlockList();
for (const [net, bits] of [
  ['2001::', 23], // IETF protocol assignments: Teredo 2001::/32, benchmarking, ORCHID, AS112 ...
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4: an IPv4 address inside
  ['3fff::', 20], // documentation (RFC 9637)
] as const) special6.addSubnet(net, bits, 'ipv6');

/** True for loopback, private, link-local, multicast, documentation and other non-public addresses. */
export function isSpecialAddress(ip: string): boolean {
  const fam = isIP(ip);
  if (fam === 4) return special4.check(ip, 'ipv4');
  if (fam === 6) return !global6.check(ip, 'ipv6') || special6.check(ip, 'ipv6');
  return true; // not an address at all: refuse
}

/** Host names that never name a public relay. */
export function isSpecialHostname(host: string): boolean {
  const h = host.toLowerCase();
  return h === 'localhost' || h.endsWith('.localhost') || h.endsWith('.local') || h.endsWith('.internal') ||
    h.endsWith('.onion') || h.endsWith('.lan') || h.endsWith('.home.arpa') || !h.includes('.') && isIP(h) === 0;
}

export interface Target {
  url: string;
  secure: boolean;
  /** host name as in the URL (brackets removed for IPv6), used for TLS SNI and the Host header */
  hostname: string;
  port: number;
  path: string;
  /** the resolved address the connection is pinned to */
  address: string;
  family: 4 | 6;
}

/** The setting that lets the spider and the monitor contact private, loopback and link-local addresses. */
export const ALLOW_PRIVATE_SETTING = 'spider.allowPrivate (ORBWEAVER_SPIDER_ALLOW_PRIVATE)';

/** An address the SSRF rules refuse; the message names the setting that would allow it. */
export class UnsafeUrlError extends Error {}

type Resolver = (host: string) => Promise<Array<{ address: string; family: number }>>;
const defaultResolver: Resolver = (host) => dnsLookup(host, { all: true, verbatim: true });

/** Splits a normalised URL into host, port and path (no I/O). */
export function parseTarget(url: string): Omit<Target, 'address' | 'family'> {
  const u = new URL(url);
  const secure = u.protocol === 'wss:';
  const hostname = u.hostname.replace(/^\[|\]$/g, '');
  return { url, secure, hostname, port: u.port ? Number(u.port) : secure ? 443 : 80, path: u.pathname || '/' };
}

/** Quick refusal without DNS: bad URL, special host name, or a special literal address. */
export function syntacticRefusal(url: string, allowPrivate: boolean): string | null {
  if (normalizeRelayUrl(url) !== url) return 'not a normalised ws:// or wss:// URL';
  if (allowPrivate) return null;
  const { hostname } = parseTarget(url);
  if (isIP(hostname)) return isSpecialAddress(hostname) ? `address ${hostname} is not public; ${ALLOW_PRIVATE_SETTING} allows it` : null;
  return isSpecialHostname(hostname) ? `host ${hostname} is not public; ${ALLOW_PRIVATE_SETTING} allows it` : null;
}

/**
 * Resolves a relay URL to the one address the connection will use. Refuses special addresses
 * (before and after DNS) unless allowPrivate; when any resolved address is special the host is
 * refused altogether, since the resolver could hand either one to a later lookup.
 */
export async function resolveTarget(url: string, allowPrivate: boolean, resolver: Resolver = defaultResolver): Promise<Target> {
  const why = syntacticRefusal(url, allowPrivate);
  if (why) throw new UnsafeUrlError(why);
  const t = parseTarget(url);
  const fam = isIP(t.hostname);
  if (fam) return { ...t, address: t.hostname, family: fam as 4 | 6 };
  let addrs: Array<{ address: string; family: number }>;
  try { addrs = await resolver(t.hostname); } catch (e) { throw new Error(`DNS lookup of ${t.hostname} failed: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`); }
  if (addrs.length === 0) throw new Error(`DNS lookup of ${t.hostname} returned no address`);
  if (!allowPrivate) {
    const bad = addrs.find((a) => isSpecialAddress(a.address));
    if (bad) throw new UnsafeUrlError(`${t.hostname} resolves to ${bad.address}, which is not public; ${ALLOW_PRIVATE_SETTING} allows it`);
  }
  const pick = addrs.find((a) => a.family === 4) ?? addrs[0];
  return { ...t, address: pick.address, family: pick.family === 6 ? 6 : 4 };
}
