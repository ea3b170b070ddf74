// Complete fetch of one kind from one relay (seed 002): page backwards with `until`, de-duplicate by
// id, stop when a page brings nothing new. Handles relays that cap pages (learned cap), compare
// since/until exclusively (detected, then widened on the wire), never send EOSE (idle timeout),
// refuse with CLOSED/NOTICE (rate-limited: back off; bad limit: halve), and pages stuck inside one
// second (more events at one created_at than the relay returns): those slices are split by batches
// of authors already known, and what cannot be recovered is counted as truncated.
import type { Logger } from 'pino';
import type { RelayClient } from './client.js';
import type { EventSink } from './sink.js';
import type { Nip11Info } from './nip11.js';
import type { FetchCounts, KindCursor, Quirks } from './types.js';
import { runPage, wireFilter, type PageResult } from './page.js';
import type { EventVerifier } from '../nostr/verify.js';
import type { NostrEvent } from '../nostr/event.js';
import type { Filter } from '../nostr/filter.js';
import { isReplaceable } from '../nostr/kinds.js';

export interface FetchOptions {
  pageSize: number;
  idleTimeout: number;
  maxEventBytes: number;
  maxEventsPerRelay: number;
  /** first pause after a rate-limited answer; doubles on each retry */
  rateLimitBackoff: number;
  /** rate-limited answers tolerated per page before giving up on the kind */
  maxRetries: number;
  /** authors per query when splitting a stuck second */
  splitBatch: number;
  /** most queries spent on splitting stuck seconds, per relay */
  maxSplitQueries: number;
  /** most stuck slices split per kind and relay; more are counted in truncatedSlices unsplit */
  maxStuckSlices: number;
  /** lookback before a cursor's upper end, seconds */
  lookback: number;
}

export interface FetchContext {
  client: RelayClient;
  verifier: EventVerifier;
  sink: EventSink;
  nip11: Nip11Info | null;
  /** learned behaviour; updated in place */
  quirks: Quirks;
  /** updated in place */
  counts: FetchCounts;
  opts: FetchOptions;
  /** the relay's budget and the spider's stop */
  signal: AbortSignal;
  /** run-wide: ids already handed to the sink by any relay's fetch (skips repeated ingest work) */
  handed: Set<string>;
  /** pubkeys known so far (authors seen, follows), for splitting stuck seconds; grows */
  knownAuthors: Set<string>;
  /** every valid event fetched that this fetch had not seen, after it was handed on */
  onEvent?: (ev: NostrEvent) => void;
  log: Logger;
  /** mutable split-query budget shared by the kinds of one relay */
  splitQueriesLeft: { n: number };
}

/** A range of seconds [from, to] that held more events than the relay returns in one page. */
export type Slice = [number, number];

export interface KindFetch {
  kind: number;
  cursor?: KindCursor;
  complete: boolean;
  error?: string;
  stuck: Slice[];
  /** stuck slices beyond maxStuckSlices (counted, not split) */
  overflow: number;
  /** id -> created_at of every valid event seen for this kind */
  seen: Map<string, number>;
  /** authors seen for this kind (replaceable kinds: a relay holds one event per author) */
  authors: Set<string>;
  /** pages that got EOSE; pages that ended on the idle timeout */
  eose: number;
  silent: number;
}

class FetchError extends Error {}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() { clearTimeout(t); signal.removeEventListener('abort', done); resolve(); }
    signal.addEventListener('abort', done, { once: true });
  });

export function pageLimit(ctx: FetchContext): number {
  let l = ctx.opts.pageSize;
  const adv = ctx.nip11?.limitation?.max_limit;
  if (adv && adv < l) l = adv;
  if (ctx.quirks.maxLimit && ctx.quirks.maxLimit < l) l = ctx.quirks.maxLimit;
  if (ctx.quirks.cap && ctx.quirks.cap < l) l = ctx.quirks.cap;
  return Math.max(1, l);
}

const isFull = (ctx: FetchContext, n: number, limit: number, page: PageResult) =>
  page.flooded || n >= limit || (ctx.quirks.cap !== undefined && n >= ctx.quirks.cap);

/** One page with the refusal handling: rate-limited -> back off and retry; bad limit -> halve. */
async function request(ctx: FetchContext, f: Filter, k: KindFetch): Promise<PageResult> {
  let backoff = ctx.opts.rateLimitBackoff;
  let rateTries = 0;
  for (let guard = 0; guard < 64; guard++) {
    if (ctx.signal.aborted) throw new FetchError('budget exhausted or stopped');
    const page = await runPage(ctx.client, ctx.verifier, {
      filter: f,
      exclusive: ctx.quirks.bounds === 'exclusive',
      idleTimeout: ctx.opts.idleTimeout,
      maxEventBytes: ctx.opts.maxEventBytes,
      signal: ctx.signal,
    });
    const bad = page.invalid.shape + page.invalid.mismatch + page.invalid.signature + page.invalid.oversized + page.invalid.flood;
    if (bad) {
      ctx.counts.invalid += bad;
      ctx.quirks.invalid = (ctx.quirks.invalid ?? 0) + bad;
    }
    if (page.flooded) ctx.quirks.flooded = true;
    if (page.eose) { k.eose++; if (ctx.quirks.noEose) delete ctx.quirks.noEose; }
    if (page.timedOut) {
      k.silent++;
      // Events, then silence instead of EOSE: a relay that does not send EOSE.
      if (!k.eose && page.events.length > 0) ctx.quirks.noEose = true;
    }
    if (page.closed === undefined) return page;
    const reason = page.closed;
    const r = reason.toLowerCase();
    if (r.startsWith('connection:')) throw new FetchError(reason);
    if (r.startsWith('auth-required') || r.startsWith('restricted') || /\bauth/.test(r)) {
      ctx.quirks.authRequired = true;
      throw new FetchError(`refused: ${reason}`);
    }
    if (r.startsWith('rate-limited') || /rate.?limit|too many|slow down|too fast/.test(r)) {
      ctx.quirks.rateLimited = (ctx.quirks.rateLimited ?? 0) + 1;
      if (++rateTries > ctx.opts.maxRetries) throw new FetchError(`rate-limited: gave up after ${rateTries - 1} retries`);
      ctx.log.debug({ url: ctx.client.target.url, wait: backoff, reason }, 'spider: rate-limited, backing off');
      await sleep(backoff, ctx.signal);
      backoff *= 2;
      continue;
    }
    if (/limit/.test(r) && (f.limit ?? 0) > 1) {
      const next = Math.floor((f.limit as number) / 2);
      ctx.quirks.maxLimit = next;
      ctx.log.debug({ url: ctx.client.target.url, limit: next, reason }, 'spider: limit refused, halving');
      f = { ...f, limit: next };
      continue;
    }
    throw new FetchError(`closed: ${reason}`);
  }
  throw new FetchError('too many refusals');
}

/** Hands the page's new events to the sink, in parallel (the ingest path batches its writes). */
async function handOn(ctx: FetchContext, fresh: NostrEvent[]): Promise<void> {
  const c = ctx.counts;
  await Promise.all(fresh.map(async (ev) => {
    c.fetched++;
    ctx.knownAuthors.add(ev.pubkey);
    if ((ev.kind === 3 || ev.kind === 10000) && ctx.knownAuthors.size < 5_000_000) {
      let n = 0;
      for (const t of ev.tags) if (t[0] === 'p' && typeof t[1] === 'string' && /^[0-9a-f]{64}$/.test(t[1]) && n++ < 10_000) ctx.knownAuthors.add(t[1]);
    }
    if (ctx.handed.has(ev.id)) { c.duplicate++; ctx.onEvent?.(ev); return; }
    if (ctx.handed.size > 5_000_000) ctx.handed.clear();
    ctx.handed.add(ev.id);
    const status = await ctx.sink.put(ev);
    if (status === 'stored' || status === 'ephemeral') c.stored++;
    else if (status === 'duplicate') c.duplicate++;
    else c.rejected++;
    ctx.onEvent?.(ev);
  }));
}

/** Keeps the page's events this fetch has not seen yet, and records them as seen. */
function freshOf(k: KindFetch, events: NostrEvent[]): NostrEvent[] {
  const out: NostrEvent[] = [];
  for (const ev of events) {
    if (k.seen.has(ev.id)) continue;
    k.seen.set(ev.id, ev.created_at);
    if (isReplaceable(ev.kind)) k.authors.add(ev.pubkey);
    out.push(ev);
  }
  return out;
}

/**
 * Records a stuck slice for splitting. A window finds its slices newest first and never overlapping,
 * so only the last one can contain a new one (O(1), not a scan of all). Beyond maxStuckSlices per
 * kind a slice is not split at all: it is counted in truncatedSlices at once (a relay that makes
 * every second stuck, e.g. max_limit 1, cannot make us spend a query budget per second).
 */
function addSlice(ctx: FetchContext, k: KindFetch, s: Slice): void {
  const last = k.stuck[k.stuck.length - 1];
  if (last && last[0] <= s[0] && s[1] <= last[1]) return;
  if (k.stuck.length >= ctx.opts.maxStuckSlices) {
    if (k.overflow++ === 0) ctx.log.info({ url: ctx.client.target.url, kind: k.kind, max: ctx.opts.maxStuckSlices }, 'spider: too many stuck seconds; the rest are counted as unproven');
    ctx.counts.truncatedSlices++;
    return;
  }
  k.stuck.push(s);
}

/** Progress of one window: the lowest created_at reached; everything above it is complete. */
interface Progress { lowest: number }

/** Pages one window [since, until] (inclusive) newest to oldest until a page brings nothing new. */
async function pageWindow(ctx: FetchContext, k: KindFetch, since: number | undefined, until: number, p: Progress): Promise<void> {
  let U = until;
  let prevShort: number | null = null;
  let knownAtU = false; // an event at second U was seen (to detect exclusive bounds)
  let silentRetries = 0;
  for (;;) {
    if (since !== undefined && U < since) return;
    if (ctx.counts.fetched >= ctx.opts.maxEventsPerRelay) throw new FetchError(`event cap (${ctx.opts.maxEventsPerRelay}) reached`);
    const limit = pageLimit(ctx);
    const f: Filter = { kinds: [k.kind], until: U, limit };
    if (since !== undefined) f.since = since;
    const page = await request(ctx, f, k);
    const events = page.events;
    if (page.timedOut && events.length === 0 && !ctx.quirks.noEose) {
      // Silence from a relay that sends EOSE is not "nothing older": ask again, then give up.
      if (++silentRetries > 2) throw new FetchError(`no answer within ${ctx.opts.idleTimeout} ms`);
      continue;
    }
    silentRetries = 0;
    if (events.some((e) => e.created_at === U)) ctx.quirks.bounds ??= 'inclusive';
    else if (knownAtU && !page.exclusive && ctx.quirks.bounds !== 'inclusive' && !page.timedOut) {
      // An inclusive relay would have returned the event we know at second U first. (The page may
      // also have been sent just before another kind's subscription learned it: ask again, widened.)
      if (ctx.quirks.bounds === undefined) ctx.log.debug({ url: ctx.client.target.url }, 'spider: relay treats since/until as exclusive');
      ctx.quirks.bounds = 'exclusive';
      continue;
    }
    const fresh = freshOf(k, events);
    await handOn(ctx, fresh);
    if (prevShort !== null && fresh.length > 0) {
      // The previous page was shorter than asked although more events existed: the relay caps pages.
      if (!ctx.quirks.cap || prevShort > ctx.quirks.cap) ctx.quirks.cap = prevShort;
    }
    if (fresh.length === 0) {
      if (events.length > 0 && isFull(ctx, events.length, limit, page)) {
        // A full page of events already seen: more events in [s, U] than one page holds.
        let s = U;
        for (const e of events) if (e.created_at < s) s = e.created_at;
        addSlice(ctx, k, [s, U]);
        p.lowest = Math.min(p.lowest, s);
        U = s - 1;
        prevShort = null;
        knownAtU = false;
        continue;
      }
      return;
    }
    let m = Infinity;
    for (const e of fresh) if (e.created_at < m) m = e.created_at;
    p.lowest = Math.min(p.lowest, m);
    prevShort = events.length < limit && !page.flooded ? events.length : null;
    U = m;
    knownAtU = true;
  }
}

/** Fetches one kind from the relay: the part newer than its cursor, then any unfinished backfill. */
export async function fetchKind(ctx: FetchContext, kind: number, cur: KindCursor | undefined, now: number): Promise<KindFetch> {
  const k: KindFetch = { kind, complete: false, stuck: [], overflow: 0, seen: new Map(), authors: new Set(), eose: 0, silent: 0, cursor: cur ? { ...cur } : undefined };
  let p: Progress = { lowest: Infinity };
  let stage: 'full' | 'new' | 'backfill' = cur ? 'new' : 'full';
  try {
    if (!cur) {
      await pageWindow(ctx, k, undefined, now, p);
      k.cursor = { lo: 0, hi: now };
    } else {
      await pageWindow(ctx, k, Math.max(0, cur.hi - ctx.opts.lookback), now, p);
      k.cursor = { lo: cur.lo, hi: now };
      if (cur.lo > 0) {
        stage = 'backfill';
        p = { lowest: Infinity };
        await pageWindow(ctx, k, undefined, cur.lo - 1, p);
        k.cursor.lo = 0;
      }
    }
    k.complete = true;
  } catch (e) {
    if (!(e instanceof FetchError)) throw e;
    k.error = e.message;
    // The window that was cut is complete above the lowest event it reached.
    if (p.lowest !== Infinity) {
      const lo = p.lowest + 1;
      if (stage === 'full') k.cursor = { lo, hi: now };
      else if (stage === 'backfill' && k.cursor) k.cursor.lo = Math.min(k.cursor.lo, lo);
      else if (stage === 'new' && cur && lo <= cur.hi + 1) k.cursor = { lo: cur.lo, hi: now };
    }
  }
  return k;
}

/**
 * Recovers the events of stuck slices by asking per batch of known authors (halving a batch whose
 * answer is full), then counts what may still be missing: exactly with NIP-45 COUNT when the relay
 * supports it, else as one truncated slice. Honours the relay's budget and the spider's stop at every
 * step: once aborted, the slices not done are counted as truncated without another query, and a
 * COUNT is never awaited past the abort. A relay that advertises NIP-45 but leaves one COUNT
 * unanswered is asked no more COUNTs in this run (quirks.noCount).
 */
export async function splitSlices(ctx: FetchContext, k: KindFetch): Promise<void> {
  // Candidates once per kind (not per slice): a relay keeps one event per author of a replaceable
  // kind, so authors already seen for the kind are done.
  let authors: string[] | null = null;
  const candidates = () => authors ??= isReplaceable(k.kind) ? [...ctx.knownAuthors].filter((a) => !k.authors.has(a)) : [...ctx.knownAuthors];
  for (let i = 0; i < k.stuck.length; i++) {
    if (ctx.signal.aborted) {
      ctx.counts.truncatedSlices += k.stuck.length - i;
      ctx.log.info({ url: ctx.client.target.url, kind: k.kind, slices: k.stuck.length - i }, 'spider: budget exhausted or stopped; stuck seconds left unsplit');
      return;
    }
    const [s, u] = k.stuck[i];
    const queue: string[][] = [];
    if (ctx.splitQueriesLeft.n > 0) {
      const list = candidates();
      for (let j = 0; j < list.length; j += ctx.opts.splitBatch) queue.push(list.slice(j, j + ctx.opts.splitBatch));
    }
    let unresolved = false;
    try {
      while (queue.length > 0) {
        if (ctx.splitQueriesLeft.n <= 0) { unresolved = true; break; }
        ctx.splitQueriesLeft.n--;
        const batch = queue.shift() as string[];
        const limit = pageLimit(ctx);
        const page = await request(ctx, { kinds: [k.kind], authors: batch, since: s, until: u, limit }, k);
        await handOn(ctx, freshOf(k, page.events));
        if (isFull(ctx, page.events.length, limit, page)) {
          if (batch.length > 1) {
            const h = Math.ceil(batch.length / 2);
            queue.push(batch.slice(0, h), batch.slice(h));
          } else unresolved = true; // one author with more events in the slice than a page holds
        }
      }
    } catch (e) {
      if (!(e instanceof FetchError)) throw e;
      unresolved = true;
    }
    const supportsCount = (ctx.nip11?.supported_nips?.includes(45) ?? false) && !ctx.quirks.noCount;
    let total: number | null = null;
    if (supportsCount && ctx.client.isOpen && !ctx.signal.aborted) {
      total = await ctx.client.count([wireFilter({ kinds: [k.kind], since: s, until: u }, ctx.quirks.bounds === 'exclusive')], ctx.opts.idleTimeout, ctx.signal);
      if (total === null && !ctx.signal.aborted) {
        ctx.quirks.noCount = true;
        ctx.log.info({ url: ctx.client.target.url }, 'spider: COUNT not answered; no more COUNTs to this relay in this run');
      }
    }
    if (total !== null) {
      let inSlice = 0;
      for (const t of k.seen.values()) if (t >= s && t <= u) inSlice++;
      const missing = Math.max(0, total - inSlice);
      ctx.counts.truncated += missing;
      if (missing > 0) ctx.log.warn({ url: ctx.client.target.url, kind: k.kind, from: s, to: u, missing }, 'spider: events stuck inside one second could not all be fetched');
    } else {
      // No COUNT (unsupported, unanswered or aborted): the split cannot be proven complete.
      ctx.counts.truncatedSlices++;
      ctx.log.info({ url: ctx.client.target.url, kind: k.kind, from: s, to: u, unresolved }, 'spider: stuck second split by known authors; completeness unproven');
    }
  }
}
