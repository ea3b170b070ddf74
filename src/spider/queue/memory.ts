// The work queue between the coordinator (which decides what to crawl, hop by hop) and the workers
// (which run crawlRelay). Two implementations with the same semantics: MemoryQueue (in-process, the
// default) and RedisQueue (redis.ts: lease/ack with lease expiry, owner tokens, retries, a
// dead-letter list) so workers on other machines share a crawl. Items and results are plain JSON.
//
// Semantics both keep: an item is leased by one worker at a time; ack() reports the finished work
// (a relay that could not be reached is a finished piece of work: its result says so); fail() gives
// the item back for another attempt, and after `maxAttempts` attempts it is dead-lettered and the
// coordinator receives a 'failed' result carrying the last error, so a hop always completes.
import { zeroCounts, type WorkItem, type WorkResult } from '../../directory/types.js';

export interface Lease {
  item: WorkItem;
  /** 1 for the first attempt */
  attempt: number;
  /** reports the finished work; false when the lease was lost meanwhile (the result is dropped) */
  ack(result: WorkResult): Promise<boolean>;
  /** the attempt could not be completed: retry later, or dead-letter after the last attempt */
  fail(error: string): Promise<void>;
  /** aborted when the lease is lost (expired, or taken over): stop working on the item */
  readonly signal?: AbortSignal;
}

/** Attempts before an item is dead-lettered, unless a queue is told otherwise. */
export const DEFAULT_MAX_ATTEMPTS = 3;

/** The result the coordinator receives for a dead-lettered item. */
export function deadResult(item: WorkItem, attempts: number, error: string, now = Date.now()): WorkResult {
  return {
    url: item.url, hop: item.hop, outcome: 'failed', error: `dead-lettered after ${attempts} attempts: ${error}`.slice(0, 500),
    nip11: item.nip11 ?? null, quirks: item.quirks, cursors: item.cursors, counts: zeroCounts(), links: {}, ignoredLists: 0, startedAt: now, durationMs: 0,
  };
}

export interface WorkQueue {
  enqueue(items: WorkItem[]): Promise<void>;
  /** the next item to work on, or null when none arrives within waitMs */
  lease(waitMs: number): Promise<Lease | null>;
  /** the next finished result, or null when none arrives within waitMs */
  result(waitMs: number): Promise<WorkResult | null>;
  /** items enqueued and not yet acknowledged */
  pending(): number;
  close(): Promise<void>;
}

/** A FIFO pair with blocking reads, all in memory. */
class Channel<T> {
  private items: T[] = [];
  private waiters: Array<(v: T | null) => void> = [];
  push(v: T): void {
    const w = this.waiters.shift();
    if (w) w(v); else this.items.push(v);
  }
  take(waitMs: number): Promise<T | null> {
    if (this.items.length) return Promise.resolve(this.items.shift() as T);
    if (waitMs <= 0) return Promise.resolve(null);
    return new Promise((resolve) => {
      const w = (v: T | null) => { clearTimeout(t); resolve(v); };
      const t = setTimeout(() => { this.waiters = this.waiters.filter((x) => x !== w); resolve(null); }, waitMs);
      this.waiters.push(w);
    });
  }
  drain(): void {
    for (const w of this.waiters.splice(0)) w(null);
    this.items = [];
  }
  get length(): number { return this.items.length; }
}

export class MemoryQueue implements WorkQueue {
  private todo = new Channel<{ item: WorkItem; attempt: number }>();
  private done = new Channel<WorkResult>();
  private outstanding = 0;
  /** dead-lettered items with their last error */
  readonly dead: Array<{ item: WorkItem; attempts: number; error: string }> = [];

  constructor(private readonly maxAttempts = DEFAULT_MAX_ATTEMPTS) {}

  async enqueue(items: WorkItem[]): Promise<void> {
    for (const item of items) { this.outstanding++; this.todo.push({ item, attempt: 1 }); }
  }

  async lease(waitMs: number): Promise<Lease | null> {
    const got = await this.todo.take(waitMs);
    if (!got) return null;
    const { item, attempt } = got;
    let settled = false;
    return {
      item,
      attempt,
      ack: async (r) => {
        if (settled) return false;
        settled = true;
        this.outstanding--;
        this.done.push(r);
        return true;
      },
      fail: async (error) => {
        if (settled) return;
        settled = true;
        if (attempt < this.maxAttempts) { this.todo.push({ item, attempt: attempt + 1 }); return; }
        this.dead.push({ item, attempts: attempt, error });
        this.outstanding--;
        this.done.push(deadResult(item, attempt, error));
      },
    };
  }

  result(waitMs: number): Promise<WorkResult | null> {
    return this.done.take(waitMs);
  }

  pending(): number {
    return this.outstanding;
  }

  async close(): Promise<void> {
    this.todo.drain();
    this.done.drain();
    this.outstanding = 0;
  }
}
