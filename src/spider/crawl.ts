// The unit of work, independent of any scheduler: fetch relay URL X completely for kinds K, hand
// every event to the sink, and report what was learned (NIP-11, quirks, cursors) and which relays
// its kind 10002 lists name. Takes and returns plain JSON (WorkItem -> WorkResult), so it can run in
// this process or in a worker on another machine (issue 4).
import type { Logger } from 'pino';
import { RelayClient } from './client.js';
import { fetchKind, splitSlices, type FetchContext, type FetchOptions, type KindFetch } from './fetch.js';
import { fetchNip11 } from './nip11.js';
import type { EventSink } from './sink.js';
import { LinkCollector, RELAY_LIST_KIND } from './discovery.js';
import { resolveTarget, UnsafeUrlError, type Target } from './url.js';
import { zeroCounts, type WorkItem, type WorkResult } from './types.js';
import type { EventVerifier } from '../nostr/verify.js';

export interface CrawlOptions extends FetchOptions {
  connectTimeout: number;
  /** most time spent on one relay */
  relayBudget: number;
  maxRelayTagsPerList: number;
  /** subscriptions open at once on one relay */
  subscriptionsPerRelay: number;
  allowPrivate: boolean;
}

export interface CrawlDeps {
  verifier: EventVerifier;
  sink: EventSink;
  log: Logger;
  opts: CrawlOptions;
  /** our relay's pubkey: a relay whose NIP-11 `self` equals it is ourselves */
  selfPubkey?: string;
  /** run-wide sets shared by the fetches of one process (see FetchContext) */
  handed: Set<string>;
  knownAuthors: Set<string>;
  /** the spider's stop */
  signal?: AbortSignal;
  /** DNS resolver override (tests) */
  resolve?: (url: string, allowPrivate: boolean) => Promise<Target>;
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
  // Per-run figures start afresh; the lasting quirks (cap, bounds, maxLimit) carry over.
  delete result.quirks.rateLimited;
  delete result.quirks.invalid;
  delete result.quirks.flooded;

  let target: Target;
  try {
    target = await (deps.resolve ?? resolveTarget)(item.url, opts.allowPrivate);
  } catch (e) {
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
        maxPayload: Math.max(1 << 20, opts.maxEventBytes * 4),
      }, budget.signal);
    } catch (e) {
      result.error = `connect: ${(e as Error).message}`;
      return finish();
    }
    const links = new LinkCollector(opts.maxRelayTagsPerList);
    const ctx: FetchContext = {
      client, verifier: deps.verifier, sink: deps.sink, nip11: result.nip11, quirks: result.quirks, counts: result.counts,
      opts, signal: budget.signal, handed: deps.handed, knownAuthors: deps.knownAuthors, log,
      onEvent: item.discover ? (ev) => links.add(ev) : undefined,
      splitQueriesLeft: { n: opts.maxSplitQueries },
    };
    const now = Math.floor(Date.now() / 1000);
    const kinds = [...new Set(item.kinds)].sort(byPriority);
    const parallel = Math.max(1, Math.min(opts.subscriptionsPerRelay, result.nip11?.limitation?.max_subscriptions ?? Infinity));
    const done: KindFetch[] = [];
    let next = 0;
    await Promise.all(Array.from({ length: Math.min(parallel, kinds.length) }, async () => {
      while (next < kinds.length) {
        const kind = kinds[next++];
        const k = await fetchKind(ctx, kind, item.cursors[String(kind)], now);
        done.push(k);
        if (k.cursor) result.cursors[String(kind)] = k.cursor;
        log.debug({ url: item.url, kind, complete: k.complete, error: k.error, events: k.seen.size, stuck: k.stuck.length }, 'spider: kind fetched');
      }
    }));
    // Stuck seconds last: by now every kind has contributed the authors it knows.
    for (const k of done) if (k.stuck.length) await splitSlices(ctx, k);
    result.links = links.links();
    result.ignoredLists = links.ignored;
    result.kinds = Object.fromEntries(done.map((k) => [String(k.kind), k.seen.size]));
    const errors = done.filter((k) => k.error).map((k) => `kind ${k.kind}: ${k.error}`);
    const answered = done.some((k) => k.eose > 0) || result.counts.fetched > 0;
    if (errors.length === 0) result.outcome = answered || done.length === 0 ? 'ok' : 'failed';
    else result.outcome = answered || done.some((k) => k.complete) ? 'partial' : 'failed';
    if (!answered && errors.length === 0 && done.length > 0) result.error = 'no answer (no EOSE and no events)';
    if (errors.length) result.error = errors.join('; ').slice(0, 500);
    return finish();
  } finally {
    clearTimeout(timer);
    deps.signal?.removeEventListener('abort', onStop);
    client?.close();
  }
}
