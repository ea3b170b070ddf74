// Complete fetch of one kind from one relay: page backwards with `until`, de-duplicate by
// id, stop when a page brings nothing new. Handles relays that cap pages (learned cap), compare
// since/until exclusively (detected, then widened on the wire), never send EOSE (idle timeout),
// refuse with CLOSED/NOTICE (rate-limited: back off and learn the pace, pace.ts; bad limit: halve;
// a filter without authors refused: AuthorsRefusal, paged by author instead, by-authors.ts), read
// `until <= 0` as no until (never sent: second 0 ends a window), send events outside the window
// (dropped, but they fill the page), and pages stuck inside one second (more events at one
// created_at than the relay returns): those seconds are split by batches of known authors, and
// what cannot be recovered is counted as truncated.
//
// Memory does not grow with the events fetched: paging newest to oldest, an event already seen can
// only come back at the current `until` second, so a window remembers the ids of that one second
// (its "edge"), not every id; stuck seconds keep their own ids until split, at most maxStuckSlices
// per kind; authors live in LMDB (authors.ts) and per-kind "seen" authors in a Bloom filter.
import type { Logger } from 'pino';
import type { RelayClient } from '../../remote/client.js';
import type { Nip11Info } from '../../remote/nip11.js';
import type { FetchCounts, KindCursor, Quirks } from '../../directory/types.js';
import type { Admitter } from './admit.js';
import type { AuthorBook } from './authors.js';
import { HexBloom } from './bloom.js';
import type { Slots } from './slots.js';
import type { Pacer } from './pace.js';
import { runPage, wireFilter, type PageResult } from './page.js';
import type { NostrEvent } from '../../nostr/event.js';
import type { Filter } from '../../nostr/filter.js';
import { isReplaceable } from '../../nostr/kinds.js';
import type { HomeItems } from './negentropy.js';
import { sleep } from '../../lib/sleep.js';

export interface FetchOptions {
  pageSize: number;
  idleTimeout: number;
  /** ms from a page's REQ to its end, whatever the relay sends (remote/read.ts) */
  pageDeadline: number;
  /** bytes of frames one page may bring before it is cut (more may follow: paging goes on) */
  maxPageBytes: number;
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
  nip11: Nip11Info | null;
  /** learned behaviour; updated in place */
  quirks: Quirks;
  /** updated in place */
  counts: FetchCounts;
  opts: FetchOptions;
  /** the relay's budget and the spider's stop */
  signal: AbortSignal;
  /** checks the events pages bring and hands them on (admit.ts) */
  admitter: Admitter;
  /** authors known so far, for splitting stuck seconds */
  authors: AuthorBook;
  /** process-wide bound on pages held in memory: a page takes a slot from its REQ until it is admitted */
  pages: Slots;
  log: Logger;
  /** mutable split-query budget shared by the kinds of one relay */
  splitQueriesLeft: { n: number };
  /** NIP-77: the home's item sets, when this process reads the home's store (negentropy.ts) */
  home?: HomeItems;
  /** spaces the REQs to this relay by the pace its rate limit allows (quirks.pace) */
  pacer: Pacer;
}

/** One second that held more events than the relay returns in one page, with the ids seen in it. */
export interface StuckSecond {
  at: number;
  ids: Set<string>;
}

export interface KindFetch {
  kind: number;
  cursor?: KindCursor;
  complete: boolean;
  error?: string;
  stuck: StuckSecond[];
  /** stuck seconds beyond maxStuckSlices (counted, not split) */
  overflow: number;
  /** valid events this fetch received for the kind */
  events: number;
  /**
   * Replaceable kinds: authors seen for the kind (a relay holds one event per author, so a split
   * need not ask them again). A Bloom filter: a false "seen" leaves an author out of a split, which
   * COUNT then reports as missing; it never drops a fetched event.
   */
  seenAuthors: HexBloom | null;
  /** pages that got EOSE; pages that ended on the idle timeout */
  eose: number;
  silent: number;
  /** reconciled with NIP-77 (negentropy.ts) instead of paged */
  synced: boolean;
  /** the relay refused this kind's filter for naming no authors (AuthorsRefusal): by-authors.ts pages it by author */
  needsAuthors?: string;
  /** paged by authors: the AuthorBook position its sweep reached the end at (WorkResult.authorsAt) */
  authorsAt?: number;
  /** paged by authors and cut (budget, errors) at this AuthorBook position (quirks.authorsFrom) */
  authorsCut?: number;
}

/** A fetch that cannot go on (refused, silent, cut off): the kind ends with this error. */
export class FetchError extends Error {}

/** The relay refused a filter that names no authors, saying it needs them (or is too broad without them). */
export class AuthorsRefusal extends FetchError {}

/**
 * A refusal that asks for authors: "authors"/"pubkeys" named, or the filter called too broad or empty.
 * Tested before the auth-required test, whose /\bauth/ also matches "authors".
 */
/** The relay takes fewer authors in one filter than it was sent (by-authors.ts halves the batch). */
export class AuthorsCapRefusal extends FetchError {}

/** A refusal naming authors that says there were too many of them. */
const TOO_MANY = /too many|too long|max|limit|exceed|at most/;

/** Refusals asking for authors that a page naming authors takes as another subscription's NOTICE, before it believes them. */
const MAX_STRAY_NOTICES = 3;

const NEEDS_AUTHORS = /\b(authors?|pubkeys?)\b|too (broad|wide|general)|(empty|unscoped) filter/;

export function pageLimit(ctx: FetchContext): number {
  let l = ctx.opts.pageSize;
  const adv = ctx.nip11?.limitation?.max_limit;
  if (adv && adv < l) l = adv;
  if (ctx.quirks.maxLimit && ctx.quirks.maxLimit < l) l = ctx.quirks.maxLimit;
  if (ctx.quirks.cap && ctx.quirks.cap < l) l = ctx.quirks.cap;
  return Math.max(1, l);
}

// A page cut by its bytes or its deadline is full: more may follow. One whose EOSE said NIP-67
// "finish" is not, however many events it had: the relay sent every match. Events the relay sent
// outside the window took places in the page as much as valid ones: a page they fill is full.
const isFull = (ctx: FetchContext, n: number, limit: number, page: PageResult) => {
  const sent = n + page.outside;
  return !page.finish && (page.flooded || page.cut !== undefined || sent >= limit || (ctx.quirks.cap !== undefined && sent >= ctx.quirks.cap));
};

/** A page and the memory slot it holds until the caller is done with its events. */
type HeldPage = PageResult & { release(): void };

/** Admits a window of a page's checked events; returns the valid ones (see page.ts). */
export type WindowAdmit = (evs: NostrEvent[]) => Promise<NostrEvent[]>;

/**
 * One page, holding a page slot (released by the caller once done with its events, or here when
 * the request fails), with the refusal handling: rate-limited -> back off and retry; bad limit -> halve.
 * Its events are admitted window by window as they arrive (`admitWindow`, default: all new to the fetch).
 */
export async function request(ctx: FetchContext, f: Filter, k: KindFetch, admitWindow: WindowAdmit = (evs) => admit(ctx, k, evs)): Promise<HeldPage> {
  const release = await ctx.pages.take(ctx.signal);
  if (!release) throw new FetchError('budget exhausted or stopped');
  try {
    return Object.assign(await requestPage(ctx, f, k, admitWindow), { release });
  } catch (e) {
    release();
    throw e;
  }
}

async function requestPage(ctx: FetchContext, f: Filter, k: KindFetch, admitWindow: WindowAdmit): Promise<PageResult> {
  let backoff = ctx.opts.rateLimitBackoff;
  let rateTries = 0;
  let strays = 0;
  for (let guard = 0; guard < 64; guard++) {
    if (ctx.signal.aborted) throw new FetchError('budget exhausted or stopped');
    const sentAt = await ctx.pacer.turn(ctx.signal);
    if (ctx.signal.aborted) throw new FetchError('budget exhausted or stopped');
    const page = await runPage(ctx.client, {
      filter: f,
      exclusive: ctx.quirks.bounds === 'exclusive',
      idleTimeout: ctx.opts.idleTimeout,
      deadline: ctx.opts.pageDeadline,
      maxBytes: ctx.opts.maxPageBytes,
      maxEventBytes: ctx.opts.maxEventBytes,
      signal: ctx.signal,
      admit: admitWindow,
    });
    const bad = page.invalid.shape + page.invalid.mismatch + page.invalid.oversized + page.invalid.flood;
    if (bad) {
      ctx.counts.invalid += bad;
      ctx.quirks.invalid = (ctx.quirks.invalid ?? 0) + bad;
    }
    if (page.outside) {
      ctx.counts.invalid += page.outside;
      ctx.quirks.outsideWindow = (ctx.quirks.outsideWindow ?? 0) + page.outside;
    }
    if (page.flooded) ctx.quirks.flooded = true;
    // a relay that mostly lies is cut off for this run: its connection (every kind's pages) ends
    // at once, without reading what it sent meanwhile
    if (page.hostile) {
      const why = 'cut off: most events it sent were forged, malformed or outside the filter';
      ctx.client.terminate(why);
      throw new FetchError(why);
    }
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
    if (NEEDS_AUTHORS.test(r)) {
      if (!f.authors && !f.ids) throw new AuthorsRefusal(`refused without authors: ${reason}`);
      if ((f.authors?.length ?? 0) > 1 && TOO_MANY.test(r)) throw new AuthorsCapRefusal(`too many authors: ${reason}`);
      // This filter names authors: the refusal was a NOTICE meant for another subscription on the
      // connection (a kind asked without authors at the same time; a NOTICE names none). Asked again.
      if (++strays <= MAX_STRAY_NOTICES) continue;
      throw new FetchError(`refused although it names authors: ${reason}`);
    }
    if (r.startsWith('auth-required') || r.startsWith('restricted') || /\bauth/.test(r)) {
      ctx.quirks.authRequired = true;
      throw new FetchError(`refused: ${reason}`);
    }
    if (r.startsWith('rate-limited') || /rate.?limit|too many|slow down|too fast/.test(r)) {
      ctx.quirks.rateLimited = (ctx.quirks.rateLimited ?? 0) + 1;
      ctx.pacer.slower(sentAt);
      if (++rateTries > ctx.opts.maxRetries) throw new FetchError(`rate-limited: gave up after ${rateTries - 1} retries`);
      ctx.log.debug({ url: ctx.client.target.url, wait: backoff, pace: ctx.quirks.pace, reason }, 'spider: rate-limited, backing off');
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

/** Admits events new to this fetch (a page's window); returns the valid ones and notes their authors. */
export async function admit(ctx: FetchContext, k: KindFetch, evs: NostrEvent[]): Promise<NostrEvent[]> {
  if (evs.length === 0) return evs;
  const invalidBefore = ctx.counts.invalid;
  const valid = await ctx.admitter.admit(evs);
  const bad = ctx.counts.invalid - invalidBefore;
  if (bad) ctx.quirks.invalid = (ctx.quirks.invalid ?? 0) + bad;
  k.events += valid.length;
  if (k.seenAuthors) for (const ev of valid) k.seenAuthors.add(ev.pubkey);
  return valid;
}

/**
 * Records a stuck second for splitting, keeping the ids seen in it. At most maxStuckSlices per
 * kind are kept; beyond that a second is counted in truncatedSlices at once and its ids dropped (a
 * relay that makes every second stuck, e.g. max_limit 1, cannot make us spend a query budget or
 * memory per second). A window finds its stuck seconds newest first, one at a time: no scan.
 */
function addStuck(ctx: FetchContext, k: KindFetch, at: number, ids: Set<string>): void {
  if (k.stuck.length >= ctx.opts.maxStuckSlices) {
    if (k.overflow++ === 0) ctx.log.info({ url: ctx.client.target.url, kind: k.kind, max: ctx.opts.maxStuckSlices }, 'spider: too many stuck seconds; the rest are counted as unproven');
    ctx.counts.truncatedSlices++;
    return;
  }
  k.stuck.push({ at, ids });
}

/** Progress of one window: the lowest created_at reached; everything above it is complete. */
export interface Progress { lowest: number }

/**
 * Pages one window [since, until] (inclusive) newest to oldest until a page brings nothing new; with
 * `authors`, only theirs (a relay that answers only REQs naming authors: by-authors.ts).
 */
export async function pageWindow(ctx: FetchContext, k: KindFetch, since: number | undefined, until: number, p: Progress, authors?: string[]): Promise<void> {
  let U = until;
  // Every event this window has seen is at or above U, so a page (created_at <= U) can only repeat
  // the ones at U: their ids are all the window needs to tell new events from repeats.
  let edge = new Set<string>();
  let prevShort: number | null = null;
  let silentRetries = 0;
  for (;;) {
    if (since !== undefined && U < since) return;
    if (U < 1) {
      // Only after a stuck second 1: second 0 cannot be asked alone (`until: 0` reads as no until
      // on some relays, below), so it is left to the split by authors, which asks it with second 1.
      addStuck(ctx, k, 0, new Set());
      return;
    }
    if (ctx.counts.fetched >= ctx.opts.maxEventsPerRelay) throw new FetchError(`event cap (${ctx.opts.maxEventsPerRelay}) reached`);
    const limit = pageLimit(ctx);
    const f: Filter = { kinds: [k.kind], until: U, limit };
    if (authors) f.authors = authors;
    if (since !== undefined) f.since = since;
    // Each window of the page: repeats of the edge are valid already (no second admission), the
    // rest is admitted; the page keeps the valid ones.
    const page = await request(ctx, f, k, async (evs) => {
      const unseen = evs.filter((e) => !edge.has(e.id));
      const ok = await admit(ctx, k, unseen);
      return unseen.length === evs.length ? ok : [...evs.filter((e) => edge.has(e.id)), ...ok];
    });
    try {
      const events = page.events;
      if ((page.timedOut || page.cut === 'deadline') && events.length === 0 && !ctx.quirks.noEose) {
        // Silence from a relay that sends EOSE is not "nothing older": ask again, then give up.
        if (++silentRetries > 2) throw new FetchError(`no answer within ${ctx.opts.idleTimeout} ms`);
        continue;
      }
      silentRetries = 0;
      if (events.some((e) => e.created_at === U)) ctx.quirks.bounds ??= 'inclusive';
      else if (edge.size > 0 && !page.exclusive && ctx.quirks.bounds !== 'inclusive' && !page.timedOut) {
        // An inclusive relay would have returned the events we know at second U first. (The page may
        // also have been sent just before another kind's subscription learned it: ask again, widened.)
        if (ctx.quirks.bounds === undefined) ctx.log.debug({ url: ctx.client.target.url }, 'spider: relay treats since/until as exclusive');
        ctx.quirks.bounds = 'exclusive';
        continue;
      }
      const fresh = events.filter((e) => !edge.has(e.id));
      const valid = events.length;
      if (prevShort !== null && fresh.length > 0) {
        // The previous page was shorter than asked although more events existed: the relay caps pages.
        if (!ctx.quirks.cap || prevShort > ctx.quirks.cap) ctx.quirks.cap = prevShort;
      }
      if (fresh.length === 0) {
        if (valid > 0 && isFull(ctx, valid, limit, page)) {
          // A full page of events already seen, all at second U: more events at U than a page holds.
          addStuck(ctx, k, U, edge);
          p.lowest = Math.min(p.lowest, U);
          U -= 1;
          edge = new Set();
          prevShort = null;
          continue;
        }
        return;
      }
      let m = Infinity;
      for (const e of fresh) if (e.created_at < m) m = e.created_at;
      p.lowest = Math.min(p.lowest, m);
      const sent = valid + page.outside; // what the relay spent places of the page on
      prevShort = sent < limit && !page.flooded && !page.cut ? sent : null;
      if (m < U) edge = new Set();
      for (const e of fresh) if (e.created_at === m) edge.add(e.id);
      U = m;
      // NIP-67: the relay sent every match of this page's filter: no page after it (the one more REQ
      // that would only have shown nothing older)
      if (page.finish) {
        ctx.quirks.finish = true;
        return;
      }
      if (U === 0) {
        // Nothing is older than second 0, and the next page would ask `until: 0`, which some
        // indexers read as no until at all: they answer with their newest page again, and a
        // client paging on gets it forever. So second 0 ends the window without that page, unless
        // this page was full (more events dated 0 than it held: a stuck second, split by authors).
        if (isFull(ctx, valid, limit, page)) addStuck(ctx, k, 0, edge);
        return;
      }
    } finally {
      page.release(); // its events are admitted (or dropped): the next page may come
    }
  }
}

/** Fetches one kind from the relay: the part newer than its cursor, then any unfinished backfill. */
export function newKindFetch(kind: number, cur: KindCursor | undefined): KindFetch {
  return {
    kind, complete: false, stuck: [], overflow: 0, events: 0, eose: 0, silent: 0, synced: false, cursor: cur ? { ...cur } : undefined,
    seenAuthors: isReplaceable(kind) ? new HexBloom(22, 4) : null,
  };
}

export async function fetchKind(ctx: FetchContext, kind: number, cur: KindCursor | undefined, now: number): Promise<KindFetch> {
  const k = newKindFetch(kind, cur);
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
        // from second 1 at least: a window never starts at `until: 0` (see pageWindow)
        await pageWindow(ctx, k, undefined, Math.max(1, cur.lo - 1), p);
        k.cursor.lo = 0;
      }
    }
    k.complete = true;
  } catch (e) {
    if (!(e instanceof FetchError)) throw e;
    k.error = e.message;
    if (e instanceof AuthorsRefusal) k.needsAuthors = e.message;
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
 * Recovers the events of stuck seconds by asking per batch of known authors (halving a batch whose
 * answer is full), then counts what may still be missing: exactly with NIP-45 COUNT when the relay
 * supports it, else as one truncated slice. Honours the relay's budget and the spider's stop at every
 * step: once aborted, the seconds not done are counted as truncated without another query, and a
 * COUNT is never awaited past the abort. A relay that advertises NIP-45 but leaves one COUNT
 * unanswered is asked no more COUNTs in this run (quirks.noCount).
 */
export async function splitSlices(ctx: FetchContext, k: KindFetch): Promise<void> {
  // Candidates once per kind (not per second), no more than the split budget can ask: a relay keeps
  // one event per author of a replaceable kind, so authors already seen for the kind are left out.
  let authors: string[] | null = null;
  const seen = k.seenAuthors;
  for (let i = 0; i < k.stuck.length; i++) {
    const slice = k.stuck[i]!;
    if (ctx.signal.aborted) {
      ctx.counts.truncatedSlices += k.stuck.length - i;
      ctx.log.info({ url: ctx.client.target.url, kind: k.kind, seconds: k.stuck.length - i }, 'spider: budget exhausted or stopped; stuck seconds left unsplit');
      break;
    }
    const { at, ids } = slice;
    const queue: string[][] = [];
    if (ctx.splitQueriesLeft.n > 0) {
      authors ??= await ctx.authors.candidates(ctx.splitQueriesLeft.n * ctx.opts.splitBatch, seen ? (a) => seen.has(a) : undefined);
      const per = Math.max(1, Math.min(ctx.opts.splitBatch, ctx.quirks.maxAuthors ?? Infinity));
      for (let j = 0; j < authors.length; j += per) queue.push(authors.slice(j, j + per));
    }
    let unresolved = false;
    try {
      while (queue.length > 0) {
        if (ctx.splitQueriesLeft.n <= 0) { unresolved = true; break; }
        ctx.splitQueriesLeft.n--;
        const batch = queue.shift() as string[];
        const limit = pageLimit(ctx);
        // each window: the events of the second seen before stay valid, the rest is admitted
        // second 0 is asked with second 1 (never `until: 0` on the wire): their events are new to `ids` and admitted as any
        let page: HeldPage;
        try {
          page = await request(ctx, { kinds: [k.kind], authors: batch, since: at, until: Math.max(at, 1), limit }, k, async (evs) => {
            const seenBefore = evs.filter((e) => ids.has(e.id));
            const ok = await admit(ctx, k, evs.filter((e) => !ids.has(e.id)));
            for (const e of ok) ids.add(e.id);
            return seenBefore.length ? [...seenBefore, ...ok] : ok;
          });
        } catch (e) {
          // more authors than the relay takes in one filter: halved, remembered (quirks.maxAuthors)
          if (!(e instanceof AuthorsCapRefusal) || batch.length < 2) throw e;
          const h = Math.ceil(batch.length / 2);
          ctx.quirks.maxAuthors = Math.min(ctx.quirks.maxAuthors ?? Infinity, h);
          queue.unshift(batch.slice(0, h), batch.slice(h));
          continue;
        }
        page.release();
        if (isFull(ctx, page.events.length, limit, page)) {
          if (batch.length > 1) {
            const h = Math.ceil(batch.length / 2);
            queue.push(batch.slice(0, h), batch.slice(h));
          } else unresolved = true; // one author with more events in the second than a page holds
        }
      }
    } catch (e) {
      if (!(e instanceof FetchError)) throw e;
      unresolved = true;
    }
    const supportsCount = (ctx.nip11?.supported_nips?.includes(45) ?? false) && !ctx.quirks.noCount;
    let total: number | null = null;
    // second 0 cannot be counted alone (it would be counted with second 1): unproven, below
    if (supportsCount && at > 0 && ctx.client.isOpen && !ctx.signal.aborted) {
      await ctx.pacer.turn(ctx.signal);
      total = await ctx.client.count([wireFilter({ kinds: [k.kind], since: at, until: at }, ctx.quirks.bounds === 'exclusive')], ctx.opts.idleTimeout, ctx.signal);
      if (total === null && !ctx.signal.aborted) {
        ctx.quirks.noCount = true;
        ctx.log.info({ url: ctx.client.target.url }, 'spider: COUNT not answered; no more COUNTs to this relay in this run');
      }
    }
    if (total !== null) {
      const missing = Math.max(0, total - ids.size);
      ctx.counts.truncated += missing;
      if (missing > 0) ctx.log.warn({ url: ctx.client.target.url, kind: k.kind, second: at, missing }, 'spider: events stuck inside one second could not all be fetched');
    } else {
      // No COUNT (unsupported, unanswered or aborted): the split cannot be proven complete.
      ctx.counts.truncatedSlices++;
      ctx.log.info({ url: ctx.client.target.url, kind: k.kind, second: at, unresolved }, 'spider: stuck second split by known authors; completeness unproven');
    }
    slice.ids = new Set(); // done with it
  }
}
