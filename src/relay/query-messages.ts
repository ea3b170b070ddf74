// Every message between the main thread's query pool (query-pool.ts) and its worker threads
// (query-worker.ts), declared once and imported by both sides.
import type { Filter } from '../nostr/filter.js';
import type { EventFrames, Framing } from '../nostr/frames.js';
import type { HllRefresh } from '../store/types.js';
import type { NegentropyItems } from '../store/negentropy.js';
import type { NegItemsRequest } from './handlers/neg-items.js';

/** workerData of each query thread. */
export interface WorkerInit {
  dir: string;
  mapSize: number;
  queryYieldEvery: number;
  /** config.store.readAhead: the same as the main thread's handle (lmdb-js shares one environment per process) */
  readAhead?: boolean;
  /** config.store.answerCache: bytes of answers this thread keeps (store/answer-cache.ts) */
  answerCacheBytes?: number;
  /** config.search (NIP-50 index settings) */
  search?: { kinds: number[]; maxPostings: number; rankWindow: number };
}

/** Step count so far and the budget rule (Access.scanGuard's); absent limits = unlimited. */
export interface GuardLimits {
  steps: number;
  maxSteps?: number;
  deadline?: number;
}

export type Request =
  | { t: 'q'; id: number; g: number; limits: GuardLimits; filters: Filter[]; defaultLimit: number; maxLimit: number; now?: number; seen: boolean; framing: Framing; lend?: boolean; maxBytes?: number; peekMore?: boolean }
  | { t: 'c'; id: number; g: number; limits: GuardLimits; filters: Filter[]; now?: number }
  | { t: 'n'; id: number; g: number; limits: GuardLimits; filters: Filter[]; req: NegItemsRequest; now?: number }
  | { t: 'a'; g: number }
  /** shared buffers of sent answers, back for reuse, and the numbers of lent kept answers given back */
  | { t: 'r'; bufs: ArrayBufferLike[]; lent?: number[] };

export interface Reply {
  id: number;
  /** REQ: the results, transferred */
  frames?: EventFrames;
  /** COUNT */
  n?: number;
  approximate?: boolean;
  hll?: Uint8Array;
  refresh?: HllRefresh[];
  /** negentropy items (the records' buffer is transferred, not copied) */
  neg?: NegentropyItems;
  upTo?: number;
  newer?: string[];
  /** REQ: the answer was one the thread kept (store/answer-cache.ts) */
  kept?: boolean;
  error?: string;
  steps?: number;
  tripped?: null | 'budget' | 'timeout';
}
