// One sync with a remote relay through NIP-77: connect, reconcile each filter (reconcile.ts), fetch
// what we lack by id as it is learnt (fetch-ids.ts, into the ingest path through the sink), publish
// what the remote lacks (dir up/both, NIP-01 EVENT with OK tracking), and optionally follow: keep
// a live REQ open afterwards so new events keep arriving. Used by `orbweaver sync`.
import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import { pageBytes } from '../config/spider.js';
import type { Filter } from '../nostr/filter.js';
import { matchAny, toWire } from '../nostr/filter.js';
import { structureError, type NostrEvent } from '../nostr/event.js';
import type { EventStore } from '../store/types.js';
import type { EventSink } from '../ingest/sink.js';
import { homeSink, type HomeSink } from '../remote/deliver.js';
import { RelayClient } from '../remote/client.js';
import { normalizeRelayUrl, resolveTarget } from '../remote/url.js';
import type { IngestStatus } from '../ingest/types.js';
import { emptyFetchCounts, IdFetcher, type FetchCounts } from './fetch-ids.js';
import { emptyStats, reconcileFilter, Seen, SyncError, type ReconcileStats } from '../remote/reconcile.js';

export type Direction = 'down' | 'up' | 'both';

export interface SyncOptions {
  url: string;
  filters: Filter[];
  dir: Direction;
  /** the local store: our item sets, and the events we publish */
  store: EventStore;
  /** where fetched events go (the ingest path) */
  sink: EventSink;
  config: Config;
  logger: Logger;
  /** progress after each reconciliation round and fetched batch */
  onProgress?(s: SyncSummary): void;
  signal?: AbortSignal;
}

export interface PublishCounts {
  /** ids we have that the remote lacks */
  offered: number;
  /** by the remote's OK */
  statuses: Partial<Record<IngestStatus, number>>;
  /** not in our store any more (deleted or expired since the reconciliation) */
  gone: number;
  /** first few refusals */
  refusals: string[];
}

export interface SyncSummary {
  url: string;
  dir: Direction;
  /** the remote answered the WebSocket handshake */
  reached: boolean;
  reconcile: ReconcileStats;
  down: FetchCounts;
  up: PublishCounts;
  /** live events taken while following */
  followed: number;
  seconds: number;
  /** why the sync stopped short, with its kind */
  error?: { kind: SyncError['kind'] | 'connect' | 'delivery'; message: string };
}

export const emptySummary = (url: string, dir: Direction): SyncSummary => ({
  url, dir, reached: false, reconcile: emptyStats(), down: emptyFetchCounts(),
  up: { offered: 0, statuses: {}, gone: 0, refusals: [] }, followed: 0, seconds: 0,
});

/** REQs by id in flight at once */
const FETCH_CONCURRENCY = 2;
/** events published at once (awaiting their OK) */
const PUBLISH_WINDOW = 100;

/** Connects to a relay URL given by the operator (any address, private ones included). */
export async function connectRemote(url: string, config: Config, signal?: AbortSignal): Promise<RelayClient> {
  const norm = normalizeRelayUrl(url);
  if (!norm) throw new SyncError('closed', `not a ws:// or wss:// relay URL: ${url}`);
  const target = await resolveTarget(norm, true);
  return RelayClient.connect(target, {
    connectTimeout: config.spider.connectTimeout,
    // NEG-MSG frames are exempt from maxFrame up to maxPayload (strfry sends up to ~1 MB of hex)
    maxPayload: 4 << 20,
    maxFrame: config.spider.maxEventBytes + 1024,
    userAgent: 'orbweaver-sync',
  }, signal);
}

/**
 * Reconciles and transfers once over an open connection. Fills `s` as it goes (so an error still
 * leaves the counts of what was done) and throws SyncError on a remote that refuses, stalls or
 * talks garbage.
 */
export async function syncOnce(client: RelayClient, o: SyncOptions, s: SyncSummary): Promise<void> {
  const cfg = o.config.negentropy;
  const down = o.dir !== 'up';
  const up = o.dir !== 'down';
  // The whole catch-up has a deadline: each answer's timeout alone lets a remote that answers just
  // in time (or drips unrelated messages) keep the command running for days.
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), cfg.syncDeadline);
  const signal = o.signal ? AbortSignal.any([o.signal, deadline.signal]) : deadline.signal;
  const overDeadline = new Promise<never>((_, reject) => {
    deadline.signal.addEventListener('abort', () => reject(deadlineError(cfg.syncDeadline)), { once: true });
  });
  overDeadline.catch(() => {}); // only awaited in a race
  const fetcher = down ? new IdFetcher({
    client, sink: o.sink, filters: o.filters, batch: cfg.syncBatch, concurrency: FETCH_CONCURRENCY, timeout: cfg.syncTimeout,
    deadline: o.config.spider.pageDeadline, maxBytes: pageBytes(o.config.spider), counts: s.down,
  }) : null;
  const publisher = up ? openPublisher(o, s.up) : null;
  const seen = new Seen();
  try {
    for (const f of o.filters) {
      await reconcileFilter(client, f, {
        frameSizeLimit: cfg.syncFrameSizeLimit,
        timeout: cfg.syncTimeout,
        localItems: (part) => o.store.negentropyItems(part, { maxItems: cfg.maxRecords, signal }),
        now: Math.floor(Date.now() / 1000),
        onNeed: fetcher ? (ids) => fetcher.add(ids) : undefined,
        onHave: publisher ? (ids) => publisher.add(ids) : undefined,
        onRound: () => o.onProgress?.(s),
        signal,
      }, s.reconcile, seen);
    }
    await Promise.race([Promise.all([fetcher?.drained(), publisher?.drained()]), overDeadline]);
  } catch (e) {
    if (deadline.signal.aborted && !o.signal?.aborted) throw deadlineError(cfg.syncDeadline);
    throw e;
  } finally {
    clearTimeout(timer);
    await publisher?.close();
  }
  const failed = fetcher?.failure ?? publisher?.failure;
  if (failed) throw new SyncError('closed', `delivery failed: ${failed.message}`);
  if (fetcher && s.down.missing > 0) throw new SyncError('incomplete', incompleteReason(client, s.down));
}

const deadlineError = (ms: number) => new SyncError('timeout', `the sync did not finish within its deadline (negentropy.syncDeadline, ${ms / 1000} s)`);

/** Why events we asked for did not arrive, as far as this side can tell. */
function incompleteReason(client: RelayClient, d: FetchCounts): string {
  const why: string[] = [];
  if (client.closeReason) why.push(`the connection ended: ${client.closeReason}`);
  const dr = client.dropped;
  if (dr.oversized) why.push(`${dr.oversized} frame(s) over the size limit dropped`);
  if (dr.malformed) why.push(`${dr.malformed} malformed message(s)`);
  if (d.dropped) why.push(`${d.dropped} event(s) not asked for, malformed or outside the filters dropped`);
  const closed = Object.entries(d.closed).map(([k, v]) => `${k} ${v}`).join(', ');
  if (closed) why.push(`REQs closed by the remote (${closed})`);
  if (why.length === 0) why.push('the remote did not send them (deleted meanwhile, or it stopped answering)');
  return `${d.missing} of ${d.requested} events asked for were not fetched: ${why.join('; ')}`;
}

interface Publisher {
  add(ids: string[]): void;
  drained(): Promise<void>;
  close(): Promise<void>;
  failure: Error | null;
}

/** Publishes our events by id to the remote over its own connection, each until the remote decides (src/remote/deliver.ts). */
function openPublisher(o: SyncOptions, c: PublishCounts): Publisher {
  const remote: HomeSink = homeSink({
    url: o.url, connectTimeout: o.config.spider.connectTimeout, okTimeout: o.config.negentropy.syncTimeout,
    window: PUBLISH_WINDOW, deliveryTimeout: o.config.negentropy.syncTimeout, log: o.logger,
  });
  const pending = new Set<Promise<void>>();
  const p: Publisher = {
    failure: null,
    add(ids) {
      for (const id of ids) {
        c.offered++;
        const ev = o.store.get(id);
        if (!ev) {
          c.gone++;
          continue;
        }
        const put = remote.put(ev).then(
          (status) => { c.statuses[status] = (c.statuses[status] ?? 0) + 1; },
          (e: Error) => {
            c.statuses.rejected = (c.statuses.rejected ?? 0) + 1;
            if (c.refusals.length < 5) c.refusals.push(e.message.slice(0, 200));
            p.failure ??= e;
          },
        ).finally(() => pending.delete(put));
        pending.add(put);
      }
    },
    async drained() {
      while (pending.size > 0) await Promise.all(pending);
    },
    close: () => remote.close(),
  };
  return p;
}

/**
 * After a sync: a live REQ for the filters, from a little before the sync began, whose events go to
 * the sink. Resolves when the connection ends or the signal fires.
 */
export function follow(client: RelayClient, o: SyncOptions, s: SyncSummary, since: number): Promise<void> {
  return new Promise((resolve) => {
    if (o.signal?.aborted || !client.isOpen) return resolve();
    const live = o.filters.map((f) => toWire({ ...f, since: Math.max(f.since ?? 0, since), limit: undefined }));
    const subId = client.subscribe(live, {
      event: (raw) => {
        if (structureError(raw) !== null || !matchAny(o.filters, raw as NostrEvent)) {
          s.down.dropped++;
          return;
        }
        s.followed++;
        o.sink.put(raw as NostrEvent).then(
          (status) => { s.down.statuses[status] = (s.down.statuses[status] ?? 0) + 1; o.onProgress?.(s); },
          () => { s.down.statuses.rejected = (s.down.statuses.rejected ?? 0) + 1; },
        );
      },
      eose: () => {},
      closed: (reason) => {
        o.logger.warn({ relay: o.url, reason }, 'sync: the live subscription ended');
        stop();
      },
    });
    const stop = () => {
      o.signal?.removeEventListener('abort', stop);
      client.unsubscribe(subId);
      resolve();
    };
    o.signal?.addEventListener('abort', stop, { once: true });
  });
}
