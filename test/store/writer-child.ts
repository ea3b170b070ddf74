// A second writer for the concurrency and kill -9 tests, run as a worker thread or a child
// process. Not a test file itself (no .test suffix).
//   mode "replaceable": writes the given events, posts the results, closes.
//   mode "ack": writes events one by one forever and prints each id once its write resolved.
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import type { NostrEvent } from '../../src/nostr/event.js';
import { openStore } from '../../src/store/index.js';

interface Job {
  dir: string;
  mode: 'replaceable' | 'ack';
  events?: NostrEvent[];
}

async function main(job: Job): Promise<void> {
  const store = await openStore({ dir: job.dir, mapSize: 256 * 1024 ** 2, maxBatch: 50 });
  if (job.mode === 'replaceable') {
    const results = await Promise.all(job.events!.map((e) => store.write(e, JSON.stringify(e))));
    await store.close();
    const out = { statuses: results.map((r) => r.status) };
    if (parentPort) parentPort.postMessage(out);
    else process.stdout.write(JSON.stringify(out) + '\n');
    return;
  }
  const { randomBytes } = await import('node:crypto');
  for (let i = 0; ; i++) {
    const e: NostrEvent = {
      id: randomBytes(32).toString('hex'),
      pubkey: randomBytes(32).toString('hex'),
      created_at: 1_700_000_000 + i,
      kind: 1,
      tags: [['t', 'ack']],
      content: 'x'.repeat(200),
      sig: randomBytes(64).toString('hex'),
    };
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
