// The relay directory as operators read it: one row per relay the spider knows, with its hop,
// state, last crawl, events, quirks in words, last error and next attempt. One function makes the
// rows for every reader — the status page's table, /status.json and `orbweaver directory` — so
// they always agree. The NIP-66 monitor (src/monitor) adds its health figures through
// ViewContext.health; /directory, /directory.json and `orbweaver directory` show the same rows with
// the summary below (online now / 24 h / 7 d, by network, software and version, supported NIP).
import { RelayDirectory, type BackoffPolicy, type RelayRecord } from './records.js';
import type { Quirks } from './types.js';

export type RelayState =
  | 'new' // discovered, never attempted
  | 'crawling' // being fetched right now (known only to the running relay)
  | 'ok' // every kind fetched completely in the last attempt
  | 'partial' // reached, some kind stopped early (budget, event cap, refused subscription)
  | 'failed' // the last attempt failed; tried again next run
  | 'backoff' // failed repeatedly; not tried before nextAttempt
  | 'refused' // unsafe address (private, loopback, …): never crawled
  | 'self'; // our own relay

export const RELAY_STATES: RelayState[] = ['crawling', 'ok', 'partial', 'new', 'failed', 'backoff', 'refused', 'self'];

export interface DirectoryRow {
  url: string;
  /** hop at which the latest run found it (0: named by a seed's list; -1: not on the spider's hops, found by the finder and validated) */
  hop: number;
  state: RelayState;
  /** ms since epoch of the last attempt; null: never */
  lastCrawl: number | null;
  lastSuccess: number | null;
  /** events received / stored in the last attempt; null: never attempted */
  fetched: number | null;
  stored: number | null;
  /** events from this relay stored over all runs */
  storedTotal: number;
  /** learned behaviour, in words ("cap 500", "no EOSE", …) */
  quirks: string[];
  lastError: string | null;
  /** consecutive failures */
  failures: number;
  /** ms since epoch: when it is tried again (the end of its backoff, or the next scheduled run); null: unknown or never */
  nextAttempt: number | null;
  firstSeen: number;
  lastSeen: number;
  /** from its NIP-11 document (the monitor's latest, else the crawl's) */
  name: string | null;
  software: string | null;
  version: string | null;
  // ---- NIP-66 health (null / empty until the monitor checked the relay) ----
  /** the latest check: the WebSocket opened and the relay answered as a Nostr relay */
  online: boolean | null;
  lastCheck: number | null;
  lastOnline: number | null;
  network: string | null;
  /** round-trip times of the latest check, ms */
  rttOpen: number | null;
  rttRead: number | null;
  rttWrite: number | null;
  /** online checks / checks over the last day, week and month (0..1) */
  uptimeDay: number | null;
  uptimeWeek: number | null;
  uptimeMonth: number | null;
  /** median and 90th percentile over the month's online checks, ms */
  rttOpenP50: number | null;
  rttOpenP90: number | null;
  rttReadP50: number | null;
  rttReadP90: number | null;
  /** supported NIPs as published in N tags (NIP-11's claims corrected by the probes), NIP-66 requirements (auth, !payment, …) and types */
  nips: number[];
  /** NIP-11's supported_nips as claimed */
  claimedNips: number[];
  /** claim against observation, in words ("claims NIP-50, refused: …", "serves NIP-45 without claiming it") */
  differences: string[];
  /** the latest probe outcome by NIP ({"50": "served", "77": "refused", "42": "challenge on demand"}) */
  probes: Record<string, string>;
  requirements: string[];
  types: string[];
  /** wss:// certificate: notAfter (ms since epoch) and issuer */
  sslExpires: number | null;
  sslIssuer: string | null;
  sslValid: boolean | null;
  /** why the latest check found it offline */
  checkError: string | null;
  /** events per kind received from it in its last crawl */
  eventsByKind: Record<string, number>;
  /** other URLs that reach this relay (docs/spider.md, "One relay under many URLs"): listed here, not as rows of their own */
  aliases: string[];
}

/** What the NIP-66 monitor knows of a relay (src/monitor keeps it; see docs/monitor.md). */
export interface RelayHealth {
  checkedAt: number;
  online: boolean;
  lastOnline: number | null;
  network: string;
  rtt: { open?: number; read?: number; write?: number };
  name: string | null;
  software: string | null;
  version: string | null;
  nips: number[];
  /** NIP-11's claim, the differences from what the probes saw, the probe outcomes (absent in records from before the probes) */
  claimedNips?: number[];
  differences?: string[];
  probes?: Record<string, string>;
  requirements: string[];
  types: string[];
  ssl: { valid: boolean; expires?: number; issuer?: string } | null;
  error: string | null;
  uptimeDay: number | null;
  uptimeWeek: number | null;
  uptimeMonth: number | null;
  rttOpen: { p50: number | null; p90: number | null };
  rttRead: { p50: number | null; p90: number | null };
}

export interface DirectoryView {
  /** ms since epoch */
  generatedAt: number;
  total: number;
  byState: Record<RelayState, number>;
  summary: DirectorySummary;
  rows: DirectoryRow[];
}

export interface ViewContext {
  now: number;
  backoff: BackoffPolicy;
  /** relays being fetched right now (the running spider) */
  crawling?: Iterable<string>;
  /** the spider's next scheduled run, when one is scheduled */
  nextRun?: number | null;
  /** the monitor's latest figures of a relay */
  health?: (url: string) => RelayHealth | undefined;
  /** events per kind of a relay's last crawl */
  eventsByKind?: (url: string) => Record<string, number> | undefined;
}

/** Quirks as short words for a table cell. */
export function quirkWords(q: Quirks): string[] {
  const out: string[] = [];
  if (q.cap) out.push(`cap ${q.cap}`);
  if (q.maxLimit) out.push(`limit ≤ ${q.maxLimit}`);
  if (q.bounds === 'exclusive') out.push('exclusive since/until');
  if (q.noEose) out.push('no EOSE');
  if (q.authRequired) out.push('auth required');
  if (q.rateLimited) out.push(`rate-limited ×${q.rateLimited}`);
  if (q.invalid) out.push(`${q.invalid} invalid`);
  if (q.flooded) out.push('floods');
  if (q.authorsRequired) out.push('answers only by author');
  if (q.maxAuthors) out.push(`authors ≤ ${q.maxAuthors} per filter`);
  if (q.pace) out.push(`paced ${q.pace} ms/REQ`);
  if (q.outsideWindow) out.push(`${q.outsideWindow} outside since/until`);
  return out;
}

export function directoryRow(rec: RelayRecord, ctx: ViewContext, crawling: ReadonlySet<string> = new Set(ctx.crawling ?? [])): DirectoryRow {
  const retryAt = RelayDirectory.retryAt(rec, ctx.backoff);
  let state: RelayState;
  if (crawling.has(rec.url)) state = 'crawling';
  else if (!rec.lastOutcome) state = 'new';
  else if (rec.lastOutcome === 'failed') state = retryAt > ctx.now ? 'backoff' : 'failed';
  else state = rec.lastOutcome;
  let nextAttempt: number | null = null;
  if (state === 'backoff') nextAttempt = Math.max(retryAt, ctx.nextRun ?? 0);
  else if (state !== 'crawling' && state !== 'refused' && state !== 'self' && rec.hop >= 0) nextAttempt = ctx.nextRun ?? null;
  return {
    url: rec.url,
    hop: rec.hop,
    state,
    lastCrawl: rec.lastAttempt ?? null,
    lastSuccess: rec.lastSuccess ?? null,
    fetched: rec.lastCounts ? rec.lastCounts.fetched : null,
    stored: rec.lastCounts ? rec.lastCounts.stored : null,
    storedTotal: rec.storedTotal,
    quirks: quirkWords(rec.quirks ?? {}),
    lastError: rec.lastError ?? null,
    failures: rec.failures,
    nextAttempt,
    firstSeen: rec.firstSeen,
    lastSeen: rec.lastSeen,
    ...healthFields(rec, ctx.health?.(rec.url)),
    eventsByKind: ctx.eventsByKind?.(rec.url) ?? {},
    aliases: rec.aliases ?? [],
  };
}

function healthFields(rec: RelayRecord, h: RelayHealth | undefined) {
  return {
    name: h?.name ?? rec.nip11?.name ?? null,
    software: h?.software ?? rec.nip11?.software ?? null,
    version: h?.version ?? rec.nip11?.version ?? null,
    online: h ? h.online : null,
    lastCheck: h?.checkedAt ?? null,
    lastOnline: h?.lastOnline ?? null,
    network: h?.network ?? null,
    rttOpen: h?.rtt.open ?? null,
    rttRead: h?.rtt.read ?? null,
    rttWrite: h?.rtt.write ?? null,
    uptimeDay: h?.uptimeDay ?? null,
    uptimeWeek: h?.uptimeWeek ?? null,
    uptimeMonth: h?.uptimeMonth ?? null,
    rttOpenP50: h?.rttOpen.p50 ?? null,
    rttOpenP90: h?.rttOpen.p90 ?? null,
    rttReadP50: h?.rttRead.p50 ?? null,
    rttReadP90: h?.rttRead.p90 ?? null,
    nips: h?.nips ?? rec.nip11?.supported_nips ?? [],
    claimedNips: h?.claimedNips ?? h?.nips ?? rec.nip11?.supported_nips ?? [],
    differences: h?.differences ?? [],
    probes: h?.probes ?? {},
    requirements: h?.requirements ?? [],
    types: h?.types ?? [],
    sslExpires: h?.ssl?.expires !== undefined ? h.ssl.expires * 1000 : null,
    sslIssuer: h?.ssl?.issuer ?? null,
    sslValid: h?.ssl ? h.ssl.valid : null,
    checkError: h && !h.online ? h.error : null,
  };
}

/** Every relay of the directory as rows, by hop then URL: one row per relay, its aliases on it, not rows of their own. */
export function directoryView(records: Iterable<RelayRecord>, ctx: ViewContext): DirectoryView {
  const crawling = new Set(ctx.crawling ?? []);
  const rows: DirectoryRow[] = [];
  for (const r of records) if (r.aliasOf === undefined) rows.push(directoryRow(r, ctx, crawling));
  const hopOrder = (h: number) => (h < 0 ? Number.MAX_SAFE_INTEGER : h);
  rows.sort((a, b) => hopOrder(a.hop) - hopOrder(b.hop) || (a.url < b.url ? -1 : a.url > b.url ? 1 : 0));
  const byState = Object.fromEntries(RELAY_STATES.map((s) => [s, 0])) as Record<RelayState, number>;
  for (const r of rows) byState[r.state]++;
  return { generatedAt: ctx.now, total: rows.length, byState, summary: directorySummary(rows, ctx.now), rows };
}

export interface DirectorySummary {
  /** relays the monitor has checked */
  checked: number;
  /** online at the latest check; online at least once in the last 24 h; in the last 7 days */
  online: { now: number; day: number; week: number };
  /** checked relays by NIP-66 network */
  byNetwork: Record<string, number>;
  /** checked relays by NIP-11 software and version (unknown: no document), most relays first */
  bySoftware: Array<{ software: string; version: string | null; relays: number; online: number }>;
  /** checked relays publishing each NIP (N tags: NIP-11's claims corrected by the probes), by NIP */
  byNip: Array<{ nip: number; relays: number }>;
  /** the finder for clients: relays online now that serve search, COUNT, negentropy, lowest latency first (at most 10 each) */
  serving: Array<{ nip: number; relays: number; fastest: Array<{ url: string; rtt: number | null }> }>;
  /** checked relays whose NIP-11 claims differ from what the probes saw */
  differing: number;
}

/** NIPs the finder answers for (`orbweaver directory --serves`, /directory.json?serves=), by name. */
export const SERVES_NAMES: Record<string, number> = { search: 50, count: 45, negentropy: 77, neg: 77, auth: 42 };
export const FINDER_NIPS = [50, 45, 77];

/** "50", "nip-50", "NIP50", "search", "count", "negentropy" -> the NIP; null otherwise. */
export function parseServes(s: string): number | null {
  const t = s.trim().toLowerCase();
  if (SERVES_NAMES[t] !== undefined) return SERVES_NAMES[t];
  const m = /^(?:nip-?)?(\d{1,3})$/.exec(t);
  return m ? Number(m[1]) : null;
}

/** A relay serves a NIP: what its latest probe saw where a probe tests that NIP, else what it publishes (N). */
export function serves(r: DirectoryRow, nip: number): boolean {
  const seen = r.probes[String(nip)];
  if (seen !== undefined) return nip === 42 ? seen.startsWith('challenge') : seen === 'served';
  return r.nips.includes(nip);
}

const latency = (r: DirectoryRow) => r.rttRead ?? r.rttOpen;

/** Relays online now that serve `nip`, lowest measured latency (read RTT, else open) first. */
export function servingNow(rows: readonly DirectoryRow[], nip: number): DirectoryRow[] {
  return rows.filter((r) => r.online === true && serves(r, nip)).sort((a, b) => (latency(a) ?? Infinity) - (latency(b) ?? Infinity) || (a.url < b.url ? -1 : a.url > b.url ? 1 : 0));
}

const HOUR_MS = 3_600_000;

/** The aggregate views over the rows (the directory's summary: by network, NIP, software, …). */
export function directorySummary(rows: readonly DirectoryRow[], now: number): DirectorySummary {
  const checked = rows.filter((r) => r.lastCheck !== null);
  const since = (ms: number) => checked.filter((r) => r.lastOnline !== null && r.lastOnline > now - ms).length;
  const byNetwork: Record<string, number> = {};
  const soft = new Map<string, { software: string; version: string | null; relays: number; online: number }>();
  const nips = new Map<number, number>();
  for (const r of checked) {
    byNetwork[r.network ?? 'clearnet'] = (byNetwork[r.network ?? 'clearnet'] ?? 0) + 1;
    const software = r.software ?? 'unknown';
    const key = `${software}\u0000${r.version ?? ''}`;
    let g = soft.get(key);
    if (!g) soft.set(key, (g = { software, version: r.version, relays: 0, online: 0 }));
    g.relays++;
    if (r.online) g.online++;
    for (const n of new Set(r.nips)) nips.set(n, (nips.get(n) ?? 0) + 1);
  }
  return {
    checked: checked.length,
    online: { now: checked.filter((r) => r.online).length, day: since(24 * HOUR_MS), week: since(7 * 24 * HOUR_MS) },
    byNetwork,
    bySoftware: [...soft.values()].sort((a, b) => b.relays - a.relays || (a.software < b.software ? -1 : a.software > b.software ? 1 : 0) || String(a.version ?? '').localeCompare(String(b.version ?? ''))),
    byNip: [...nips].map(([nip, relays]) => ({ nip, relays })).sort((a, b) => a.nip - b.nip),
    serving: FINDER_NIPS.map((nip) => {
      const on = servingNow(checked, nip);
      return { nip, relays: on.length, fastest: on.slice(0, 10).map((r) => ({ url: r.url, rtt: latency(r) })) };
    }),
    differing: checked.filter((r) => r.differences.length > 0).length,
  };
}

/** "2026-11-23 07:45 UTC": one zone everywhere (the page, the CLI, the logs). */
export function utc(ms: number | null, seconds = false): string {
  if (ms === null) return '-';
  return new Date(ms).toISOString().slice(0, seconds ? 19 : 16).replace('T', ' ') + ' UTC';
}

const pct = (v: number | null) => (v === null ? '-' : `${(v * 100).toFixed(v === 1 ? 0 : 1)}%`);
const ms = (v: number | null) => (v === null ? '-' : `${v} ms`);

/** Width of the text `orbweaver directory` prints: a terminal of 100 columns shows it unwrapped. */
export const TEXT_WIDTH = 100;

/** A short UTC time for the table (the year is in --relay and --json). */
const shortUtc = (ms: number | null) => (ms === null ? '-' : new Date(ms).toISOString().slice(5, 16).replace('T', ' '));

/** Lines of at most `width` characters, broken at ", " or spaces; continuation lines indented. */
export function wrap(text: string, width = TEXT_WIDTH, indent = '  '): string[] {
  const out: string[] = [];
  let rest = text;
  while (rest.length > width) {
    let cut = rest.lastIndexOf(' ', width);
    if (cut <= indent.length) cut = width;
    out.push(rest.slice(0, cut).trimEnd());
    rest = indent + rest.slice(cut).trimStart();
  }
  out.push(rest);
  return out;
}

/**
 * The view as the text table `orbweaver directory` prints, within TEXT_WIDTH columns: per relay its
 * URL, hop, state, last crawl, events fetched and stored, then either the next attempt or, once the
 * monitor checked relays, online, uptime over 7 days and read RTT. Quirks, errors, software, NIPs
 * and the rest are in `--relay <url>` and `--json`. A URL longer than its column gets a line of its
 * own (whole, so it can be copied into --relay), the row follows on the next line.
 */
export function formatDirectory(v: DirectoryView): string {
  if (v.total === 0) return 'the relay directory is empty: the spider has not run on this data directory (orbweaver spider --once, or ORBWEAVER_SPIDER=1)';
  const health = v.summary.checked > 0;
  const head = ['HOP', 'STATE', 'LAST CRAWL', 'FETCHED', 'STORED', ...(health ? ['ONLINE', 'UP 7D', 'RTT READ'] : ['NEXT ATTEMPT'])];
  const cells = v.rows.map((r) => [
    r.hop < 0 ? 'found' : String(r.hop), r.state, shortUtc(r.lastCrawl), r.fetched === null ? '-' : String(r.fetched), r.stored === null ? '-' : String(r.stored),
    ...(health ? [r.online === null ? '-' : r.online ? 'yes' : 'no', pct(r.uptimeWeek), ms(r.rttRead)] : [shortUtc(r.nextAttempt)]),
  ]);
  // numbers and short words only: each column as wide as its longest cell, at most 12
  const widths = head.map((h, i) => Math.min(12, Math.max(h.length, ...cells.map((c) => c[i].length))));
  const rest = widths.reduce((a, w) => a + w + 2, 0);
  const urlWidth = Math.max(3, Math.min(TEXT_WIDTH - rest, Math.max(...v.rows.map((r) => r.url.length))));
  const line = (url: string, c: string[]) => [url.padEnd(urlWidth), ...c.map((x, i) => x.slice(0, widths[i]).padEnd(widths[i]))].join('  ').trimEnd();
  const out = [line('URL', head)];
  v.rows.forEach((r, i) => {
    if (r.url.length <= urlWidth) out.push(line(r.url, cells[i]));
    else out.push(r.url.length > TEXT_WIDTH ? r.url.slice(0, TEXT_WIDTH - 1) + '…' : r.url, line('', cells[i]));
  });
  const states = Object.entries(v.byState).filter(([, n]) => n > 0).map(([s, n]) => `${n} ${s}`).join(', ');
  out.push('', ...wrap(`${v.total} relays: ${states} (times in UTC)`));
  if (health) {
    const s = v.summary;
    out.push(
      ...wrap(`monitor: ${s.checked} checked; online now ${s.online.now}, in the last 24 h ${s.online.day}, in the last 7 d ${s.online.week}`),
      ...wrap(`networks: ${Object.entries(s.byNetwork).map(([n, c]) => `${n} ${c}`).join(', ')}`),
      ...wrap(`software: ${s.bySoftware.slice(0, 10).map((g) => `${g.software}${g.version ? ' ' + g.version : ''} ${g.relays}`).join(', ')}`),
      ...wrap(`NIPs: ${s.byNip.map((g) => `${g.nip}: ${g.relays}`).join(', ') || '-'}`),
      ...wrap(`serving now (probed): ${s.serving.map((g) => `NIP-${g.nip} ${g.relays}`).join(', ')}; claims differ from the probes at ${s.differing} relays`),
    );
  }
  out.push(...wrap('errors, quirks, software, NIPs, probes: orbweaver directory --relay <url>; who serves a NIP now: --serves 50|45|77; every field: --json'));
  return out.join('\n');
}

/** The row of the relay `url` reaches: its own, or the row of the relay whose alias it is. */
export function rowOf(v: DirectoryView, url: string): DirectoryRow | undefined {
  return v.rows.find((r) => r.url === url) ?? v.rows.find((r) => r.aliases.includes(url));
}
