// Every message between the verification pool (verify-pool.ts) and its worker threads
// (verify-worker.ts), declared once and imported by both sides.
import type { VerifierBackend } from '../nostr/verify.js';

/** workerData of each verification thread: the backend asked for, and whether to read graph lists' members. */
export interface VerifyInit {
  prefer: VerifierBackend | 'auto';
  /** each valid event's graph members too (store/graph-json.ts graphOnlyMembers), for a store's writer thread */
  graphMembers: boolean;
}

/** The worker's first message: the backend it loaded, or why it could not. */
export type VerifyReady = { ready: VerifierBackend; error?: undefined } | { ready?: undefined; error: string };

/** A batch to check: each job is one event's canonical JSON (the worker cuts the id preimage out of it). */
export interface VerifyBatch {
  id: number;
  jobs: string[];
}

/** The batch's verdicts in job order: null for a valid event, else the reason. */
export interface VerifyResults {
  id: number;
  results: Array<string | null>;
  /** with VerifyInit.graphMembers, in job order: a valid graph-only list's joined members, else null */
  members?: Array<string | null>;
}
