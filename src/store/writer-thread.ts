// The store's batched writer on a thread of its own (config store.writerThread): the relay's main
// thread then runs the network, parsing and fan-out while the worker (writer-worker.ts) runs the
// write transactions, which were ~60% of the main thread publishing directory events
// (docs/storage.md, "A writer thread"). Same writer, same transactions, same acknowledgement after
// the commit; only the thread differs. Writes go out in one message per turn of the event loop.
//
// Reads stay on the calling thread. lmdb-js renews a thread's read snapshot on the next turn after
// it is used, and does so at once after that thread's own commits, not after another thread's: so
// every batch of answers first resets this thread's snapshot, and whoever awaited a write reads
// what it wrote.
import { Worker } from 'node:worker_threads';
import type { RootDatabase } from 'lmdb';
import type { NostrEvent } from '../nostr/event.js';
import type { DiskState } from '../lib/disk-guard.js';
import type { WriteResult } from './types.js';
import type { FromWriter, ToWriter, WriterInit, WriterOp } from './writer-messages.js';
import { ownBytes } from '../lib/own-bytes.js';

type Value = WriteResult | boolean | number;
/** an op before the main thread numbers it (Omit per member of the union) */
type Unnumbered<O> = O extends WriterOp ? Omit<O, 'id'> : never;
type OpBody = Unnumbered<WriterOp>;

/** What the store asks of its writer, on this thread (BatchWriter) or on its own (ThreadWriter). */
export interface StoreWriter {
  /** `ev` null: the writer parses `json` (ThreadWriter always does, on its thread); `members`: EventStore.write */
  write(ev: NostrEvent | null, json: string, members?: string): Promise<WriteResult>;
  /** write() answered through a callback, exactly once (EventStore.writeThen) */
  writeThen(ev: NostrEvent | null, json: string, done: WriteDone, members?: string): void;
  remove(id: string): Promise<boolean>;
  refreshHll(key: Buffer, version: number, registers: Uint8Array): Promise<boolean>;
  sweep(now: number): Promise<number>;
  close(): Promise<void>;
}

/** The answer to a write: an error, or the result. */
export type WriteDone = (err: Error | null, result?: WriteResult) => void;
/** The answer to any op of the thread, as WriteDone */
type Done = (err: Error | null, value?: Value) => void;

type Logger = { warn(o: object, msg?: string): void; info?(o: object, msg?: string): void };

/** A log line of the worker's store, written by this thread's logger. */
const relayLog = (logger: Logger | undefined, m: Extract<FromWriter, { t: 'log' }>): void =>
  void (m.level === 'warn' ? logger?.warn : logger?.info)?.call(logger, m.obj, m.msg);

export class ThreadWriter implements StoreWriter {
  /** one callback per op (not a promise's resolve and reject: thousands wait at once, every one a survivor of scavenges) */
  private readonly pending = new Map<number, Done>();
  private nextId = 0;
  private queue: WriterOp[] | null = null;
  /** why writes fail from now on (the thread stopped or the store is closing), null while it runs */
  private stopped: string | null = null;
  private closing: Promise<void> | null = null;
  private lastDisk: DiskState | null = null;
  /** the thread has ended (closed, or died) */
  private exited = false;

  private constructor(
    private readonly worker: Worker,
    private readonly env: RootDatabase,
    private readonly logger?: Logger,
  ) {
    worker.on('message', (m: FromWriter) => this.onMessage(m));
    worker.on('error', (err) => this.fail(`the store's writer thread failed: ${err.message}`));
    worker.on('exit', (code) => {
      this.exited = true;
      this.fail(`the store's writer thread stopped (exit code ${code})`);
    });
  }

  /** Starts the thread and waits until its handle of the store is open. */
  static async start(init: WriterInit, env: RootDatabase, logger?: Logger): Promise<ThreadWriter> {
    const worker = new Worker(new URL('./writer-worker.js', import.meta.url), { workerData: init });
    // only these listeners come off afterwards: Worker keeps listeners of its own (removeAllListeners
    // took those too, and no message arrived after it)
    let onMessage: (m: FromWriter) => void = () => {};
    let onError: (e: Error) => void = () => {};
    let onExit: (code: number) => void = () => {};
    try {
      await new Promise<void>((resolve, reject) => {
        onMessage = (m) => {
          if (m.t === 'ready') resolve();
          else if (m.t === 'failed') reject(new Error(`the store's writer thread could not open ${init.dir}: ${m.error}`));
          else if (m.t === 'log') relayLog(logger, m);
        };
        onError = reject;
        onExit = (code) => reject(new Error(`the store's writer thread stopped while opening ${init.dir} (exit code ${code})`));
        worker.on('message', onMessage).on('error', onError).on('exit', onExit);
      });
    } catch (e) {
      await worker.terminate();
      throw e;
    } finally {
      worker.off('message', onMessage).off('error', onError).off('exit', onExit);
    }
    return new ThreadWriter(worker, env, logger);
  }

  /** The worker's disk guard after its last batch (it refuses the writes; DiskGuard.state()). */
  disk(): DiskState | null {
    return this.lastDisk;
  }

  write(_ev: NostrEvent | null, json: string, members?: string): Promise<WriteResult> {
    return this.submit(members === undefined ? { t: 'e', json } : { t: 'e', json, members }) as Promise<WriteResult>;
  }

  writeThen(_ev: NostrEvent | null, json: string, done: WriteDone, members?: string): void {
    this.submitThen(members === undefined ? { t: 'e', json } : { t: 'e', json, members }, done as Done);
  }

  remove(id: string): Promise<boolean> {
    return this.submit({ t: 'r', eventId: id }) as Promise<boolean>;
  }

  refreshHll(key: Buffer, version: number, registers: Uint8Array): Promise<boolean> {
    return this.submit({ t: 'h', key: ownBytes(key), version, registers: ownBytes(registers) }) as Promise<boolean>;
  }

  sweep(now: number): Promise<number> {
    return this.submit({ t: 's', now }) as Promise<number>;
  }

  /** Writes what was asked before, closes the worker's handle and ends the thread. */
  close(): Promise<void> {
    this.closing ??= new Promise<void>((resolve) => {
      if (this.exited) return resolve(); // it died: nothing left to write, and no exit to wait for
      this.flush();
      this.stopped = 'event store is closed';
      this.worker.once('exit', () => resolve());
      this.post({ t: 'close' });
    });
    return this.closing;
  }

  private submit(body: OpBody): Promise<Value> {
    return new Promise<Value>((resolve, reject) => this.submitThen(body, (err, v) => (err ? reject(err) : resolve(v!))));
  }

  /** Queues an op; `done` gets its answer once (at once when the thread has stopped). */
  private submitThen(body: OpBody, done: Done): void {
    if (this.stopped) return done(new Error(this.stopped));
    const id = this.nextId++;
    this.pending.set(id, done);
    if (!this.queue) {
      this.queue = [];
      setImmediate(() => this.flush());
    }
    this.queue.push({ ...body, id } as WriterOp);
  }

  /** Answers one op; a callback that throws is logged and does not keep the others from theirs. */
  private answer(done: Done, err: Error | null, value?: Value): void {
    try {
      done(err, value);
    } catch (e) {
      this.logger?.warn({ err: e }, 'a write callback failed');
    }
  }

  private flush(): void {
    const ops = this.queue;
    this.queue = null;
    if (ops && ops.length > 0) this.post({ t: 'ops', ops });
  }

  private post(m: ToWriter): void {
    this.worker.postMessage(m);
  }

  private onMessage(m: FromWriter): void {
    if (m.t === 'log') return relayLog(this.logger, m);
    // close(): the worker's handle is closed and its last answers are in
    if (m.t === 'closed') return void this.worker.terminate();
    if (m.t !== 'done') return;
    this.lastDisk = m.disk;
    // what these transactions wrote is committed: this thread's next read sees it (top of file)
    this.env.resetReadTxn();
    for (const d of m.done) {
      const p = this.pending.get(d.id);
      if (!p) continue;
      this.pending.delete(d.id);
      if ('error' in d) this.answer(p, new Error(d.error));
      else this.answer(p, null, d.value);
    }
  }

  /** The thread is gone: every write not answered fails, and so does every later one. */
  private fail(reason: string): void {
    if (this.closing && this.pending.size === 0) return;
    this.stopped ??= reason;
    this.logger?.warn({ pending: this.pending.size }, reason);
    const waiting = [...this.pending.values()];
    this.pending.clear();
    for (const p of waiting) this.answer(p, new Error(reason));
  }
}
