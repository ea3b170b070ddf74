// The batched writer. write() queues; one loop runs one LMDB write transaction per batch of up
// to maxBatch operations and MAX_BATCH_ENTRIES index entries written. The next batch starts as soon as the
// previous one has committed, so a lone event is written at once (low latency) and batches grow by
// themselves under load (the queue fills while a commit is in flight). Each promise resolves only
// after its batch's transaction has committed, and a commit includes its flush to disk: the store
// opens without lmdb-js's overlapping sync (index.ts says why), and then lmdb-js resolves a
// transaction once it is synced (its `flushed` is then the commit's own promise). So an
// acknowledged event survives kill -9, and a power cut.
import type { RootDatabase } from 'lmdb';
import type { NostrEvent } from '../nostr/event.js';
import { nowSeconds } from './rules.js';
import type { Dbs } from './schema.js';
import { WriteTxn, type Applied, type VanishStep } from './txn.js';
import { finishVanishes } from './vanish-resume.js';
import { parseWithoutTags, splitMembers } from './graph-json.js';
import { commitReason } from './commit-failures.js';
import { ImportSpool, type SpoolSizes } from './spool.js';
import type { WriteResult } from './types.js';
import type { WriteDone } from './writer-thread.js';
import type { DiskGuard } from '../lib/disk-guard.js';

type Op =
  /** ev null: parsed from json when applied (a writer thread's events: see write()); members: EventStore.write */
  | { type: 'event'; ev: NostrEvent | null; json: string; members?: string }
  | { type: 'remove'; id: string }
  /** NIP-62: the next step of deleting what an author's request to vanish covers (txn.ts vanishStep) */
  | { type: 'vanish'; pubkey: string }
  | { type: 'sweep'; now: number; max: number }
  | { type: 'hll'; key: Buffer; version: number; registers: Uint8Array };

type OpResult = Applied | VanishStep | boolean | { deleted: number; scanned: number };

interface Pending {
  op: Op;
  resolve(r: OpResult): void;
  reject(e: unknown): void;
}

export interface WriterOptions {
  maxBatch: number;
  /** index entries one transaction may write or remove (default MAX_BATCH_ENTRIES) */
  maxBatchEntries?: number;
  /**
   * milliseconds a transaction may spend applying operations before it commits what it has (0 or
   * absent: no bound). The transaction runs on the writer's thread: the relay's main thread with
   * store.writerThread false, which serves nobody meanwhile (in a deep store a full transaction of
   * follow lists took ~0.5 s), else a thread of its own (writer-thread.ts), where it delays writes only.
   */
  maxBatchMs?: number;
  /**
   * what is held back and merged many to a transaction (spool.ts; `orbweaver import`); absent:
   * every entry is written with its event
   */
  spool?: SpoolSizes;
  logger?: { warn(o: object, msg?: string): void; info?(o: object, msg?: string): void };
  /** refuses batches while the disk is nearly full (lib/disk-guard.ts); absent: never */
  disk?: DiskGuard;
}

/**
 * Index entries one transaction may write or remove (writer-side bound; counted as they are
 * written: WriteTxn.written). LMDB keeps a write transaction's dirty pages in anonymous memory until
 * it commits, and in a large store nearly every entry of a follow list lands on a page of its own,
 * so this bounds that memory (64,000 pages of 4 KiB: 250 MiB at worst) whatever the store's size.
 * It used to be 16,000 entries estimated as two per tag before the batch started: a tag is one
 * entry (the tag+kind index), so that held ~80 follow lists of 100, and a replacement's removal of
 * the old version was not counted at all. Measured publishing 18,000 directory events and then
 * 18,900 replacements over WebSocket (docs/storage.md): a commit every ~140 events, 900 KB written
 * to disk per event; with this bound counted as written, far fewer commits and bytes per event.
 * Batches of small events (kind 1 with a few tags: ~8 entries each) still reach maxBatch.
 */
export const MAX_BATCH_ENTRIES = 64_000;

/**
 * Entries one transaction of a spool's merge writes. The edges go in key order, so a part dirties
 * only the graph's pages of its key range, and the next part can take the pages the last one freed:
 * one transaction for the whole merge (4,000,000 edges) dirtied the whole graph at once, and the
 * file kept a graph's size of free pages at the end (836 MB of 3,977 at 600,000 events).
 */
const MERGE_PART = 262_144;

const asError = (err: unknown): Error => (err instanceof Error ? err : new Error(String(err)));

/** A stored request to vanish whose covered events are still to delete (txn.ts Applied). */
const isVanishing = (r: OpResult): r is Applied & { vanishing: string } => typeof r === 'object' && 'vanishing' in r && typeof r.vanishing === 'string';

export class BatchWriter {
  private queue: Pending[] = [];
  private running = false;
  private closed = false;
  private pumpDone: Promise<void> = Promise.resolve();
  private readonly spool: ImportSpool | null;

  constructor(
    private readonly env: RootDatabase,
    private readonly dbs: Dbs,
    private readonly opts: WriterOptions,
  ) {
    this.spool = opts.spool ? new ImportSpool(dbs, opts.spool) : null;
  }

  /**
   * `ev` null: the event is parsed from `json` when its transaction applies it, so the parsed event
   * lives for its own apply only, not while it waits in the queue and its batch commits (a writer
   * thread's queue holds thousands of follow lists under load, and its scavenges copied them).
   */
  write(ev: NostrEvent | null, json: string, members?: string): Promise<WriteResult> {
    return this.enqueue({ type: 'event', ev, json, members }) as Promise<WriteResult>;
  }

  /** A callback that throws is logged, as ThreadWriter does (it would otherwise be an unhandled rejection). */
  writeThen(ev: NostrEvent | null, json: string, done: WriteDone, members?: string): void {
    const answer = (err: Error | null, r?: WriteResult): void => {
      try {
        done(err, r);
      } catch (e) {
        this.opts.logger?.warn({ err: e }, 'a write callback failed');
      }
    };
    this.write(ev, json, members).then((r) => answer(null, r), (e: unknown) => answer(e instanceof Error ? e : new Error(String(e))));
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
    if (this.spool && !this.spool.empty) await this.mergeSpool();
    // an import's requests to vanish, now that the indexes list every event (a merge that failed
    // leaves them, with what it held, to the store's next open for writing)
    if (this.spool?.empty) finishVanishes(this.env, this.dbs, this.opts.maxBatchEntries ?? MAX_BATCH_ENTRIES, this.opts.logger);
  }

  /**
   * The spool is full. Its edges go to a file (edge-files.ts), to be merged with everything else
   * held at the end (close): a merge costs about the graph's size, so one merge into a graph that
   * is empty or small costs the least; its time and tag entries are merged whenever they are full.
   */
  private async relieveSpool(): Promise<void> {
    const spool = this.spool!;
    if (spool.edges.toFiles) {
      if (spool.edges.full) {
        const t0 = performance.now();
        try {
          const edges = spool.edges.spill();
          this.opts.logger?.info?.({ edges, filed: spool.edges.filed, ms: Math.round(performance.now() - t0) }, 'held follow edges written to a file');
        } catch (err) {
          // a file that could not be written (a full disk): what stayed in memory is merged instead
          this.opts.logger?.warn({ err }, 'writing held follow edges to a file failed; merging them instead');
          await this.mergeSpool();
          return;
        }
      }
      // The edges wait for the merge at the end; only the time and tag entries are merged, when
      // full. (Merging the edges too whenever the entries filled first made, at 5,000,000 events, a
      // merge every ~29 M edges: bench/RESULTS.md.)
      if (spool.index.full) await this.mergeSpool(true);
      return;
    }
    await this.mergeSpool();
  }

  /**
   * Writes what the spool holds, in transactions of MERGE_PART entries, and forgets it. If one fails
   * it stays held (the next merge starts over) and the store keeps its spool mark until the last
   * part, so a process that dies before a merge ends leaves it to the next open (spool.ts).
   */
  private async mergeSpool(indexOnly = false): Promise<void> {
    const spool = this.spool!;
    const t0 = performance.now();
    // the parts' time by what they wrote (a part that wrote both counts as the edges'), commits included
    const ms = { edgesMs: 0, entriesMs: 0 };
    const held = { edges: indexOnly ? 0 : spool.edges.size + spool.edges.filed, entries: spool.index.size };
    let t = performance.now();
    try {
      const n = await spool.merge(this.env, this.dbs, {
        part: MERGE_PART,
        indexOnly,
        beforePart: () => {
          const full = this.opts.disk?.refusal();
          if (full) throw new Error(full);
          t = performance.now();
        },
        afterPart: (part, sofar) => {
          const took = Math.round(performance.now() - t);
          if (part.edges > 0) ms.edgesMs += took;
          else ms.entriesMs += took;
          this.opts.spool?.progress?.({ edges: sofar.edges, entries: sofar.entries, ofEdges: held.edges, ofEntries: held.entries });
        },
      });
      this.opts.logger?.info?.({ ...n, ...ms, indexOnly, ms: Math.round(performance.now() - t0) }, 'held-back index entries merged');
    } catch (err) {
      this.opts.logger?.warn({ err: await commitReason(err) }, 'merging the held-back index entries failed; they stay held');
    }
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
        // Committed, hence on disk (see the top of this file): answer each operation.
        const { batch, results } = await this.commitNext();
        for (let i = 0; i < batch.length; i++) {
          const r = results[i];
          if (r instanceof Error) batch[i]!.reject(r);
          else if (isVanishing(r!)) this.vanishThen(batch[i]!, r);
          else batch[i]!.resolve(r!);
        }
        // the rest at close(); a process that dies first leaves them to the next open (graph-spool.ts)
        if (this.spool?.full) await this.relieveSpool();
      }
    } finally {
      this.running = false;
    }
  }

  /**
   * A request to vanish is stored and its tombstone written: the events it covers are deleted in
   * transactions of their own, each bounded like any other, at the head of the queue, and the
   * request is answered (its OK sent) once the last has committed, so whoever reads after the OK
   * finds none of them. Writes queued meanwhile wait, as they wait for any large transaction.
   */
  private vanishThen(p: Pending, r: Applied & { vanishing: string }): void {
    const { vanishing: pubkey, ...result } = r;
    const removed = [...(result.removed ?? [])];
    const step = (): void => {
      this.queue.unshift({
        op: { type: 'vanish', pubkey },
        resolve: (s) => {
          for (const id of (s as VanishStep).removed) removed.push(id);
          if ((s as VanishStep).more) step();
          else p.resolve(removed.length > 0 ? { ...result, removed } : result);
        },
        // the tombstone stays marked: the store's next open for writing finishes it (vanish-resume.ts)
        reject: p.reject,
      });
    };
    step();
  }

  /**
   * One transaction over ops from the head of the queue: at least one, at most maxBatch, and no
   * more once MAX_BATCH_ENTRIES entries are written or maxBatchMs have passed; the ops it did not reach go back to the head
   * of the queue (the candidates are fixed before the transaction opens, so what it applies does
   * not depend on when lmdb-js runs the callback). An op that throws is taken back alone
   * (WriteTxn.run) and rejected; the others go on. If the counters at the end throw, the whole
   * batch is taken back (WriteTxn.finish) and each op retried in a transaction of its own.
   * (The journal replaced child transactions while the store used LMDB's write map: txn.ts.)
   */
  private async commitNext(): Promise<{ batch: Pending[]; results: Array<OpResult | Error> }> {
    const full = this.opts.disk?.refusal();
    if (full) {
      // nothing is written: a transaction could need new blocks the file system no longer has
      const batch = this.queue.slice(0, this.opts.maxBatch);
      this.queue = this.queue.slice(batch.length);
      return { batch, results: batch.map(() => new Error(full)) };
    }
    const now = nowSeconds();
    const maxEntries = this.opts.maxBatchEntries ?? MAX_BATCH_ENTRIES;
    const maxMs = this.opts.maxBatchMs ?? 0;
    const candidates = this.queue.slice(0, this.opts.maxBatch);
    this.queue = this.queue.length === candidates.length ? [] : this.queue.slice(candidates.length);
    let used = 0;
    const settle = (): Pending[] => {
      const n = Math.max(1, used);
      if (n < candidates.length) this.queue = candidates.slice(n).concat(this.queue);
      return candidates.slice(0, n);
    };
    try {
      const { out: results, txn } = await this.env.transaction(() => {
        this.spool?.begin();
        const txn = new WriteTxn(this.dbs, now, this.spool);
        const out: Array<OpResult | Error> = [];
        const deadline = maxMs > 0 ? performance.now() + maxMs : Infinity;
        while (out.length < candidates.length && (out.length === 0 || (txn.written < maxEntries && performance.now() < deadline))) {
          const op = candidates[out.length]!.op;
          try {
            out.push(txn.run(() => this.apply(txn, op)));
          } catch (err) {
            out.push(asError(err));
          }
        }
        used = out.length;
        txn.finish();
        return { out, txn };
      });
      txn.committed();
      this.spool?.commit();
      return { batch: settle(), results };
    } catch (err) {
      this.spool?.rollback();
      // used is 0 when the transaction did not open: the head op fails, so the loop progresses.
      const batch = settle();
      // a failed commit's reason is logged once, by the handler that kept it (commit-failures.ts)
      const reason = await commitReason(err);
      if (batch.length === 1) return { batch, results: [reason] };
      this.opts.logger?.warn({ err: reason, batch: batch.length }, 'event store batch failed; retrying its writes one by one');
      const results: Array<OpResult | Error> = [];
      for (const p of batch) results.push(await this.commitOne(p, now));
      return { batch, results };
    }
  }

  private async commitOne(p: Pending, now: number): Promise<OpResult | Error> {
    try {
      const { r, txn } = await this.env.transaction(() => {
        this.spool?.begin();
        const txn = new WriteTxn(this.dbs, now, this.spool);
        const r = txn.run(() => this.apply(txn, p.op));
        txn.finish();
        return { r, txn };
      });
      txn.committed();
      this.spool?.commit();
      return r;
    } catch (err) {
      this.spool?.rollback();
      return commitReason(err);
    }
  }

  private apply(txn: WriteTxn, op: Op): OpResult {
    switch (op.type) {
      case 'event':
        if (op.ev) return txn.applyEvent(op.ev, op.json);
        // a follow list whose members were read where its signature was checked: its tags are not parsed
        if (op.members !== undefined) return txn.applyEvent(parseWithoutTags(op.json), op.json, splitMembers(op.members));
        return txn.applyEvent(JSON.parse(op.json) as NostrEvent, op.json);
      case 'remove':
        return txn.remove(op.id);
      case 'vanish':
        return txn.vanishStep(op.pubkey, this.opts.maxBatchEntries ?? MAX_BATCH_ENTRIES);
      case 'sweep':
        return txn.sweep(op.now, op.max);
      case 'hll':
        return txn.refreshHll(op.key, op.version, op.registers);
    }
  }
}
