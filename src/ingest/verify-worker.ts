// Worker thread of the verification pool: checks batches of [serialized, id, pubkey, sig].
import { parentPort, workerData } from 'node:worker_threads';
import { loadVerifier } from '../nostr/verify.js';

const v = await loadVerifier(workerData.prefer).catch((e: Error) => {
  parentPort!.postMessage({ error: e.message });
  throw e;
});
const check = v.checkSerialized;
parentPort!.postMessage({ ready: v.backend });
parentPort!.on('message', (m: { id: number; jobs: Array<[string, string, string, string]> }) => {
  const results = m.jobs.map(([ser, id, pubkey, sig]) => check(ser, id, pubkey, sig));
  parentPort!.postMessage({ id: m.id, results });
});
