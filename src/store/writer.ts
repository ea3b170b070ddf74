// The batched writer. write() queues; one loop runs one LMDB write transaction per batch of up
// to maxBatch operations and MAX_BATCH_ENTRIES index entries. The next batch starts as soon as the
// previous one has committed, so a lone event is written at once (low latency) and batches grow by
// themselves under load (the queue fills while a commit is in flight). Each promise resolves only
// after its batch is flushed to disk (overlappingSync: the flush of batch N overlaps batch N+1), so
// an acknowledged event survives kill -9.
import type { RootDatabase } from 'lmdb';
import type { NostrEvent } from '../nostr/event.js';
import { nowSeconds } from './rules.js';
import type { Dbs } from './schema.js';
import { WriteTxn } from './txn.js';
import type { WriteResult } from './types.js';

type Op =
  | { type: 'event'; ev: NostrEvent; json: string }
  | { type: 'remove'; id: string }
  | { type: 'sweep'; now: number; max: number }
  | { type: 'hll'; key: Buffer; version: number; registers: Uint8Array };

type OpResult = WriteResult | boolean | { deleted: number; scanned: number };

interface Pending {
  op: Op;
  resolve(r: OpResult): void;
  reject(e: unknown): void;
}

export interface WriterOptions {
  maxBatch: number;
  logger?: { warn(o: object, msg?: string): void };
}

/**
 * Index entries (up to two per tag — by tag and by tag+kind — plus the event's own keys) one
 * transaction may write. LMDB keeps a write transaction's dirty pages in anonymous memory until it
 * commits, and in a large store nearly every entry of a follow list lands on a page of its own.
 * Measured writing 20,000 directory events (a third of them kind 3 lists of ~100 follows) into a
 * store of 540,000: memory outside the V8 heap peaked at 169 MB with batches of 1,000 events and
 * 84 MB with this bound, at +31% write time (57 s against 44 s; 48,000 entries: 141 MB, +4%);
 * a spider crawl of 54,000 directory events takes 1.5–1.7× as long (bench/RESULTS.md).
 * The bound is for memory: a process's memory must not grow with the size of its store. Batches of
 * small events (kind 1 with a few tags: ~12–16 entries each) still reach maxBatch.
 */
export const MAX_BATCH_ENTRIES = 16_000;
const EVENT_KEYS = 6;

/** How many ops from the head of the queue go into the next transaction (at least one). */
export function batchLength(queue: ReadonlyArray<{ op: Op }>, maxBatch: number): number {
  const n = Math.min(queue.length, maxBatch);
  let entries = 0;
  for (let i = 0; i < n; i++) {
    const op = queue[i].op;
    entries += op.type === 'event' ? EVENT_KEYS + 2 * op.ev.tags.length : EVENT_KEYS;
    if (entries > MAX_BATCH_ENTRIES) return Math.max(1, i);
  }
  return n;
}

export class BatchWriter {
  private queue: Pending[] = [];
  private running = false;
  private closed = false;
  /** batches committed but not yet flushed (close() waits for them) */
  private readonly unflushed = new Set<Promise<void>>();
  private pumpDone: Promise<void> = Promise.resolve();

  constructor(
    private readonly env: RootDatabase,
    private readonly dbs: Dbs,
    private readonly opts: WriterOptions,
  ) {}

  write(ev: NostrEvent, json: string): Promise<WriteResult> {
    return this.enqueue({ type: 'event', ev, json }) as Promise<WriteResult>;
  }

  remove(id: string): Promise<boolean> {
    return this.enqueue({ type: 'remove', id }) as Promise<boolean>;
  }

  /** Stores recomputed HLL registers of a stale counter (counters.ts refreshHll). */
  refreshHll(key: Buffer, version: number, registers: Uint8Array): Promise<boolean> {
    return this.enqueue({ type: 'hll', key, version, registers }) as Promise<boolean>;
  }

  /** Deletes expired events, one bounded batch per transaction, until none is left. */
  async sweep(now: number): Promise<number> {
    let total = 0;
    const max = this.opts.maxBatch;
    for (;;) {
      const r = (await this.enqueue({ type: 'sweep', now, max })) as { deleted: number; scanned: number };
      total += r.deleted;
      if (r.scanned < max) return total;
    }
  }

  /** Stops accepting writes and waits until queued ones are durable. */
  async close(): Promise<void> {
    this.closed = true;
    await this.pumpDone;
    await Promise.allSettled([...this.unflushed]);
  }

  private enqueue(op: Op): Promise<OpResult> {
    if (this.closed) return Promise.reject(new Error('event store is closed'));
    return new Promise<OpResult>((resolve, reject) => {
      this.queue.push({ op, resolve, reject });
      if (!this.running) this.pumpDone = this.pump();
    });
  }

  private async pump(): Promise<void> {
    this.running = true;
    try {
      while (this.queue.length > 0) {
        const n = batchLength(this.queue, this.opts.maxBatch);
        const batch = this.queue.slice(0, n);
        this.queue = n === this.queue.length ? [] : this.queue.slice(n);
        const results = await this.commit(batch);
        // Committed and visible; durable once flushed. Take the flush promise now, before the
        // next batch is queued (env.flushed follows the latest write).
        const done = new Promise<void>((resolve, reject) => {
          this.env.flushed.then(() => resolve(), reject);
        }).then(
          () => {
            for (let i = 0; i < batch.length; i++) {
              const r = results[i];
              if (r instanceof Error) batch[i].reject(r);
              else batch[i].resolve(r);
            }
          },
          (err: unknown) => {
            for (const p of batch) p.reject(err);
          },
        );
        this.unflushed.add(done);
        void done.finally(() => this.unflushed.delete(done));
      }
    } finally {
      this.running = false;
    }
  }

  /**
   * One transaction for the whole batch, as a child transaction so that an exception aborts
   * the batch's writes instead of committing half an event; then each op is retried alone so
   * only the failing one is rejected.
   */
  private async commit(batch: Pending[]): Promise<Array<OpResult | Error>> {
    const now = nowSeconds();
    try {
      return await this.env.childTransaction(() => {
        const txn = new WriteTxn(this.dbs, now);
        const out = batch.map((p) => this.apply(txn, p.op));
        txn.finish();
        return out;
      });
    } catch (err) {
      if (batch.length === 1) return [err instanceof Error ? err : new Error(String(err))];
      this.opts.logger?.warn({ err, batch: batch.length }, 'event store batch failed; retrying its writes one by one');
      const out: Array<OpResult | Error> = [];
      for (const p of batch) out.push(...(await this.commit([p])));
      return out;
    }
  }

  private apply(txn: WriteTxn, op: Op): OpResult {
    switch (op.type) {
      case 'event':
        return txn.applyEvent(op.ev, op.json);
      case 'remove':
        return txn.remove(op.id);
      case 'sweep':
        return txn.sweep(op.now, op.max);
      case 'hll':
        return txn.refreshHll(op.key, op.version, op.registers);
    }
  }
}
