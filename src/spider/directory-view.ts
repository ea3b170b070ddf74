// The relay directory as operators read it: one row per relay the spider knows, with its hop,
// state, last crawl, events, quirks in words, last error and next attempt. One function makes the
// rows for every reader — the status page's table, /status.json and `orbweaver directory` — so
// they always agree; a later module (NIP-66 health) adds columns by adding fields to the row here.
import { RelayDirectory, type BackoffPolicy, type RelayRecord } from './directory.js';
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
  /** hop at which the latest run found it (0: named by a seed's list) */
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
  /** from its NIP-11 document */
  name: string | null;
  software: string | null;
}

export interface DirectoryView {
  /** ms since epoch */
  generatedAt: number;
  total: number;
  byState: Record<RelayState, number>;
  rows: DirectoryRow[];
}

export interface ViewContext {
  now: number;
  backoff: BackoffPolicy;
  /** relays being fetched right now (the running spider) */
  crawling?: Iterable<string>;
  /** the spider's next scheduled run, when one is scheduled */
  nextRun?: number | null;
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
  else if (state !== 'crawling' && state !== 'refused' && state !== 'self') nextAttempt = ctx.nextRun ?? null;
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
    name: rec.nip11?.name ?? null,
    software: rec.nip11?.software ?? null,
  };
}

/** Every relay of the directory as rows, by hop then URL. */
export function directoryView(records: Iterable<RelayRecord>, ctx: ViewContext): DirectoryView {
  const crawling = new Set(ctx.crawling ?? []);
  const rows: DirectoryRow[] = [];
  for (const r of records) rows.push(directoryRow(r, ctx, crawling));
  rows.sort((a, b) => a.hop - b.hop || (a.url < b.url ? -1 : a.url > b.url ? 1 : 0));
  const byState = Object.fromEntries(RELAY_STATES.map((s) => [s, 0])) as Record<RelayState, number>;
  for (const r of rows) byState[r.state]++;
  return { generatedAt: ctx.now, total: rows.length, byState, rows };
}

/** "2026-11-23 07:45 UTC": one zone everywhere (the page, the CLI, the logs). */
export function utc(ms: number | null, seconds = false): string {
  if (ms === null) return '-';
  return new Date(ms).toISOString().slice(0, seconds ? 19 : 16).replace('T', ' ') + ' UTC';
}

/** The view as the text table `orbweaver directory` prints. */
export function formatDirectory(v: DirectoryView): string {
  if (v.total === 0) return 'the relay directory is empty: the spider has not run on this data directory (orbweaver spider --once, or ORBWEAVER_SPIDER=1)';
  const head = ['URL', 'HOP', 'STATE', 'LAST CRAWL', 'FETCHED', 'STORED', 'NEXT ATTEMPT', 'QUIRKS', 'LAST ERROR'];
  const cells = v.rows.map((r) => [
    r.url, String(r.hop), r.state, utc(r.lastCrawl), r.fetched === null ? '-' : String(r.fetched), r.stored === null ? '-' : String(r.stored),
    r.nextAttempt === null ? '-' : utc(r.nextAttempt), r.quirks.join(', ') || '-', (r.lastError ?? '-').slice(0, 80),
  ]);
  const widths = head.map((h, i) => Math.min(60, Math.max(h.length, ...cells.map((c) => c[i].length))));
  const line = (c: string[]) => c.map((x, i) => (i === c.length - 1 ? x : x.slice(0, widths[i]).padEnd(widths[i]))).join('  ').trimEnd();
  const states = Object.entries(v.byState).filter(([, n]) => n > 0).map(([s, n]) => `${n} ${s}`).join(', ');
  return [line(head), ...cells.map(line), '', `${v.total} relays: ${states} (times in UTC)`].join('\n');
}
