// Signature checks off the main thread. The main thread runs uWS, parsing, the store's index work
// and fan-out; a check costs ~49 µs native / ~270 µs wasm, so moving it to worker threads frees
// the main thread for everything else (measured: 2 workers give 1.5-1.9x on 2 cores; bench/RESULTS.md).
// Events are sent in batches (one postMessage per batch per turn of the event loop) to keep the
// per-event messaging cost to a few microseconds.
import { Worker } from 'node:worker_threads';
import { canonical, type NostrEvent } from '../nostr/event.js';
import type { EventVerifier, VerifierBackend } from '../nostr/verify.js';
import type { VerifyBatch, VerifyInit, VerifyReady, VerifyResults } from './verify-messages.js';

/**
 * The answer to a check: null when id and signature are right, else an `invalid:` message; and for
 * a valid list of a graph kind, from a pool made with `graphMembers`, its members as
 * store/graph-json.ts graphOnlyMembers gives them (undefined otherwise: the store reads them itself).
 */
export type CheckDone = (bad: string | null, members?: string | null) => void;

export interface AsyncVerifier {
  readonly backend: VerifierBackend;
  readonly threads: number;
  /**
   * null when id and signature are right, else an `invalid:` message. `json` is the event's
   * canonical JSON when the caller has it (the ingest path does): the pool sends that one string.
   */
  check(ev: NostrEvent, json?: string): Promise<string | null>;
  /**
   * check() answered through a callback: while the check waits, nothing but `done` is held (the
   * ingest path keeps thousands of events in flight, and a promise chain per event was most of
   * what the main thread's scavenges copied: bench/RESULTS.md, twenty-third session).
   */
  checkThen(ev: NostrEvent, json: string | undefined, done: CheckDone): void;
  close(): Promise<void>;
}

/** Checks on the calling thread (threads = 0); from the canonical JSON too when the caller has it. */
export function inlineVerifier(v: EventVerifier): AsyncVerifier {
  const now = (ev: NostrEvent, json?: string): string | null => (json === undefined ? v.check(ev) : v.checkJson(json));
  return { backend: v.backend, threads: 0, check: async (ev, json) => now(ev, json), checkThen: (ev, json, done) => done(now(ev, json)), close: async () => {} };
}

/** One item of a batch: the event's canonical JSON (verify-messages.ts). */
type Job = string;

/**
 * `graphMembers`: the threads also read each valid graph list's members (CheckDone), for a store
 * whose writer thread parses events from their JSON (writer-thread.ts).
 */
export async function poolVerifier(threads: number, prefer: VerifierBackend | 'auto', graphMembers = false): Promise<AsyncVerifier> {
  const workers: Worker[] = [];
  const pending = new Map<number, CheckDone[]>();
  let batchId = 0;
  let backend: VerifierBackend = 'wasm';
  for (let i = 0; i < threads; i++) {
    const w = new Worker(new URL('./verify-worker.js', import.meta.url), { workerData: { prefer, graphMembers } satisfies VerifyInit });
    backend = await new Promise<VerifierBackend>((resolve, reject) => {
      w.once('message', (m: VerifyReady) => (m.ready ? resolve(m.ready) : reject(new Error(m.error))));
      w.once('error', reject);
    });
    w.on('message', (m: VerifyResults) => {
      const resolvers = pending.get(m.id)!;
      pending.delete(m.id);
      // one callback that throws must not keep the rest of the batch from their answers
      for (let k = 0; k < resolvers.length; k++) {
        try {
          resolvers[k](m.results[k], m.members?.[k]);
        } catch (err) {
          queueMicrotask(() => {
            throw err;
          });
        }
      }
      if (pending.size === 0) for (const x of workers) x.unref(); // idle workers do not keep the process alive
    });
    w.unref();
    workers.push(w);
  }
  let next = 0;
  let jobs: Job[] = [];
  let resolvers: CheckDone[] = [];
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (jobs.length === 0) return;
    const id = batchId++;
    if (pending.size === 0) for (const x of workers) x.ref();
    pending.set(id, resolvers);
    workers[next++ % workers.length].postMessage({ id, jobs } satisfies VerifyBatch);
    jobs = [];
    resolvers = [];
  };
  const checkThen = (ev: NostrEvent, json: string | undefined, done: CheckDone): void => {
    jobs.push(json ?? JSON.stringify(canonical(ev)));
    resolvers.push(done);
    if (jobs.length >= 256) flush();
    else if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  };
  return {
    backend,
    threads,
    check: (ev, json) => new Promise((resolve) => checkThen(ev, json, resolve)),
    checkThen,
    async close() {
      await Promise.all(workers.map((w) => w.terminate()));
    },
  };
}
