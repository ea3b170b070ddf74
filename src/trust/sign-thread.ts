// Signs NIP-85 assertions off the main thread. A pass that publishes 100,000 assertions signs
// 100,000 events: ~13 s of CPU even with the native signer (nostr/sign.ts), which the main thread
// would take from every client in slices between the publisher's waits. One worker, started on
// first use and unreferenced while idle (it never keeps the process alive); if it cannot start or
// dies, the batches are signed here, so publishing never stops for it.
import { Worker } from 'node:worker_threads';
import type { NostrEvent } from '../nostr/event.js';
import { signEvent, type EventTemplate } from '../nostr/sign.js';
import type { SignReply, SignRequest } from './sign-messages.js';

export type SignBatch = (templates: EventTemplate[], key: Uint8Array) => Promise<NostrEvent[]>;

/** Signs on the calling thread (tests, and the fallback). */
export const signHere: SignBatch = async (templates, key) => templates.map((t) => signEvent(t, key));

export interface SignThread {
  sign: SignBatch;
  /** batches signed by the worker (the rest were signed on the calling thread) */
  readonly offThread: number;
  close(): Promise<void>;
}

export function signThread(): SignThread {
  let worker: Worker | null = null;
  let failed = false;
  let next = 0;
  let offThread = 0;
  const pending = new Map<number, { resolve: (evs: NostrEvent[]) => void; reject: (e: Error) => void }>();

  const fail = (e: Error) => {
    failed = true;
    worker = null;
    for (const p of pending.values()) p.reject(e);
    pending.clear();
  };
  const start = (): Worker | null => {
    if (worker || failed) return worker;
    try {
      const w = new Worker(new URL('./sign-worker.js', import.meta.url));
      w.on('message', (m: SignReply) => {
        const p = pending.get(m.id);
        if (!p) return;
        pending.delete(m.id);
        if (pending.size === 0) w.unref();
        if (m.events) p.resolve(m.events);
        else p.reject(new Error(m.error ?? 'signing failed'));
      });
      w.on('error', fail);
      w.on('exit', (code) => { if (worker === w) fail(new Error(`signing thread exited with ${code}`)); });
      w.unref();
      worker = w;
    } catch {
      failed = true;
    }
    return worker;
  };

  return {
    get offThread() {
      return offThread;
    },
    async sign(templates, key) {
      const w = start();
      if (!w) return signHere(templates, key);
      const id = next++;
      const done = new Promise<NostrEvent[]>((resolve, reject) => pending.set(id, { resolve, reject }));
      if (pending.size === 1) w.ref();
      w.postMessage({ id, key, templates } satisfies SignRequest);
      try {
        const evs = await done;
        offThread++;
        return evs;
      } catch {
        return signHere(templates, key); // the thread failed: sign here rather than lose the batch
      }
    },
    async close() {
      const w = worker;
      worker = null;
      failed = true;
      if (w) await w.terminate();
    },
  };
}
