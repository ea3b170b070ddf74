// Which of one host's URLs are one relay: a decision over what each URL answered in this run
// (remote/identity.ts, as one key) and what the directory remembers (which URL was whose alias).
// No I/O. The rule (docs/spider.md, "One relay under many URLs"):
//   - two URLs whose answers are equal (the same NIP-11 document and the same probe answer) are one
//     relay;
//   - a URL the directory records as another's alias stays with it unless both answered this run
//     and differently: the record is not thrown away for want of an answer, and is for a contrary one;
//   - a URL without an answer and without a record is a relay of its own (crawled as before);
//   - each relay is named by one of its URLs (its canonical URL): the one already crawled in this
//     run, else one that answered, else the one the directory already names it by, else wss://
//     before ws://, the shortest, the first in order.

export interface Member {
  url: string;
  /** its answer in this run as one key; null: not asked, or the answer said nothing */
  key: string | null;
  /** asked in this run and answered nothing at all: not made the name of a relay if another URL did answer */
  silent?: boolean;
  /** the relay the directory records this URL as an alias of */
  aliasOf?: string;
  /** the directory names a relay by this URL (it has aliases) */
  named?: boolean;
  /** crawled in this run already, as the n-th relay of its host: it keeps naming its relay */
  crawled?: number;
}

export interface RelayGroup {
  canonical: string;
  /** URLs that answered in this run as the canonical did */
  confirmed: string[];
  /** URLs kept with it on the directory's record, not contradicted by an answer in this run */
  kept: string[];
}

/** wss:// first, then the shorter URL, then the first in code-point order. */
export function byPlainness(a: string, b: string): number {
  const sa = a.startsWith('wss://') ? 0 : 1, sb = b.startsWith('wss://') ? 0 : 1;
  return sa - sb || a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
}

function byNaming(a: Member, b: Member): number {
  const role = (m: Member) => (m.named && !m.aliasOf ? 0 : m.aliasOf ? 2 : 1);
  return (a.crawled ?? Infinity) - (b.crawled ?? Infinity) || Number(!!a.silent) - Number(!!b.silent) || role(a) - role(b) || byPlainness(a.url, b.url);
}

/** Partitions one host's URLs into relays. Every member is in exactly one group. */
export function groupRelays(members: readonly Member[]): RelayGroup[] {
  const byUrl = new Map(members.map((m) => [m.url, m]));
  const parent = new Map(members.map((m) => [m.url, m.url]));
  // each component's answer (at most one: a component never holds two URLs that answered differently)
  const keyOf = new Map(members.map((m) => [m.url, m.key]));
  const find = (u: string): string => {
    let r = u;
    while (parent.get(r) !== r) r = parent.get(r)!;
    parent.set(u, r);
    return r;
  };
  const union = (a: string, b: string): void => {
    const ra = find(a), rb = find(b);
    const ka = keyOf.get(ra) ?? null, kb = keyOf.get(rb) ?? null;
    if (ra === rb || (ka !== null && kb !== null && ka !== kb)) return;
    parent.set(ra, rb);
    keyOf.set(rb, kb ?? ka);
  };

  const byKey = new Map<string, string>();
  for (const m of members) {
    if (m.key === null) continue;
    const first = byKey.get(m.key);
    if (first === undefined) byKey.set(m.key, m.url); else union(first, m.url);
  }
  // the directory's record joins what no answer in this run set apart (union refuses the rest)
  for (const m of members) if (m.aliasOf !== undefined && byUrl.has(m.aliasOf)) union(m.url, m.aliasOf);

  const components = new Map<string, Member[]>();
  for (const m of members) {
    const r = find(m.url);
    const list = components.get(r);
    if (list) list.push(m); else components.set(r, [m]);
  }
  const groups: RelayGroup[] = [];
  for (const list of components.values()) {
    const [head, ...rest] = [...list].sort(byNaming);
    const confirmed = rest.filter((m) => head!.key !== null && m.key === head!.key).map((m) => m.url);
    const kept = rest.filter((m) => !confirmed.includes(m.url)).map((m) => m.url);
    groups.push({ canonical: head!.url, confirmed: confirmed.sort(byPlainness), kept: kept.sort(byPlainness) });
  }
  return groups.sort((a, b) => byPlainness(a.canonical, b.canonical));
}
