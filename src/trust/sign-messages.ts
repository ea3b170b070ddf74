// Every message between the signing thread's owner (sign-thread.ts) and the thread itself
// (sign-worker.ts), declared once and imported by both sides.
import type { NostrEvent } from '../nostr/event.js';
import type { EventTemplate } from '../nostr/sign.js';

export interface SignRequest {
  id: number;
  key: Uint8Array;
  templates: EventTemplate[];
}

/** The signed events in template order, or why the batch failed. */
export interface SignReply {
  id: number;
  events?: NostrEvent[];
  error?: string;
}
