// Limits probes, each bounded: the `limit` honoured and the number of filters one REQ may carry, in
// one REQ — a filter for one more kind 1 event than NIP-11's max_limit (at most 501: strfry clamps
// at 500; fewer events than asked is a clamp or a relay that holds fewer) beside filters that match
// nothing, up to NIP-11's max_filters (else 10, at most 50); refused, the limit is asked again alone.
// And the subscriptions open at once, only where NIP-11 claims at most SUBS_CHEAP: one more than
// claimed is opened, with filters that match nothing, and all are closed again.
import type { RelayClient } from '../../remote/client.js';
import type { Nip11Info } from '../../remote/nip11.js';
import { ask, nobody, type Step } from './ask.js';
import type { LimitsProbe } from './types.js';

export const LIMIT_CAP = 500;
const DEFAULT_FILTERS = 10;
const MAX_FILTERS = 50;
export const SUBS_CHEAP = 20;

/** The subscription-count probe runs (then the other probes close their subscriptions first). */
export const probesSubscriptions = (nip11: Nip11Info | null): boolean => {
  const ns = nip11?.limitation?.max_subscriptions;
  return ns !== undefined && ns > 0 && ns <= SUBS_CHEAP;
};

export async function probeLimits(client: RelayClient, nip11: Nip11Info | null, o: Step): Promise<LimitsProbe> {
  const out: LimitsProbe = {};
  const lim = nip11?.limitation ?? {};
  const claimedLimit = lim.max_limit;
  const asked = Math.min(claimedLimit && claimedLimit > 0 ? claimedLimit : LIMIT_CAP, LIMIT_CAP) + 1;
  const nf = Math.min(lim.max_filters && lim.max_filters > 0 ? lim.max_filters : DEFAULT_FILTERS, MAX_FILTERS);
  const who = nobody();
  // distinct filters of kind 1 that match nothing (no gated kind: DMs would be refused for AUTH, not for their number)
  const empty = Array.from({ length: nf - 1 }, (_, i) => ({ authors: [who], kinds: [1], since: i }));
  let l = await ask(client, [{ kinds: [1], limit: asked }, ...empty], { ...o, maxEvents: asked });
  if (nf > 1 && (l.end === 'eose' || l.end === 'closed' || l.end === 'silent')) out.filters = { asked: nf, accepted: l.end === 'eose', ...(l.reason ? { reason: l.reason } : {}) };
  if (l.end !== 'eose' && nf > 1 && !o.signal.aborted) l = await ask(client, [{ kinds: [1], limit: asked }], { ...o, maxEvents: asked });
  if (l.end === 'eose') out.limit = { asked, got: l.events.length + l.extra };
  if (o.signal.aborted || !probesSubscriptions(nip11)) return out;

  const ns = lim.max_subscriptions!;
  const open: string[] = [];
  let last: Awaited<ReturnType<typeof ask>> | null = null;
  for (let i = 0; i <= ns && !o.signal.aborted; i++) {
    last = await ask(client, [{ authors: [who], kinds: [0], limit: 1 }], { ...o, maxEvents: 1, keepOpen: true });
    if (last.end === 'eose') open.push(last.id);
    else break;
  }
  for (const id of open) client.unsubscribe(id);
  if (last && !o.signal.aborted) out.subscriptions = { asked: ns + 1, accepted: open.length === ns + 1 };
  return out;
}
