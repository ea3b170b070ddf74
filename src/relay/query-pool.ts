// REQ scans and COUNTs off the main thread. The main thread runs uWS, parsing, the write path and
// fan-out; with every scan on it too, the query benchmark kept it at 84-98% with the second core a
// third idle. A QueryRunner has the store's query/count shape: with queryThreads = 0 it is the
// store itself (inlineQueries); otherwise N worker threads (query-worker.ts), each with its own
// read-only store handle on the same LMDB environment (LMDB readers do not lock each other).
//
// Like verify-pool.ts, requests go out in one postMessage per worker per turn of the event loop,
// and workers are unref'd while idle. Results come back as ready EVENT messages in one shared
// buffer, not cloned (nostr/frames.ts: cloning the answer's strings and encoding them again
// to send was most of the main thread's time for large answers), plus the `seen` serials for live
// subscriptions. COUNT answers carry the NIP-45 HLL registers where the store keeps them.
//
// Cancellation: the store polls `signal.aborted` between steps, which cannot cross threads, so
// the main thread checks the in-flight requests' signals every ABORT_POLL_MS and sends an abort
// message; the worker sets the flag its store signal returns. The scan budget and timeout of
// Access.scanGuard are enforced in the worker with the same numbers and the same step rule; use
// this runner's scanGuard() (not Access.scanGuard) for signals passed to it.
import { Worker } from 'node:worker_threads';
import type { Filter } from '../nostr/filter.js';
import { releaseFrames, type EventFrames, type Framing } from '../nostr/frames.js';
import type { CountResult, EventStore, QueryOptions, ScanSignal } from '../store/types.js';
import type { NegentropyItems } from '../store/negentropy.js';
import type { ScanGuard } from './policy/scan-guard.js';
import { answerBoundedReads, pointLookups } from '../store/planner.js';
import { StepGuard } from './step-guard.js';
import type { GuardLimits, Reply, Request, WorkerInit } from './query-messages.js';
import { unionItems, visibleValue, type NegItemsRequest } from './handlers/neg-items.js';
import { ownBytes } from '../lib/own-bytes.js';
import { MainLoad, runsHere } from './main-load.js';

export type CountOptions = Pick<QueryOptions, 'signal' | 'now'>;

export interface QueryRunner {
  /** worker threads; 0 = queries run on the calling thread */
  readonly threads: number;
  /** requests answered on the calling thread (all of them with 0 threads; see runsInline) */
  readonly inline: number;
  /** requests that would have run on the calling thread, sent to an idle query thread while it was saturated (main-load.ts) */
  readonly offloaded: number;
  /** REQs answered from kept answers (store/answer-cache.ts), on any thread, since start */
  readonly answersKept: number;
  /** same contract as EventStore.queryFrames, including opts.seen */
  query(filters: Filter[], opts: QueryOptions, framing: Framing): Promise<EventFrames>;
  /** same contract as EventStore.countResult (recomputed HLL registers are stored by the runner) */
  count(filters: Filter[], opts?: CountOptions): Promise<CountResult>;
  /** The frames of a query() were sent (or dropped): their buffer goes back to the thread that made it. */
  release(frames: EventFrames): void;
  /**
   * NIP-77 item set of a NEG-OPEN: the union of its filters' records (EventStore.negentropyItems
   * each, with protected kinds hidden as asked), collected and merged in a worker when there is
   * one, capped at req.maxItems while collecting (neg-items.ts unionItems).
   */
  negentropyItems(filters: Filter[], req: NegItemsRequest, opts?: CountOptions): Promise<NegentropyItems>;
  /**
   * A signal for query/count/negentropyItems that also stops the scan past the read budget or
   * deadline; `scanBudget` (index entries) defaults to read.scanBudget.
   */
  scanGuard(outer: { aborted: boolean }, scanBudget?: number): ScanGuard;
  close(): Promise<void>;
}

/** queryThreads = 0: the store on the main thread, the access layer's guard. */
export function inlineQueries(store: EventStore, guard: (outer: { aborted: boolean }, scanBudget?: number) => ScanGuard): QueryRunner {
  let inline = 0;
  return {
    threads: 0,
    get inline() {
      return inline;
    },
    offloaded: 0,
    get answersKept() {
      return store.answersKept();
    },
    query: (filters, opts, framing) => (inline++, store.queryFrames(filters, opts, framing)),
    count: (filters, opts) => (inline++, store.countResult(filters, opts)),
    release: releaseFrames,
    negentropyItems: (filters, req, opts) => storeUnion(store, filters, req, opts),
    scanGuard: guard,
    close: async () => {},
  };
}

/** A NEG-OPEN's item set read from a store on this thread (the worker runs the same). */
export function storeUnion(store: EventStore, filters: Filter[], req: NegItemsRequest, opts?: CountOptions): Promise<NegentropyItems> {
  const accept = visibleValue(req.hidden);
  return unionItems(filters, req.maxItems, (f) => store.negentropyItems(f, { maxItems: req.maxItems, accept, ...opts }));
}

export interface QueryPoolOptions extends WorkerInit {
  threads: number;
  /** read.scanBudget: index entries one REQ/COUNT may read */
  scanBudget: number;
  /** read.queryTimeout, ms */
  queryTimeout: number;
  /** called once per guard that stops a scan (Access.scansCut) */
  onCut?: () => void;
  /** read.offloadWhenBusy: point lookups and answer-bounded scans go to an idle query thread while the main thread is saturated */
  offloadWhenBusy?: boolean;
  /** the main thread's load as measured elsewhere (tests set it by hand); default: a MainLoad when offloadWhenBusy */
  mainLoad?: { readonly busy: boolean };
}

/** How often in-flight requests' signals are checked for an abort (CLOSE, connection gone). */
const ABORT_POLL_MS = 5;

/** Most point lookups (full ids, addresses) a query may need and still run inline (see inlineable). */
const INLINE_LOOKUPS = 64;

/**
 * Lookups by full ids or addresses are a few gets each: cheaper on the main thread than a round
 * trip to a worker (measured: by-id 36.7k q/s inline, 23-25k q/s through the pool). They read at
 * most one index entry per lookup, so they need no scan budget either.
 */
function inlineable(filters: Filter[]): boolean {
  const n = pointLookups(filters);
  return n !== null && n <= INLINE_LOOKUPS;
}

/** Most events a REQ whose scans read only what they return may ask for and still run inline. */
const INLINE_BOUNDED_EVENTS = 500;

/**
 * A REQ runs on the main thread when its work is its answer: point lookups (above), or scans of
 * one exact tag condition whose every index entry read is a match (planner.ts answerBoundedReads),
 * up to INLINE_BOUNDED_EVENTS. Sending such an answer costs the main thread about what reading it
 * does, and a query thread's copy of it costs more than the read (measured on the directory
 * benchmark's followers shape at 600,000 events, 500 follow lists of ~8 KB per answer: 3.2 ms of
 * main thread and 5.2 ms of query thread per answer through the pool, 4.6 ms in all inline;
 * bench/RESULTS.md "Answer-bounded scans on the main thread").
 */
function runsInline(filters: Filter[], qo: QueryOptions): boolean {
  if (inlineable(filters)) return true;
  const n = answerBoundedReads(filters, qo.defaultLimit, qo.maxLimit);
  return n !== null && n <= INLINE_BOUNDED_EVENTS;
}

/** Requests in flight a REQ's home thread may have beyond the least loaded one before it goes elsewhere (pick). */
const ROUTE_SLACK = 2;

/**
 * A REQ's home thread, as a number: a hash of what tells its filters apart cheaply (kinds, limit,
 * the first and the number of authors, the first value of the first tag). REQs asked again alike
 * get the same number; different REQs may too, which costs only the spread.
 */
function routeOf(filters: Filter[]): number {
  let h = 2166136261;
  const mix = (s: string): void => {
    for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  };
  for (const f of filters) {
    mix(`${f.kinds?.join(',') ?? ''}|${f.limit ?? ''}|${f.authors?.length ?? 0}|${f.authors?.[0] ?? ''}|${f.tags?.[0]?.[0] ?? ''}:${f.tags?.[0]?.[1][0] ?? ''}|`);
  }
  return h >>> 0;
}

const ownBuffers = (f: Framing): Framing => ({ prefix: ownBytes(f.prefix), suffix: ownBytes(f.suffix) });

const noFrames = (framing: Framing): EventFrames => ({ buf: new Uint8Array(0), ends: new Uint32Array(0), kinds: new Uint16Array(0), prefixLen: framing.prefix.length, suffixLen: framing.suffix.length });

let nextGuardId = 1;

/** The pool's scan guard: budget and deadline are enforced in the worker; tripped is set from its replies. */
class PoolGuard implements ScanGuard {
  readonly id = nextGuardId++;
  steps = 0;
  tripped: ScanGuard['tripped'] = null;
  /** the worker running this guard's requests (budget shared across them), while any runs */
  worker: PoolWorker | null = null;
  inflight = 0;
  constructor(
    readonly outer: { aborted: boolean },
    readonly maxSteps: number,
    readonly deadline: number,
  ) {}
  get signal(): { readonly aborted: boolean } {
    return this;
  }
  get aborted(): boolean {
    return this.outer.aborted || this.tripped !== null;
  }
  /** Takes the steps and trip of a scan run under this guard (a worker's reply, or StepGuard on this thread). */
  absorb(steps: number | undefined, tripped: ScanGuard['tripped'] | undefined, onCut?: () => void): void {
    if (steps !== undefined && steps > this.steps) this.steps = steps;
    if (tripped && !this.tripped) {
      this.tripped = tripped;
      onCut?.();
    }
  }
}

interface Op {
  guard: PoolGuard | null;
  gid: number;
  /** the caller's abort flag */
  outer?: { aborted: boolean };
  aborting: boolean;
  worker: PoolWorker;
  resolve(r: Reply): void;
  reject(e: Error): void;
}

interface PoolWorker {
  w: Worker;
  inflight: number;
  queue: Request[];
  /** buffers to hand back with the next batch */
  returning: ArrayBufferLike[];
  /** lent kept answers to give back with the next batch (EventFrames.lent) */
  returningLent: number[];
  dead: boolean;
}

export async function queryPool(opts: QueryPoolOptions, fallback: EventStore): Promise<QueryRunner> {
  const pool = new QueryPool(opts, fallback);
  for (let i = 0; i < opts.threads; i++) await pool.addWorker();
  return pool;
}

/** The worker threads, the requests in flight on them and the batching of what goes to each. */
class QueryPool implements QueryRunner {
  readonly threads: number;
  inline = 0;
  /** reads that would have run here, sent to an idle query thread while this thread was saturated */
  offloaded = 0;
  /** the main thread's load (opts.offloadWhenBusy), or null: inline-able reads always run here */
  private readonly load: { readonly busy: boolean } | null;
  private keptByWorkers = 0;
  private readonly init: WorkerInit;
  private readonly maxSteps: number;
  private readonly workers: PoolWorker[] = [];
  private readonly ops = new Map<number, Op>();
  private nextOp = 1;
  private scheduled = false;
  private poll: NodeJS.Timeout | null = null;
  private closing = false;
  /** which worker made each answer in use on this thread (release() hands it back) */
  private readonly origin = new WeakMap<EventFrames, PoolWorker>();

  constructor(private readonly opts: QueryPoolOptions, private readonly fallback: EventStore) {
    this.threads = opts.threads;
    this.init = { dir: opts.dir, mapSize: opts.mapSize, queryYieldEvery: opts.queryYieldEvery, readAhead: opts.readAhead, answerCacheBytes: opts.answerCacheBytes, search: opts.search };
    this.maxSteps = Math.max(1, Math.ceil(opts.scanBudget / opts.queryYieldEvery));
    this.load = opts.mainLoad ?? (opts.offloadWhenBusy ? new MainLoad() : null);
  }

  get answersKept(): number {
    return this.keptByWorkers + this.fallback.answersKept();
  }

  /** Starts one worker thread and waits until its store is open. */
  async addWorker(): Promise<void> {
    const w = new Worker(new URL('./query-worker.js', import.meta.url), { workerData: this.init });
    await new Promise<void>((resolve, reject) => {
      w.once('message', (m: { ready?: true; error?: string }) => (m.ready ? resolve() : reject(new Error(m.error))));
      w.once('error', reject);
    });
    const pw: PoolWorker = { w, inflight: 0, queue: [], returning: [], returningLent: [], dead: false };
    w.on('message', (batch: Reply[] | { closed: true }) => {
      if (Array.isArray(batch)) for (const r of batch) this.settle(r, pw);
    });
    w.on('error', (e) => this.failWorker(pw, e));
    w.on('exit', (code) => this.failWorker(pw, new Error(`exited with ${code}`)));
    w.unref();
    this.workers.push(pw);
  }

  private settle(r: Reply, from?: PoolWorker): void {
    const op = this.ops.get(r.id);
    if (!op) {
      // settled already (the pool closing): what was lent still goes back
      if (r.frames && from) this.giveBack(from, r.frames);
      return;
    }
    this.ops.delete(r.id);
    if (r.frames) this.origin.set(r.frames, op.worker);
    op.worker.inflight--;
    const g = op.guard;
    if (g) {
      if (--g.inflight === 0) g.worker = null;
      g.absorb(r.steps, r.tripped, this.opts.onCut);
    }
    if (op.worker.inflight === 0) op.worker.w.unref(); // idle workers do not keep the process alive
    if (this.ops.size === 0 && this.poll) {
      clearInterval(this.poll);
      this.poll = null;
    }
    if (r.error !== undefined) op.reject(new Error(r.error));
    else op.resolve(r);
  }

  private failWorker(pw: PoolWorker, err: Error): void {
    if (pw.dead) return;
    pw.dead = true;
    for (const [id, op] of this.ops) if (op.worker === pw) this.settle({ id, error: `query worker failed: ${err.message}` });
  }

  private readonly flush = (): void => {
    this.scheduled = false;
    for (const pw of this.workers) {
      if (pw.dead) continue;
      if (pw.returning.length > 0 || pw.returningLent.length > 0) {
        // first in the batch: the worker has its buffers back before it answers the batch's queries
        pw.queue.unshift({ t: 'r', bufs: pw.returning, lent: pw.returningLent.length > 0 ? pw.returningLent : undefined });
        pw.returning = [];
        pw.returningLent = [];
      }
      if (pw.queue.length === 0) continue;
      // answer buffers are shared memory (nostr/frames.ts): they go back by reference, nothing to transfer
      pw.w.postMessage(pw.queue);
      pw.queue = [];
    }
  };

  private schedule(): void {
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.flush);
    }
  }

  private send(pw: PoolWorker, m: Request): void {
    pw.queue.push(m);
    this.schedule();
  }

  private readonly checkAborts = (): void => {
    for (const op of this.ops.values()) {
      if (op.aborting || !op.outer?.aborted) continue;
      op.aborting = true; // one abort per guard reaches every request sharing it
      this.send(op.worker, { t: 'a', g: op.gid });
    }
  };

  /**
   * Least loaded live worker; a guard's requests stay on one worker so they share its budget. A
   * REQ with a `route` goes to the worker that route names unless that one has more than
   * ROUTE_SLACK requests in flight beyond the least loaded: each thread keeps the answers it made
   * (store/answer-cache.ts), so the same REQ asked again is best asked of the same thread, and a
   * large answer is then kept once, not once per thread.
   */
  private pick(g: PoolGuard | null, route?: number): PoolWorker | null {
    if (g?.worker && !g.worker.dead) return g.worker;
    let best: PoolWorker | null = null;
    for (const pw of this.workers) if (!pw.dead && (!best || pw.inflight < best.inflight)) best = pw;
    if (route !== undefined && best) {
      const home = this.workers[route % this.workers.length]!;
      if (!home.dead && home.inflight <= best.inflight + ROUTE_SLACK) return home;
    }
    return best;
  }

  /** Sends a request to a worker; null when there is no live worker (the caller runs it here). */
  private submit(signal: { aborted: boolean } | undefined, make: (id: number, gid: number, limits: GuardLimits) => Request, route?: number): Promise<Reply> | null {
    const pw = this.closing ? null : this.pick(signal instanceof PoolGuard ? signal : null, route);
    if (!pw) return null;
    const g = signal instanceof PoolGuard ? signal : null;
    const id = this.nextOp++;
    const gid = g ? g.id : nextGuardId++;
    const limits: GuardLimits = g ? { steps: g.steps, maxSteps: g.maxSteps, deadline: g.deadline } : { steps: 0 };
    return new Promise<Reply>((resolve, reject) => {
      this.ops.set(id, { guard: g, gid, outer: g ? g.outer : signal, aborting: false, worker: pw, resolve, reject });
      if (g) {
        g.inflight++;
        g.worker = pw;
      }
      if (pw.inflight++ === 0) pw.w.ref();
      this.send(pw, make(id, gid, limits));
      if (!this.poll) {
        this.poll = setInterval(this.checkAborts, ABORT_POLL_MS);
        this.poll.unref();
      }
    });
  }

  /** Runs a request on this thread under its guard's rule, which then takes the steps and trip as from a worker's reply. */
  private async here<T>(signal: ScanSignal | undefined, run: (s: ScanSignal | undefined) => Promise<T>): Promise<T> {
    this.inline++;
    if (!(signal instanceof PoolGuard)) return run(signal);
    const sg = new StepGuard(signal.steps, signal.maxSteps, signal.deadline, this.opts.queryYieldEvery, signal.outer);
    try {
      return await run(sg);
    } finally {
      signal.absorb(sg.steps, sg.tripped, this.opts.onCut);
    }
  }

  /** Query threads alive with nothing in flight. */
  private idleThreads(): number {
    let n = 0;
    for (const pw of this.workers) if (!pw.dead && pw.inflight === 0) n++;
    return n;
  }

  /** An inline-able read runs here unless this thread is saturated and a query thread is idle (main-load.ts). */
  private here_(inlineable: boolean): boolean {
    if (!inlineable) return false;
    if (!this.load?.busy) return true; // the common case: nothing to count
    const here = runsHere(true, true, this.idleThreads());
    if (!here) this.offloaded++;
    return here;
  }

  async query(filters: Filter[], qo: QueryOptions, framing: Framing): Promise<EventFrames> {
    const signal = qo.signal;
    if (signal instanceof PoolGuard ? signal.outer.aborted : signal?.aborted) return noFrames(framing); // as the store: nothing scanned
    const p = this.here_(runsInline(filters, qo)) ? null : this.submit(signal, (id, g, limits) => ({ t: 'q', id, g, limits, filters, defaultLimit: qo.defaultLimit, maxLimit: qo.maxLimit, now: qo.now, seen: qo.seen !== undefined, framing: ownBuffers(framing), lend: qo.lend, maxBytes: qo.maxBytes, peekMore: qo.peekMore }), this.init.answerCacheBytes ? routeOf(filters) : undefined);
    if (!p) return this.here(signal, (s) => this.fallback.queryFrames(filters, { ...qo, signal: s }, framing)); // inline, or no live worker
    const r = await p;
    if (r.kept) this.keptByWorkers++;
    if (qo.seen) {
      qo.seen.upTo = r.upTo ?? 0;
      if (r.newer) for (const id of r.newer) qo.seen.newer.add(id);
    }
    return r.frames ?? noFrames(framing);
  }

  async count(filters: Filter[], co?: CountOptions): Promise<CountResult> {
    const signal = co?.signal;
    if (signal instanceof PoolGuard ? signal.outer.aborted : signal?.aborted) return { count: 0 };
    const p = this.here_(inlineable(filters)) ? null : this.submit(signal, (id, g, limits) => ({ t: 'c', id, g, limits, filters, now: co?.now }));
    if (!p) return this.here(signal, (s) => this.fallback.countResult(filters, { ...co, signal: s })); // inline, or no live worker
    const r = await p;
    // a worker's store handle is read-only: the main thread's writes the recomputed registers
    if (r.refresh) this.fallback.refreshHll(r.refresh).catch(() => {});
    const out: CountResult = { count: r.n ?? 0 };
    if (r.approximate) out.approximate = true;
    if (r.hll) out.hll = r.hll;
    return out;
  }

  release(frames: EventFrames): void {
    const pw = this.origin.get(frames);
    if (!pw) return releaseFrames(frames); // made on this thread (inline lookups)
    this.origin.delete(frames);
    this.giveBack(pw, frames);
  }

  /** Frames `pw` made go back to it with its next batch: their buffer, or the number of the kept answer lent. */
  private giveBack(pw: PoolWorker, frames: EventFrames): void {
    if (pw.dead) return;
    if (frames.lent !== undefined) pw.returningLent.push(frames.lent);
    else pw.returning.push(frames.buf.buffer);
    this.schedule();
  }

  async negentropyItems(filters: Filter[], req: NegItemsRequest, co?: CountOptions): Promise<NegentropyItems> {
    const signal = co?.signal;
    const p = this.submit(signal, (id, g, limits) => ({ t: 'n', id, g, limits, filters, req, now: co?.now }));
    if (!p) return this.here(signal, (s) => storeUnion(this.fallback, filters, req, { ...co, signal: s })); // no live worker
    const r = await p;
    return r.neg ?? { records: new Uint8Array(0), count: 0, overLimit: false, complete: false };
  }

  scanGuard(outer: { aborted: boolean }, scanBudget = this.opts.scanBudget): ScanGuard {
    const { opts } = this;
    const steps = scanBudget === opts.scanBudget ? this.maxSteps : Math.max(1, Math.ceil(scanBudget / opts.queryYieldEvery));
    return new PoolGuard(outer, steps, Date.now() + opts.queryTimeout);
  }

  async close(): Promise<void> {
    if (this.load instanceof MainLoad) this.load.stop();
    this.closing = true;
    for (const [id] of this.ops) this.settle({ id, error: 'relay shutting down' });
    await Promise.all(this.workers.map((pw) => closeWorker(pw)));
  }
}

/** Asks a worker to close its store, waits for it (at most 2 s), then ends the thread. */
async function closeWorker(pw: PoolWorker): Promise<void> {
  if (pw.dead) return;
  pw.dead = true;
  const closed = new Promise<void>((resolve) => {
    const t = setTimeout(resolve, 2000);
    pw.w.on('message', (m: { closed?: true }) => {
      if (m && (m as { closed?: true }).closed) {
        clearTimeout(t);
        resolve();
      }
    });
  });
  pw.w.ref();
  pw.w.postMessage({ close: true });
  await closed;
  await pw.w.terminate();
}
