// The write side as every part of the program sees it: the store, the signature verifier, the hook
// lists and the one ingest path over them (app/pipeline.ts opens it; the relay, the spider,
// `import` and `sync` write through it).
import type { EventStore } from '../store/types.js';
import type { Policies } from './hooks.js';
import type { Ingest, OnStored } from './types.js';
import type { AsyncVerifier } from './verify-pool.js';

export interface WritePipeline {
  store: EventStore;
  verifier: AsyncVerifier;
  policies: Policies;
  ingest: Ingest;
  /** Calls `fn` for every event the ingest path stored (or passed on, if ephemeral); returns an unsubscribe. */
  onStored(fn: OnStored): () => void;
}
