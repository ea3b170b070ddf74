// The unit of work, independent of any scheduler: fetch relay URL X completely for kinds K, hand
// every event to the sink, and report what was learned (NIP-11, quirks, cursors) and which relays
// its kind 10002 lists name. Takes and returns plain JSON (WorkItem -> WorkResult), so it can run in
// this process or in a worker on another machine.
import type { Logger } from 'pino';
import { RelayClient } from '../../remote/client.js';
import { splitSlices, type FetchContext, type FetchOptions, type KindFetch } from './paging.js';
import { fetchKindOrByAuthors } from './by-authors.js';
import { Pacer } from './pace.js';
import { syncKind, triesNegentropy, type HomeItems, type NegentropyMode } from './negentropy.js';
import { fetchNip11 } from '../../remote/nip11.js';
import type { EventSink } from '../../ingest/sink.js';
import { Admitter, type KnownCheck } from './admit.js';
import type { AuthorBook } from './authors.js';
import { Slots } from './slots.js';
import { LinkCollector, RELAY_LIST_KIND } from '../discovery/relay-lists.js';
import { resolveTarget, UnsafeUrlError, type Target } from '../../remote/url.js';
import { zeroCounts, type WorkItem, type WorkResult } from '../../directory/types.js';
import type { EventVerifier } from '../../nostr/verify.js';
import { computeId } from '../../nostr/event.js';
import type { IngestStatus } from '../../ingest/types.js';

export interface CrawlOptions extends FetchOptions {
  connectTimeout: number;
  /** most time spent on one relay */
  relayBudget: number;
  maxRelayTagsPerList: number;
  /** subscriptions open at once on one relay */
  subscriptionsPerRelay: number;
  /** events handed on and not answered yet (all fetches together) before pages wait */
  maxPendingEvents: number;
  allowPrivate: boolean;
  /** NIP-77 use (negentropy.ts); needs CrawlDeps.home */
  negentropy: NegentropyMode;
}

/** State shared by every fetch of one process (and kept small: see admit.ts, authors.ts). */
export interface SharedState {
  /** events handed on and not answered yet, by id */
  inFlight: Map<string, Promise<IngestStatus>>;
  /** authors known so far (LMDB) */
  authors: AuthorBook;
  /** pages held in memory (received, not yet admitted) by all fetches together */
  pages: Slots;
  /** NIP-77 reconciliations running, all relays together (each holds the ids it learnt until fetched) */
  syncs: Slots;
}

/**
 * Memory bounds of one process, all relays together: pages held (received, not yet admitted; a
 * page is up to pageSize events) and events handed on but not answered. They keep the spider's
 * memory flat whatever the crawl's size and `concurrency`, while leaving enough in flight for the
 * network and the home's writer to stay busy.
 */
export const PAGES_IN_FLIGHT = 8;
export const MAX_PENDING_EVENTS = 1000;
/**
 * NIP-77 reconciliations at once, all relays together: `syncs`, half the crawl's `concurrency`
 * (at least one; relays that are paged meanwhile do not wait for it). Each holds the ids a round taught it until they are fetched (a
 * round of a relay that sends large messages is ~11,000 ids): with `concurrency` 4 relays of 4 kinds
 * each, 16 held ~25 MB of ids on a 10-relay crawl of 54,000 events, they fetched the same ids from
 * several relays at once (68,000 duplicates), and the crawl's memory grew with the relays crawled at
 * once (bench/RESULTS.md, "The spider's memory").
 */
export function sharedState(authors: AuthorBook, concurrency: number): SharedState {
  return { inFlight: new Map(), authors, pages: new Slots(PAGES_IN_FLIGHT), syncs: new Slots(Math.max(1, Math.floor(concurrency / 2))) };
}

export interface CrawlDeps {
  verifier: EventVerifier;
  sink: EventSink;
  /** what the home already holds, asked before any signature check */
  known: KnownCheck;
  log: Logger;
  opts: CrawlOptions;
  /** our relay's pubkey: a relay whose NIP-11 `self` equals it is ourselves */
  selfPubkey?: string;
  shared: SharedState;
  /** the spider's stop */
  signal?: AbortSignal;
  /** DNS resolver override (tests) */
  resolve?: (url: string, allowPrivate: boolean) => Promise<Target>;
  /** the home's item sets for NIP-77, when this process reads the store the home writes into (not a worker) */
  home?: HomeItems;
}

/** Kinds that feed discovery and author knowledge first, so stuck seconds can be split well. */
const ORDER = [RELAY_LIST_KIND, 3, 10000];
const byPriority = (a: number, b: number) => {
  const ia = ORDER.indexOf(a), ib = ORDER.indexOf(b);
  return (ia < 0 ? 99 : ia) - (ib < 0 ? 99 : ib) || a - b;
};

export async function crawlRelay(item: WorkItem, deps: CrawlDeps): Promise<WorkResult> {
  const started = Date.now();
  const { opts, log } = deps;
  const result: WorkResult = {
    url: item.url, hop: item.hop, outcome: 'failed', nip11: item.nip11 ?? null, quirks: { ...item.quirks }, cursors: { ...item.cursors },
    counts: zeroCounts(), links: {}, ignoredLists: 0, startedAt: started, durationMs: 0,
  };
  const finish = (): WorkResult => { result.durationMs = Date.now() - started; return result; };
  // Per-run figures start afresh; the lasting quirks (cap, bounds, maxLimit, pace, authorsRequired) carry over.
  delete result.quirks.rateLimited;
  delete result.quirks.invalid;
  delete result.quirks.flooded;
  delete result.quirks.noCount;
  delete result.quirks.outsideWindow;

  let target: Target;
  // the stricter of this process's rule and the coordinator's: a worker is never made to reach
  // more than its own settings allow
  const coordinatorAllows = item.allowPrivate ?? opts.allowPrivate;
  try {
    target = await (deps.resolve ?? resolveTarget)(item.url, opts.allowPrivate && coordinatorAllows);
  } catch (e) {
    if (e instanceof UnsafeUrlError && coordinatorAllows && !opts.allowPrivate) {
      // Only this worker's own rule refuses it: not the relay's fault. The attempt fails (another
      // worker may take it); after spider.maxAttempts the directory records it failed with this.
      throw new Error(`refused by this worker's own address rules, not the coordinator's (${(e as Error).message} on the worker; the coordinator allows private addresses)`);
    }
    result.outcome = e instanceof UnsafeUrlError ? 'refused' : 'failed';
    result.error = (e as Error).message;
    return finish();
  }

  const budget = new AbortController();
  const timer = setTimeout(() => budget.abort(), opts.relayBudget);
  const onStop = () => budget.abort();
  deps.signal?.addEventListener('abort', onStop, { once: true });
  let client: RelayClient | undefined;
  try {
    const doc = await fetchNip11(target, opts.connectTimeout, budget.signal);
    if (doc) result.nip11 = doc;
    if (deps.selfPubkey && result.nip11?.self === deps.selfPubkey) {
      result.outcome = 'self';
      return finish();
    }
    try {
      client = await RelayClient.connect(target, {
        connectTimeout: opts.connectTimeout,
        maxFrame: opts.maxEventBytes + 1024,
        // NEG-MSG frames are bounded by maxPayload alone: strfry sends up to 500 KB (1 MB of hex)
        maxPayload: Math.max(2 << 20, opts.maxEventBytes * 4),
      }, budget.signal);
    } catch (e) {
      result.error = `connect: ${(e as Error).message}`;
      return finish();
    }
    const links = new LinkCollector(opts.maxRelayTagsPerList);
    const { authors, inFlight, pages } = deps.shared;
    const admitter = new Admitter({
      verifier: deps.verifier, sink: deps.sink, known: deps.known, inFlight, counts: result.counts, maxPending: opts.maxPendingEvents,
      // The home's current version of each event: the authors of newly stored ones feed splits (a
      // copy's were noted when the home stored it), every relay list feeds discovery (a copy's id
      // is checked first: its content is trusted only when it is the very event the home holds).
      onCurrent: (ev, copy) => {
        // A copy is trusted only once its id is recomputed (hashed at most once here): a remote may
        // send anything under an id the home holds. A scratch book learns authors from copies too
        // (authors.ts): relays that answer only by author are asked for them (by-authors.ts).
        let genuine: boolean | undefined;
        const isGenuine = () => (genuine ??= computeId(ev) === ev.id);
        if (!copy || (authors.scratch && isGenuine())) authors.addFrom(ev);
        if (item.discover && ev.kind === RELAY_LIST_KIND && (!copy || isGenuine())) links.add(ev);
      },
    });
    const ctx: FetchContext = {
      client, nip11: result.nip11, quirks: result.quirks, counts: result.counts,
      opts, signal: budget.signal, admitter, authors, pages, log,
      splitQueriesLeft: { n: opts.maxSplitQueries },
      pacer: new Pacer(result.quirks),
      // NIP-77 reconciles a kind's whole set: not with a relay that answers only by author, nor in
      // the run's last pass over such relays (late authors only)
      home: deps.home && item.lateAuthors === undefined && !result.quirks.authorsRequired && triesNegentropy(opts.negentropy, result.nip11, result.quirks)
        ? { items: deps.home.items, holds: (id) => inFlight.has(id) || deps.home!.holds(id) }
        : undefined,
    };
    const negFailed: { reason?: string } = {};
    const now = Math.floor(Date.now() / 1000);
    const kinds = [...new Set(item.kinds)].sort(byPriority);
    const parallel = Math.max(1, Math.min(opts.subscriptionsPerRelay, result.nip11?.limitation?.max_subscriptions ?? Infinity));
    const done: KindFetch[] = [];
    let next = 0;
    await Promise.all(Array.from({ length: Math.min(parallel, kinds.length) }, async () => {
      while (next < kinds.length) {
        const kind = kinds[next++];
        const k = (await syncWithin(deps.shared.syncs, () => syncKind(ctx, kind, now, negFailed, item.since), budget.signal))
          ?? await fetchKindOrByAuthors(ctx, kind, item.cursors[String(kind)], now, item.lateAuthors, item.since);
        done.push(k);
        if (k.cursor) result.cursors[String(kind)] = k.cursor;
        log.debug({ url: item.url, kind, complete: k.complete, error: k.error, events: k.events, stuck: k.stuck.length }, 'spider: kind fetched');
      }
    }));
    // Stuck seconds last: by now every kind has contributed the authors it knows.
    if (done.some((k) => k.stuck.length)) await admitter.drain(); // their authors are in the book
    for (const k of done) if (k.stuck.length) await splitSlices(ctx, k);
    // Every event handed on is answered before the work is reported (a worker acks only then).
    await admitter.drain();
    result.links = links.links();
    result.ignoredLists = links.ignored;
    result.kinds = Object.fromEntries(done.map((k) => [String(k.kind), k.events]));
    noteAuthorSweeps(result, done, item.lateAuthors !== undefined);
    const errors = done.filter((k) => k.error).map((k) => `kind ${k.kind}: ${k.error}`);
    const answered = done.some((k) => k.eose > 0 || k.synced) || result.counts.fetched > 0;
    if (done.some((k) => k.synced)) result.counts.nip77Relays = 1;
    if (errors.length === 0) result.outcome = answered || done.length === 0 ? 'ok' : 'failed';
    else result.outcome = answered || done.some((k) => k.complete) ? 'partial' : 'failed';
    if (!answered && errors.length === 0 && done.length > 0) result.error = 'no answer (no EOSE and no events)';
    if (errors.length) result.error = errors.join('; ').slice(0, 500);
    // A failed NIP-77 attempt is not an error of the crawl (the kinds were paged and may be
    // complete), but the record must say it happened and why: a relay listing 77 that cannot do it
    // costs a NEG-OPEN (and up to an idle timeout) every run.
    if (negFailed.reason !== undefined) {
      const note = `NIP-77 failed (${negFailed.reason.slice(0, 200)}); paged instead`;
      result.error = (result.error ? `${note}; ${result.error}` : note).slice(0, 500);
    }
    return finish();
  } finally {
    clearTimeout(timer);
    deps.signal?.removeEventListener('abort', onStop);
    if (client) result.counts.bytes += client.bytesIn;
    client?.close();
  }
}

/**
 * Kinds asked by author (by-authors.ts): the book's end every sweep reached (the run's last pass asks
 * the authors after it), and where the next run's sweep starts: at the earliest cut, or at the book's
 * beginning once every sweep went round.
 */
function noteAuthorSweeps(result: WorkResult, done: KindFetch[], lastPass: boolean): void {
  const reached = done.filter((k) => k.authorsAt !== undefined).map((k) => k.authorsAt!);
  if (reached.length) result.authorsAt = Math.min(...reached);
  if (lastPass) return;
  const cut = done.filter((k) => k.authorsCut !== undefined).map((k) => k.authorsCut!);
  if (cut.length) result.quirks.authorsFrom = Math.min(...cut);
  else if (reached.length) delete result.quirks.authorsFrom;
}

/** Runs a NIP-77 reconciliation within the process's bound on them (SYNCS_IN_FLIGHT); null (page instead) when stopped while waiting. */
async function syncWithin<T>(slots: Slots, sync: () => Promise<T | null>, signal: AbortSignal): Promise<T | null> {
  const release = await slots.take(signal);
  if (!release) return null;
  try {
    return await sync();
  } finally {
    release();
  }
}
