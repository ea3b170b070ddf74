// What the operator's access rules say in NIP-11: the NIPs they implement (13 PoW, 42 AUTH, 70
// protected events, 86 management) and the `limitation` fields they decide — auth_required,
// restricted_writes (any rule that refuses writes by who or what: AUTH for writes, allow lists,
// PoW, the trust policy), min_pow_difficulty. Read at each NIP-11 request: NIP-86 changes show.
import type { Config } from '../../config.js';
import type { AccessLists } from '../../policy/lists.js';

export const ACCESS_NIPS: readonly number[] = [13, 42, 70, 86];

/** Sets the access-related limitation fields on a relayInfo() document. */
export function accessLimitation(config: Config, lists: AccessLists, doc: Record<string, unknown>): Record<string, unknown> {
  const { auth, policy } = config;
  const lim = (doc.limitation ??= {}) as Record<string, unknown>;
  lim.auth_required = auth.required === 'read' || auth.required === 'all';
  lim.restricted_writes = auth.required === 'write' || auth.required === 'all' || auth.writeKinds.length > 0 ||
    lists.pubkeyAllowListActive() || lists.kindAllowListActive() || policy.minPow > 0 || policy.powKinds.length > 0 ||
    (config.trust.enabled && config.trust.policy);
  if (policy.minPow > 0) lim.min_pow_difficulty = policy.minPow;
  return doc;
}
