// Fetches events by id from a remote relay in batched REQs ({"ids": [...]}, negentropy.syncBatch
// ids each, a few in flight) and hands each to the sink (the ingest path). Only events we asked
// for and that match the sync's filters are taken: the remote chose which ids to offer, not what we
// store. Ids the remote does not deliver (deleted meanwhile, refused, timed out) are counted.
import type { RelayClient } from '../remote/client.js';
import type { EventSink } from '../ingest/sink.js';
import type { IngestStatus } from '../ingest/types.js';
import { structureError, type NostrEvent } from '../nostr/event.js';
import { matchAny, type Filter } from '../nostr/filter.js';

export interface FetchCounts {
  /** ids asked for */
  requested: number;
  /** events received that we asked for */
  received: number;
  /** by the ingest path's decision */
  statuses: Partial<Record<IngestStatus, number>>;
  /** asked for but never delivered */
  missing: number;
  /** events we did not ask for, malformed, or outside the filters: dropped */
  dropped: number;
  /** REQs answered with CLOSED, by reason prefix */
  closed: Record<string, number>;
}

export const emptyFetchCounts = (): FetchCounts => ({ requested: 0, received: 0, statuses: {}, missing: 0, dropped: 0, closed: {} });

export interface IdFetcherOptions {
  client: RelayClient;
  sink: EventSink;
  filters: Filter[];
  batch: number;
  /** REQs in flight at once */
  concurrency: number;
  /** an REQ silent this long (no EVENT, no EOSE) is given up */
  timeout: number;
  counts: FetchCounts;
}

/** events handed to the sink and not yet decided, past which no new REQ is sent */
const MAX_PENDING_PUTS = 2000;

export class IdFetcher {
  /** the sink failed (e.g. the local relay stopped answering): set once, the rest is not handed on */
  failure: Error | null = null;
  private queue: string[] = [];
  private inFlight = 0;
  private readonly puts = new Set<Promise<void>>();
  private idleWaiters: Array<() => void> = [];

  constructor(private readonly o: IdFetcherOptions) {}

  /** Adds ids to fetch (each is asked for once per fetcher). */
  add(ids: string[]): void {
    this.queue.push(...ids);
    this.pump();
  }

  /** Resolves once every id added so far was asked for and its events were handed on. */
  async drained(): Promise<void> {
    while (this.queue.length > 0 || this.inFlight > 0) await new Promise<void>((r) => this.idleWaiters.push(r));
    await Promise.all(this.puts);
  }

  private pump(): void {
    while (this.queue.length > 0 && this.inFlight < this.o.concurrency && this.o.client.isOpen && this.puts.size < MAX_PENDING_PUTS && !this.failure) {
      const ids = this.queue.splice(0, this.o.batch);
      this.inFlight++;
      this.request(ids).finally(() => {
        this.inFlight--;
        this.pump();
        if (this.queue.length === 0 && this.inFlight === 0) for (const w of this.idleWaiters.splice(0)) w();
      });
    }
    if ((!this.o.client.isOpen || this.failure) && this.queue.length > 0) {
      // the connection is gone (or the sink failed): what is left cannot be fetched
      this.o.counts.missing += this.queue.length;
      this.o.counts.requested += this.queue.length;
      this.queue = [];
      if (this.inFlight === 0) for (const w of this.idleWaiters.splice(0)) w();
    }
  }

  private request(ids: string[]): Promise<void> {
    const c = this.o.counts;
    c.requested += ids.length;
    const wanted = new Set(ids);
    return new Promise<void>((resolve) => {
      let timer: NodeJS.Timeout;
      let done = false;
      const finish = (unsubscribe: boolean) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        if (unsubscribe) this.o.client.unsubscribe(subId);
        c.missing += wanted.size;
        resolve();
      };
      const arm = () => {
        clearTimeout(timer);
        timer = setTimeout(() => finish(true), this.o.timeout);
      };
      const subId = this.o.client.subscribe([{ ids }], {
        event: (raw) => {
          const id = (raw as { id?: unknown } | undefined)?.id;
          if (typeof id !== 'string' || !wanted.has(id) || structureError(raw) !== null || !matchAny(this.o.filters, raw as NostrEvent)) {
            c.dropped++;
            return;
          }
          wanted.delete(id);
          c.received++;
          // only progress keeps the REQ alive: a remote dripping events we did not ask for (or
          // malformed ones) cannot hold it open past its deadline
          arm();
          this.hand(raw as NostrEvent);
          if (wanted.size === 0) finish(true);
        },
        eose: () => finish(true),
        closed: (reason) => {
          const prefix = /^([a-z-]+):/.exec(reason)?.[1] ?? 'other';
          c.closed[prefix] = (c.closed[prefix] ?? 0) + 1;
          finish(false);
        },
      });
      arm();
    });
  }

  private hand(ev: NostrEvent): void {
    const c = this.o.counts;
    const p = this.o.sink.put(ev).then(
      (status) => { c.statuses[status] = (c.statuses[status] ?? 0) + 1; },
      (e: Error) => {
        c.statuses.rejected = (c.statuses.rejected ?? 0) + 1;
        this.failure ??= e;
      },
    ).finally(() => {
      this.puts.delete(p);
      if (this.puts.size === MAX_PENDING_PUTS - 1) this.pump();
    });
    this.puts.add(p);
  }
}
