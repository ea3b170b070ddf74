// Worker thread of the verification pool: checks batches of events' canonical JSON.
import { parentPort, workerData } from 'node:worker_threads';
import { loadVerifier } from '../nostr/verify.js';
import { graphOnlyMembers } from '../store/graph-json.js';
import type { VerifyBatch, VerifyInit, VerifyReady, VerifyResults } from './verify-messages.js';

const init = workerData as VerifyInit;
const v = await loadVerifier(init.prefer).catch((e: Error) => {
  parentPort!.postMessage({ error: e.message } satisfies VerifyReady);
  throw e;
});
const check = v.checkJson;
parentPort!.postMessage({ ready: v.backend } satisfies VerifyReady);
parentPort!.on('message', (m: VerifyBatch) => {
  const results = m.jobs.map(check);
  // a follow list's members are read here, beside its signature, not on the store's writer thread
  const members = init.graphMembers ? m.jobs.map((json, k) => (results[k] === null ? graphOnlyMembers(json) : null)) : undefined;
  parentPort!.postMessage({ id: m.id, results, members } satisfies VerifyResults);
});
