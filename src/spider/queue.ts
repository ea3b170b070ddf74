// The work queue between the coordinator (which decides what to crawl, hop by hop) and the workers
// (which run crawlRelay). In-process now; issue 4 puts the same items through Redis (lease/ack with
// lease expiry, retries, dead letters) so workers on other machines share a crawl. Items and results
// are plain JSON for that reason.
import type { WorkItem, WorkResult } from './types.js';

export interface Lease {
  item: WorkItem;
  /** reports the finished work; the coordinator receives it from result() */
  ack(result: WorkResult): Promise<void>;
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
  private todo = new Channel<WorkItem>();
  private done = new Channel<WorkResult>();
  private outstanding = 0;

  async enqueue(items: WorkItem[]): Promise<void> {
    for (const it of items) { this.outstanding++; this.todo.push(it); }
  }

  async lease(waitMs: number): Promise<Lease | null> {
    const item = await this.todo.take(waitMs);
    if (!item) return null;
    let acked = false;
    return {
      item,
      ack: async (r) => {
        if (acked) return;
        acked = true;
        this.outstanding--;
        this.done.push(r);
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
