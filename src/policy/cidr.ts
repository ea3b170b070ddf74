// IP addresses and CIDR ranges, IPv4 and IPv6, as 128-bit numbers (IPv4 maps into ::ffff:0:0/96,
// so "10.0.0.0/8" also matches a client seen as "::ffff:10.1.2.3"). Pure.

const V4_MAPPED = 0xffffn << 32n;

function parseV4(s: string): bigint | null {
  const parts = s.split('.');
  if (parts.length !== 4) return null;
  let n = 0n;
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p) || Number(p) > 255) return null;
    n = (n << 8n) | BigInt(Number(p));
  }
  return n;
}

/** The address as a 128-bit number (IPv4 as ::ffff:a.b.c.d), or null when it is not an IP. */
export function parseIp(input: string): bigint | null {
  let s = input.trim();
  if (s.startsWith('[') && s.endsWith(']')) s = s.slice(1, -1);
  const zone = s.indexOf('%');
  if (zone >= 0) s = s.slice(0, zone);
  if (!s.includes(':')) {
    const v4 = parseV4(s);
    return v4 === null ? null : V4_MAPPED | v4;
  }
  let tail: bigint[] = [];
  if (s.includes('.')) {
    const idx = s.lastIndexOf(':');
    const v4 = parseV4(s.slice(idx + 1));
    if (v4 === null) return null;
    tail = [v4 >> 16n, v4 & 0xffffn];
    s = s.slice(0, idx + 1);
    if (!s.endsWith('::')) s = s.slice(0, -1);
  }
  const halves = s.split('::');
  if (halves.length > 2) return null;
  const groups = (h: string) => (h === '' ? [] : h.split(':'));
  const head = groups(halves[0]);
  const rest = halves.length === 2 ? groups(halves[1]) : [];
  const want = 8 - tail.length;
  const present = head.length + rest.length;
  if (halves.length === 1 ? present !== want : present > want - 1) return null;
  const all = [...head, ...Array<string>(want - present).fill('0'), ...rest];
  let n = 0n;
  for (const g of all) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return null;
    n = (n << 16n) | BigInt(parseInt(g, 16));
  }
  for (const t of tail) n = (n << 16n) | t;
  return n;
}

export interface Cidr {
  text: string;
  base: bigint;
  mask: bigint;
}

const ALL = (1n << 128n) - 1n;

/** "1.2.3.4", "10.0.0.0/8", "2001:db8::/32", "::1" -> a range; null when malformed. */
export function parseCidr(text: string): Cidr | null {
  const t = text.trim();
  const slash = t.indexOf('/');
  const addr = slash < 0 ? t : t.slice(0, slash);
  const ip = parseIp(addr);
  if (ip === null) return null;
  const v4 = !addr.includes(':');
  let bits = v4 ? 32 : 128;
  if (slash >= 0) {
    const b = t.slice(slash + 1);
    if (!/^\d{1,3}$/.test(b) || Number(b) > bits) return null;
    bits = Number(b);
  }
  const prefix = v4 ? 96 + bits : bits;
  const mask = prefix === 0 ? 0n : (ALL << BigInt(128 - prefix)) & ALL;
  return { text: t, base: ip & mask, mask };
}

/** A set of ranges with a cache of recent answers (the same few IPs ask again and again). */
export class CidrSet {
  private ranges: Cidr[] = [];
  private cache = new Map<string, boolean>();
  constructor(entries: Iterable<string> = []) { for (const e of entries) this.add(e); }

  /** Adds an IP or CIDR; returns false when it is malformed. */
  add(text: string): boolean {
    const c = parseCidr(text);
    if (!c) return false;
    if (!this.ranges.some((r) => r.base === c.base && r.mask === c.mask)) this.ranges.push(c);
    this.cache.clear();
    return true;
  }

  remove(text: string): boolean {
    const c = parseCidr(text);
    if (!c) return false;
    const before = this.ranges.length;
    this.ranges = this.ranges.filter((r) => !(r.base === c.base && r.mask === c.mask));
    this.cache.clear();
    return this.ranges.length !== before;
  }

  get size(): number { return this.ranges.length; }
  list(): string[] { return this.ranges.map((r) => r.text); }

  has(ip: string): boolean {
    if (this.ranges.length === 0) return false;
    const hit = this.cache.get(ip);
    if (hit !== undefined) return hit;
    const n = parseIp(ip);
    const r = n !== null && this.ranges.some((c) => (n & c.mask) === c.base);
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(ip, r);
    return r;
  }
}

/**
 * The key per-client budgets and limits count by: an IPv4 address (also when written IPv4-mapped,
 * ::ffff:a.b.c.d) as itself, an IPv6 address by its /64 — one subscriber line or host is handed a
 * whole /64, so counting single IPv6 addresses would give one attacker 2^64 "clients". Anything
 * that does not parse (a proxy header's odd value) is its own key.
 */
export function addressKey(ip: string): string {
  const n = parseIp(ip);
  if (n === null) return ip;
  if (n >> 32n === 0xffffn) return [24n, 16n, 8n, 0n].map((s) => String((n >> s) & 0xffn)).join('.');
  const g = [112n, 96n, 80n, 64n].map((s) => ((n >> s) & 0xffffn).toString(16));
  return `${g.join(':')}::/64`;
}
