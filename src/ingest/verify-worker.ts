// Worker thread of the verification pool: checks batches of events' canonical JSON.
import { parentPort, workerData } from 'node:worker_threads';
import { loadVerifier } from '../nostr/verify.js';

const v = await loadVerifier(workerData.prefer).catch((e: Error) => {
  parentPort!.postMessage({ error: e.message });
  throw e;
});
const check = v.checkJson;
parentPort!.postMessage({ ready: v.backend });
parentPort!.on('message', (m: { id: number; jobs: string[] }) => {
  const results = m.jobs.map(check);
  parentPort!.postMessage({ id: m.id, results });
});
