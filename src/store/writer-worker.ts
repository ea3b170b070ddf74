// The worker thread of a store's writer thread (writer-thread.ts): its own handle of the same LMDB
// environment (lmdb-js shares one environment per process), whose batched writer does every write
// of the main thread's store. Answers go back once per turn of this thread's event loop, after the
// transactions that hold them have committed (writer.ts: a commit includes its flush).
import { parentPort, workerData } from 'node:worker_threads';
import { openStore } from './index.js';
import type { EventStore, WriteResult } from './types.js';
import type { FromWriter, OpDone, ToWriter, WriterInit, WriterOp } from './writer-messages.js';

const port = parentPort!;
const post = (m: FromWriter): void => port.postMessage(m);
const errText = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/** the store's log lines go to the main thread's logger, an error as its message */
const logAt = (level: 'info' | 'warn') => (o: object, msg = ''): void => {
  const obj: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) obj[k] = v instanceof Error ? { message: v.message } : v;
  post({ t: 'log', level, obj, msg });
};

let store: EventStore;
try {
  store = await openStore({ ...(workerData as WriterInit), logger: { info: logAt('info'), warn: logAt('warn') } });
} catch (e) {
  post({ t: 'failed', error: errText(e) });
  throw e;
}

let answers: OpDone[] | null = null;
function answer(d: OpDone): void {
  if (!answers) {
    answers = [];
    setImmediate(() => {
      const done = answers!;
      answers = null;
      post({ t: 'done', done, disk: store.disk() });
    });
  }
  answers.push(d);
}

function run(op: WriterOp): Promise<WriteResult | boolean | number> {
  switch (op.t) {
    case 'e':
      // parsed when its transaction applies it (writer.ts), not while it waits in the queue
      return store.write(null, op.json, op.members);
    case 'r':
      return store.remove(op.eventId);
    case 's':
      return store.sweepExpired(op.now);
    case 'h':
      // the store's refreshHll does not say whether the registers were stored (nobody asks): true
      return store.refreshHll([{ key: op.key, version: op.version, registers: op.registers }]).then(() => true);
  }
}

port.on('message', (m: ToWriter) => {
  if (m.t === 'close') {
    // queued writes first (store.close waits for them), then the answers still due, then closed
    void store.close().finally(() => setImmediate(() => post({ t: 'closed' })));
    return;
  }
  for (const op of m.ops) {
    let p: Promise<WriteResult | boolean | number>;
    try {
      p = run(op);
    } catch (e) {
      p = Promise.reject(e);
    }
    p.then((value) => answer({ id: op.id, value }), (e: unknown) => answer({ id: op.id, error: errText(e) }));
  }
});
post({ t: 'ready' });
