// Fetches events by id from a remote relay in batched REQs ({"ids": [...]}, negentropy.syncBatch
// ids each, a few in flight) and hands each to the sink (the ingest path). Only events we asked
// for and that match the sync's filters are taken: the remote chose which ids to offer, not what we
// store. Ids the remote does not deliver (deleted meanwhile, refused, timed out) are counted.
// Each REQ is one bounded remote read (remote/read.ts): its bytes, a deadline, and only progress (an
// event asked for) keeps it alive; the events wait for the ingest path's decision a window at a
// time, the socket paused, so no more than a window is held unchecked. A REQ cut by its bytes or
// deadline asks again for what it did not bring, as long as it brought something.
import type { RelayClient } from '../remote/client.js';
import { Dropped, readEvents } from '../remote/read.js';
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
  /** an REQ that brings nothing asked for this long is given up */
  timeout: number;
  /** ms one REQ may take, whatever the remote sends */
  deadline: number;
  /** bytes one REQ may bring */
  maxBytes: number;
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

  private async request(ids: string[]): Promise<void> {
    const c = this.o.counts;
    c.requested += ids.length;
    const wanted = new Set(ids);
    const askedFor = new Set(ids);
    for (;;) {
      const asked = wanted.size;
      const r = await readEvents<NostrEvent, never>(this.o.client, {
        filters: [{ ids: [...wanted] }],
        // an honest relay sends each id once; room for one that repeats itself
        maxEvents: wanted.size * 2, maxBytes: this.o.maxBytes, deadline: this.o.deadline, idleTimeout: this.o.timeout,
        check: (raw) => {
          const id = (raw as { id?: unknown } | undefined)?.id;
          if (typeof id !== 'string' || !wanted.has(id)) return askedFor.has(id as string) ? Dropped.of.repeat : Dropped.of.mismatch;
          if (structureError(raw) !== null) return Dropped.of.shape;
          if (!matchAny(this.o.filters, raw as NostrEvent)) return Dropped.of.mismatch;
          wanted.delete(id);
          return raw as NostrEvent;
        },
        complete: () => wanted.size === 0,
        // the window waits for the ingest path's decisions: what it refused as invalid counts as forged
        admit: async (evs) => {
          const statuses = await Promise.all(evs.map((ev) => this.hand(ev)));
          return { kept: [], invalid: statuses.filter((st) => st === 'invalid').length };
        },
      });
      c.received += r.accepted;
      c.dropped += r.dropped.shape + r.dropped.mismatch + r.dropped.oversized + r.dropped.repeat;
      if (r.end === 'closed' && !r.reason?.startsWith('connection: ')) {
        const prefix = /^([a-z-]+):/.exec(r.reason ?? '')?.[1] ?? 'other';
        c.closed[prefix] = (c.closed[prefix] ?? 0) + 1;
      }
      // cut by its bytes or deadline after some progress: ask again for the rest
      if ((r.end === 'bytes' || r.end === 'deadline') && wanted.size > 0 && wanted.size < asked && this.o.client.isOpen && !this.failure) continue;
      break;
    }
    c.missing += wanted.size;
  }

  /** Hands one event to the sink; resolves with its status (null when the sink failed). */
  private hand(ev: NostrEvent): Promise<IngestStatus | null> {
    const c = this.o.counts;
    const p = this.o.sink.put(ev).then(
      (status) => { c.statuses[status] = (c.statuses[status] ?? 0) + 1; return status; },
      (e: Error) => {
        c.statuses.rejected = (c.statuses.rejected ?? 0) + 1;
        this.failure ??= e;
        return null;
      },
    );
    const tracked = p.then(() => {}).finally(() => {
      this.puts.delete(tracked);
      if (this.puts.size === MAX_PENDING_PUTS - 1) this.pump();
    });
    this.puts.add(tracked);
    return p;
  }
}
