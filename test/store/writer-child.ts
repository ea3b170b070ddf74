// A second writer for the concurrency and kill -9 tests, run as a worker thread or a child
// process. Not a test file itself (no .test suffix).
//   mode "replaceable": writes the given events, posts the results, closes; with inFlight, only that
//     many at a time (so many small transactions instead of a few large ones); with make, it makes
//     that many kind 1 events tagged ["t", "many"] itself (too many to pass on a command line).
//   mode "ack": writes events one by one forever and prints each id once its write resolved.
import { randomBytes } from 'node:crypto';
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import type { NostrEvent } from '../../src/nostr/event.js';
import { openStore } from '../../src/store/index.js';

interface Job {
  dir: string;
  mode: 'replaceable' | 'ack';
  events?: NostrEvent[];
  inFlight?: number;
  make?: number;
}

function randomEvent(i: number, tag: string): NostrEvent {
  return {
    id: randomBytes(32).toString('hex'),
    pubkey: randomBytes(32).toString('hex'),
    created_at: 1_700_000_000 + i,
    kind: 1,
    tags: [['t', tag]],
    content: 'x'.repeat(200),
    sig: randomBytes(64).toString('hex'),
  };
}

async function main(job: Job): Promise<void> {
  const store = await openStore({ dir: job.dir, mapSize: 256 * 1024 ** 2, maxBatch: 50 });
  if (job.mode === 'replaceable') {
    const events = job.make ? Array.from({ length: job.make }, (_, i) => randomEvent(i, 'many')) : job.events!;
    const step = job.inFlight ?? events.length;
    const results = [];
    for (let i = 0; i < events.length; i += step) results.push(...(await Promise.all(events.slice(i, i + step).map((e) => store.write(e, JSON.stringify(e))))));
    await store.close();
    const out = { statuses: results.map((r) => r.status) };
    if (parentPort) parentPort.postMessage(out);
    else process.stdout.write(JSON.stringify(out) + '\n');
    return;
  }
  for (let i = 0; ; i++) {
    const e = randomEvent(i, 'ack');
    // a few in flight at once, so batches hold several events
    await Promise.all([e].map((x) => store.write(x, JSON.stringify(x))));
    process.stdout.write(e.id + '\n');
  }
}

const job: Job = isMainThread ? (JSON.parse(process.argv[2]) as Job) : (workerData as Job);
main(job).catch((err) => {
  console.error(err);
  process.exit(1);
});
