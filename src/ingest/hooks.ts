// Policy hooks in the style of khatru: small functions composed into lists. Each returns null to
// let the thing through, or a refusal message with its NIP-01 prefix.
import type { NostrEvent } from '../nostr/event.js';
import type { Filter } from '../nostr/filter.js';
import type { IngestContext } from './types.js';

export interface EventInfo {
  event: NostrEvent;
  /** canonical JSON text, as it would be stored */
  json: string;
}

export type RejectEvent = (e: EventInfo, ctx: IngestContext) => string | null;
export type RejectFilter = (filters: Filter[], ctx: ReadContext) => string | null;
export type RejectConnection = (ip: string) => string | null;
export type OnSaved = (e: EventInfo, ctx: IngestContext) => void;

export interface ReadContext {
  ip?: string;
  authed?: ReadonlySet<string>;
  verb: 'REQ' | 'COUNT';
}

export interface Policies {
  rejectEvent: RejectEvent[];
  rejectFilter: RejectFilter[];
  rejectConnection: RejectConnection[];
  onSaved: OnSaved[];
}

export const emptyPolicies = (): Policies => ({ rejectEvent: [], rejectFilter: [], rejectConnection: [], onSaved: [] });

export function firstRefusal<A extends unknown[]>(hooks: Array<(...a: A) => string | null>, ...args: A): string | null {
  for (const h of hooks) {
    const r = h(...args);
    if (r) return r;
  }
  return null;
}
