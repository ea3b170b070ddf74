// The one ingest path's contract: a client's EVENT, an event the spider fetched, and an imported
// line all go through validate -> policy -> verify -> store -> OK -> fan-out.
import type { NostrEvent } from '../nostr/event.js';

export type IngestSource = 'client' | 'spider' | 'import' | 'monitor' | 'trust';

export type IngestStatus =
  | 'stored' // new, committed and broadcast
  | 'ephemeral' // broadcast, never stored
  | 'duplicate'
  | 'replaced' // older replaceable version: not stored, not broadcast
  | 'deleted' // blocked by a deletion tombstone
  | 'invalid' // malformed, or its id or signature is wrong (an `invalid:` refusal)
  | 'rejected'; // refused by policy, rate-limited or a store error

export interface IngestResult {
  ok: boolean;
  /** NIP-01 prefixed message for OK ('' when stored) */
  message: string;
  status: IngestStatus;
  /** the event id when one could be read (for the OK message) */
  id?: string;
}

export interface IngestContext {
  source: IngestSource;
  /** client IP, for policies and rate limits (clients only) */
  ip?: string;
  /** pubkeys authenticated on the connection (NIP-42) */
  authed?: ReadonlySet<string>;
}

/** The answer to one ingested event, once: an error (a hook or listener threw), else the result. It must not throw. */
export type IngestDone = (err: unknown, result?: IngestResult) => void;

/**
 * The ingest path: as a promise, or `direct` with a callback (the relay's EVENT handler: a
 * callback per event in flight instead of a chain of promises, ingest.ts afterCheck). A throw
 * before the event is handed on (a bug) comes out of `direct` itself, and `done` is not called.
 */
export type Ingest = ((raw: unknown, ctx: IngestContext) => Promise<IngestResult>) & {
  direct(raw: unknown, ctx: IngestContext, done: IngestDone): void;
};

/**
 * Something that receives events as they are stored (live subscriptions, spider counters).
 * `serial` is the store's serial (undefined for ephemeral events, which are never stored).
 */
export type OnStored = (ev: NostrEvent, json: string, serial?: number) => void;

/** The counters the ingest path keeps (the relay's Prometheus registry provides them). */
export interface IngestMetrics {
  eventsReceived: { inc(labels: { source: IngestSource }): void };
  eventsStored: { inc(labels: { source: IngestSource }): void };
  eventsRejected: { inc(labels: { reason: string }): void };
}
