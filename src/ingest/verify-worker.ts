// Worker thread of the verification pool: checks batches of events' canonical JSON.
import { parentPort, workerData } from 'node:worker_threads';
import { loadVerifier } from '../nostr/verify.js';
import type { VerifyBatch, VerifyInit, VerifyReady, VerifyResults } from './verify-messages.js';

const v = await loadVerifier((workerData as VerifyInit).prefer).catch((e: Error) => {
  parentPort!.postMessage({ error: e.message } satisfies VerifyReady);
  throw e;
});
const check = v.checkJson;
parentPort!.postMessage({ ready: v.backend } satisfies VerifyReady);
parentPort!.on('message', (m: VerifyBatch) => {
  const results = m.jobs.map(check);
  parentPort!.postMessage({ id: m.id, results } satisfies VerifyResults);
});
