// The write rules every ingest source meets — a client's EVENT, the spider's and `sync`'s fetched
// events, an imported line — as one khatru-style RejectEvent list: the access lists (pubkeys,
// kinds, IPs, banned events, persisted and changed at run time through NIP-86), NIP-42 and NIP-70
// for writes, PoW, the trust rule, then the event limits, and which requests to vanish (NIP-62) this
// relay takes. Nothing here is per connection: the relay's Access adds that
// (relay/policy/access.ts) over the same lists.
import type { Config } from '../config.js';
import type { RejectEvent } from '../ingest/hooks.js';
import type { EventStore } from '../store/types.js';
import { eventLimitPolicies } from './event-limits.js';
import { AccessLists } from './lists.js';
import { writePolicies } from './write.js';
import { configuredRelayUrls, RelayNames, vanishTargets } from './vanish.js';

export interface WriteRules {
  rejectEvent: RejectEvent[];
  /** the lists the rules read (the relay's NIP-86 API changes them) */
  lists: AccessLists;
  /** the names of this relay a request to vanish may give (the relay adds its listen addresses: app.ts) */
  relayNames: RelayNames;
}

export function writeRules(config: Config, store: Pick<EventStore, 'env' | 'ranks'>): WriteRules {
  const lists = new AccessLists(config);
  lists.open(store.env);
  const relayNames = new RelayNames(configuredRelayUrls(config));
  return { lists, relayNames, rejectEvent: [...writePolicies(config, lists, store.ranks), ...eventLimitPolicies(config.limits), vanishTargets(relayNames)] };
}
