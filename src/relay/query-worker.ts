// Worker thread of the query pool (query-pool.ts): opens its own read-only handle on the relay's
// LMDB environment and runs REQ scans and COUNTs for the main thread. Requests arrive in batches
// (one postMessage per turn of the main thread's event loop), replies go back one by one; several
// queries run interleaved, since the store yields between steps, and aborts arrive between steps.
import { parentPort, workerData } from 'node:worker_threads';
import { openStore } from '../store/index.js';
import { framesTransfer, giveBackLent, giveBuffer } from '../nostr/frames.js';
import type { SeenSerials } from '../store/types.js';
import { StepGuard } from './step-guard.js';
import { storeUnion } from './query-pool.js';
import type { GuardLimits, Reply, Request, WorkerInit } from './query-messages.js';

const init = workerData as WorkerInit;
const store = await openStore({ ...init, readOnly: true }).catch((e: Error) => {
  parentPort!.postMessage({ error: e.message });
  throw e;
});

/** The store's signal for every request sharing one guard (step-guard.ts), plus the main thread's abort. */
class Guard extends StepGuard {
  refs = 0;
}

const guards = new Map<number, Guard>();

function guardFor(gid: number, l: GuardLimits): Guard {
  let g = guards.get(gid);
  if (!g) {
    g = new Guard(l.steps, l.maxSteps ?? Infinity, l.deadline ?? Infinity, init.queryYieldEvery);
    guards.set(gid, g);
  }
  g.refs++;
  return g;
}

/**
 * Each reply is posted as soon as its query ends (a few µs against ~0.1-3 ms per query): batching
 * replies per turn made the first query of a batch wait for the last one, and the worker then sat
 * idle while the main thread and the clients caught up (measured: worker 61% busy, 410 q/s).
 */
function reply(r: Reply, gid: number, g: Guard): void {
  r.steps = g.steps;
  r.tripped = g.tripped;
  if (--g.refs === 0) guards.delete(gid);
  // the results' buffers and negentropy records move to the main thread (no copy)
  const transfer: ArrayBuffer[] = r.frames ? framesTransfer(r.frames) : [];
  if (r.neg && r.neg.records.byteLength > 0) transfer.push(r.neg.records.buffer as ArrayBuffer);
  parentPort!.postMessage([r], transfer);
}

async function run(m: Request): Promise<void> {
  if (m.t === 'r') {
    for (const ab of m.bufs) giveBuffer(ab);
    for (const id of m.lent ?? []) giveBackLent(id);
    return;
  }
  if (m.t === 'a') {
    const g = guards.get(m.g);
    if (g) g.abort = true;
    return;
  }
  const g = guardFor(m.g, m.limits);
  try {
    if (m.t === 'q') {
      const seen: SeenSerials | undefined = m.seen ? { upTo: 0, newer: new Set() } : undefined;
      const before = store.answersKept();
      const pending = store.queryFrames(m.filters, { defaultLimit: m.defaultLimit, maxLimit: m.maxLimit, now: m.now, signal: g, seen, lend: m.lend, maxBytes: m.maxBytes, peekMore: m.peekMore }, m.framing);
      // a kept answer is given before the store's first await: counted by now, or not at all
      const kept = store.answersKept() > before;
      const frames = await pending;
      reply({ id: m.id, frames, upTo: seen?.upTo, newer: seen && seen.newer.size > 0 ? [...seen.newer] : undefined, kept: kept || undefined }, m.g, g);
    } else if (m.t === 'n') {
      const neg = await storeUnion(store, m.filters, m.req, { now: m.now, signal: g });
      reply({ id: m.id, neg }, m.g, g);
    } else {
      const r = await store.countResult(m.filters, { now: m.now, signal: g });
      reply({ id: m.id, n: r.count, approximate: r.approximate, hll: r.hll, refresh: r.refresh }, m.g, g);
    }
  } catch (e) {
    reply({ id: m.id, error: (e as Error).message ?? String(e) }, m.g, g);
  }
}

parentPort!.on('message', (batch: Request[] | { close: true }) => {
  if (!Array.isArray(batch)) {
    store.close().then(() => parentPort!.postMessage({ closed: true }), () => parentPort!.postMessage({ closed: true }));
    return;
  }
  // Each request reads a snapshot at least as new as this batch. lmdb-js renews a thread's read
  // snapshot on a timer after its first read, so a thread busy with another scan could still hold
  // one from before a write whose OK the asking client has already read (a REQ right after its
  // EVENT found nothing: test/spider/lookup.test.ts under load). The writer's answers renew the
  // main thread's the same way (store/writer-thread.ts).
  store.env.resetReadTxn();
  for (const m of batch) void run(m);
});
parentPort!.postMessage({ ready: true });
