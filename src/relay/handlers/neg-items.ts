// The item scan of a NEG-OPEN as the query runner carries it (to a worker thread or inline): the
// filter, the record cap, and which protected kinds (DMs) the reader may not see. The visibility
// rule is ProtectedKinds' (policy/read.ts), applied to the stored value: only values of a protected
// kind are parsed, and an event the reader could not fetch with REQ is not offered by negentropy.
import type { Filter } from '../../nostr/filter.js';
import { jsonOf, kindOf } from '../../store/codec.js';
import { ProtectedKinds } from '../policy/read.js';

/** Protected kinds and the pubkeys the reader authenticated as: plain data, so it crosses threads. */
export interface HiddenKinds {
  kinds: number[];
  authed: string[];
}

export interface NegItemsRequest {
  maxItems: number;
  /** set when the filter could match protected events the reader may not see */
  hidden?: HiddenKinds;
}

export type { Filter };

/** The store's accept() hook for a request, or undefined when every match is visible. */
export function visibleValue(hidden: HiddenKinds | undefined): ((value: Buffer) => boolean) | undefined {
  if (!hidden || hidden.kinds.length === 0) return undefined;
  const pk = new ProtectedKinds(hidden.kinds);
  const authed = new Set(hidden.authed);
  return (value) => !pk.kinds.has(kindOf(value)) || pk.canSeeJson(jsonOf(value), authed);
}
