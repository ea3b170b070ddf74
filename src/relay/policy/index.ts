// The relay's full write/read policy set, for anything that ingests outside the relay process
// (orbweaver import, a standalone spider): the same rules as a client EVENT meets, minus the
// per-connection parts (AUTH, rate limits).
import type { Config } from '../../config.js';
import type { EventStore } from '../../store/types.js';
import { loadVerifier } from '../../nostr/verify.js';
import { inlineVerifier, type AsyncVerifier } from '../../ingest/verify-pool.js';
import { Access } from './access.js';
import { eventLimitPolicies } from '../../policy/event-limits.js';
import { emptyPolicies, type Policies } from '../../ingest/hooks.js';

export async function relayPolicies(config: Config, store: EventStore, verifier?: AsyncVerifier): Promise<{ policies: Policies; access: Access }> {
  const policies = emptyPolicies();
  policies.rejectEvent.push(...eventLimitPolicies(config.limits));
  const access = new Access(config, verifier ?? inlineVerifier(await loadVerifier(config.verifier)));
  access.install(policies, store);
  return { policies, access };
}
