// Shapes shared by the spider's parts. The unit of work (WorkItem -> WorkResult) is plain JSON so
// it can travel through a queue (in-process now, Redis later) to a worker on another machine.
import type { Nip11Info } from '../remote/nip11.js';

/** What we learned about a relay's behaviour; remembered across runs in the directory. */
export interface Quirks {
  /** most events the relay returns per REQ even when asked for more (strfry: 500) */
  cap?: number;
  /** largest `limit` the relay accepted after refusing a bigger one (halved on refusal) */
  maxLimit?: number;
  /** since/until compared exclusively (nostr-rs-relay) or inclusively (strfry, nostream), once observed */
  bounds?: 'inclusive' | 'exclusive';
  /** ended a subscription's stored events without EOSE (idle timeout used instead) */
  noEose?: boolean;
  /** answered auth-required/restricted: we do not authenticate, so it is skipped until it stops */
  authRequired?: boolean;
  /** times it answered rate-limited in the last run */
  rateLimited?: number;
  /** invalid events (bad signature, not matching the filter, oversized) in the last run */
  invalid?: number;
  /** sent more events on one subscription than the limit asked for */
  flooded?: boolean;
  /** advertises NIP-45 but left a COUNT unanswered in the last run (not asked again in that run) */
  noCount?: boolean;
  /** NIP-77: true once a kind was reconciled with it, false when it failed (then paged instead) */
  negentropy?: boolean;
  /** NIP-67: ended a stored answer with ["finish"] (paging stops at that page) */
  finish?: boolean;
  /**
   * refuses filters that name no authors (kind-only REQs): its kinds are paged by batches of the
   * authors the spider knows (by-authors.ts), from the next run on without asking by kind first
   */
  authorsRequired?: boolean;
  /** most authors it takes in one filter, learnt from a refusal of more (halved each time): batches by author keep under it */
  maxAuthors?: number;
  /**
   * ms between two REQs that its rate limit allows, learnt from rate-limited answers (doubled on
   * each one, pace.ts): every REQ to it starts at least this long after the one before
   */
  pace?: number;
  /**
   * Paged by authors: the last sweep was cut (budget, errors) at this position of the AuthorBook's
   * order; the next sweep starts there and wraps round, so a relay whose sweep does not fit in one
   * budget is covered over several runs instead of being asked for the same first authors each time.
   */
  authorsFrom?: number;
  /** events it sent outside the since/until window asked for, in the last run (dropped) */
  outsideWindow?: number;
}

/** All events of one kind with lo <= created_at <= hi have been fetched from the relay. */
export interface KindCursor {
  lo: number;
  hi: number;
}

/** Cursors by kind (as a string key, for JSON). */
export type Cursors = Record<string, KindCursor>;

export interface FetchCounts {
  /** valid events received that this fetch had not seen yet */
  fetched: number;
  /** handed to the ingest path and stored */
  stored: number;
  /** already held by the home (or being handed on in this run by another relay's fetch) */
  duplicate: number;
  /** refused by the ingest path: an older replaceable version, deleted, policy, or invalid */
  rejected: number;
  /** dropped by the spider before ingest: bad signature or shape, not matching the filter, oversized */
  invalid: number;
  /** events known to be missing (stuck inside one second, not recoverable by splitting) */
  truncated: number;
  /** one-second slices that were stuck and could not be proven complete (no NIP-45 COUNT) */
  truncatedSlices: number;
  /** signatures checked (only events the home did not hold yet; the ingest path does not check them again) */
  verified: number;
  /** bytes received from the relays */
  bytes: number;
  /** NIP-77 (negentropy.ts): relays with at least one kind reconciled, kinds reconciled, kinds that fell back to paging */
  nip77Relays: number;
  nip77Kinds: number;
  nip77Fallbacks: number;
  /** ids the remote had and the home lacked (fetched by id) */
  nip77Ids: number;
  /** negentropy payload bytes, both ways */
  nip77Bytes: number;
}

export const zeroCounts = (): FetchCounts => ({
  fetched: 0, stored: 0, duplicate: 0, rejected: 0, invalid: 0, truncated: 0, truncatedSlices: 0, verified: 0, bytes: 0,
  nip77Relays: 0, nip77Kinds: 0, nip77Fallbacks: 0, nip77Ids: 0, nip77Bytes: 0,
});

export function addCounts(a: FetchCounts, b: FetchCounts): void {
  // `?? 0`: a worker of an older version reports fewer figures
  for (const k of Object.keys(a) as Array<keyof FetchCounts>) a[k] += b[k] ?? 0;
}

/** The unit of work: fetch relay `url` completely for `kinds`, and report the relays its lists name. */
export interface WorkItem {
  url: string;
  hop: number;
  kinds: number[];
  /** collect the relays named by the kind 10002 events fetched (false at the last hop) */
  discover: boolean;
  quirks: Quirks;
  cursors: Cursors;
  /** NIP-11 document from an earlier run, used when the relay no longer serves one */
  nip11?: Nip11Info | null;
  /**
   * the coordinator's spider.allowPrivate. A worker never contacts more than its own setting allows
   * (its private network is not the coordinator's); where only its own setting refuses, the refusal
   * is the worker's, not the relay's (src/spider/fetch/crawl.ts).
   */
  allowPrivate?: boolean;
  /**
   * Only events created at or after this second (a live remote's catch-up after a disconnect): NIP-77
   * reconciles just that range; paging goes by the cursors, which the catch-up sets to match.
   */
  since?: number;
  /**
   * Ask only by authors, from this position of the AuthorBook on (no wrap, no NIP-77, no paging by
   * kind): the run's last pass over relays that answer only by author, for the authors it learnt
   * after their crawl (late-authors.ts). Positions are this process's book's: never sent to Redis workers.
   */
  lateAuthors?: number;
}

export type RelayOutcome =
  | 'ok' // every kind fetched completely (or up to its cursor)
  | 'partial' // reached, but some kind stopped early (budget, event cap, refused subscription)
  | 'failed' // not reached, or nothing could be fetched
  | 'refused' // unsafe address
  | 'self'; // our own relay (NIP-11 self)

export interface WorkResult {
  url: string;
  hop: number;
  outcome: RelayOutcome;
  error?: string;
  nip11: Nip11Info | null;
  quirks: Quirks;
  cursors: Cursors;
  counts: FetchCounts;
  /** relay URL -> number of kind 10002 lists (one per author) naming it */
  links: Record<string, number>;
  /** kind 10002 lists skipped for discovery because they name absurdly many relays */
  ignoredLists: number;
  /** valid events received per kind in this attempt (the monitor's events per kind per relay) */
  kinds?: Record<string, number>;
  startedAt: number;
  durationMs: number;
  /**
   * Paged by authors: the AuthorBook's end (authors numbered in the order it learnt them) that every
   * kind's sweep reached; authors learnt after it were not asked (late-authors.ts asks them).
   */
  authorsAt?: number;
}

// A crawl's summary: the spider reports it, the directory keeps it with each run (runs.ts).

export interface HopSummary {
  hop: number;
  /** relays taken into this hop */
  relays: number;
  reached: number;
  failed: number;
  refused: number;
  /** skipped: our own relay, or waiting out a failure backoff */
  skipped: number;
  /** URLs taken into the hop that reach a relay known under another URL: folded into it, not crawled */
  aliases: number;
  events: FetchCounts;
}

export interface SpiderSummary {
  startedAt: number;
  finishedAt: number;
  durationMs: number;
  seeds: number;
  seedsWithoutList: number;
  hops: HopSummary[];
  /**
   * URLs taken (total), relays reached, failed, refused, skipped; URLs folded into a relay known
   * under another URL (aliases) and URLs asked what they answer to tell them apart (probed)
   */
  relays: { total: number; reached: number; failed: number; refused: number; skipped: number; aliases: number; probed: number };
  events: FetchCounts;
  /** a few failed relays with their error, for the operator */
  failures: Array<{ url: string; error: string }>;
  /** a few relays refused by the address rules, with the reason (it names the setting that allows them) */
  refusals: Array<{ url: string; error: string }>;
  /** bootstrap relays that could not be asked for the seeds' lists, with the reason */
  bootstrapFailures: Array<{ url: string; error: string }>;
  /** the run was stopped before it finished */
  aborted: boolean;
}
