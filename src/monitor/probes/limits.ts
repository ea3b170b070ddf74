// Limits probes, each bounded: the `limit` honoured (a REQ for one more kind 1 event than NIP-11's
// max_limit, at most 501: strfry clamps at 500 — fewer events than asked is a clamp or a relay that
// holds fewer), the number of filters one REQ may carry (NIP-11's max_filters, else 10), and the
// subscriptions open at once, only where NIP-11 claims at most SUBS_CHEAP (one more is opened, with
// filters that match nothing, and all are closed again).
import type { RelayClient } from '../../remote/client.js';
import type { Nip11Info } from '../../remote/nip11.js';
import { ask, nobody } from './ask.js';
import type { LimitsProbe } from './types.js';

export const LIMIT_CAP = 500;
const DEFAULT_FILTERS = 10;
const MAX_FILTERS = 50;
export const SUBS_CHEAP = 20;

export async function probeLimits(client: RelayClient, nip11: Nip11Info | null, o: { timeout: number; signal: AbortSignal }): Promise<LimitsProbe> {
  const out: LimitsProbe = {};
  const lim = nip11?.limitation ?? {};
  const claimedLimit = lim.max_limit;
  const asked = Math.min(claimedLimit && claimedLimit > 0 ? claimedLimit : LIMIT_CAP, LIMIT_CAP) + 1;
  const l = await ask(client, [{ kinds: [1], limit: asked }], { ...o, maxEvents: asked });
  if (l.end === 'eose') out.limit = { asked, got: l.events.length + l.extra };
  if (o.signal.aborted) return out;

  const nf = Math.min(lim.max_filters && lim.max_filters > 0 ? lim.max_filters : DEFAULT_FILTERS, MAX_FILTERS);
  const who = nobody();
  // distinct filters of kind 1 (no gated kind: DMs would be refused for AUTH, not for their number)
  const f = await ask(client, Array.from({ length: nf }, (_, i) => ({ authors: [who], kinds: [1], since: i })), { ...o, maxEvents: 1 });
  if (f.end === 'eose' || f.end === 'closed' || f.end === 'silent') out.filters = { asked: nf, accepted: f.end === 'eose', ...(f.reason ? { reason: f.reason } : {}) };
  if (o.signal.aborted) return out;

  const ns = lim.max_subscriptions;
  if (ns && ns > 0 && ns <= SUBS_CHEAP) {
    const open: string[] = [];
    let last: Awaited<ReturnType<typeof ask>> | null = null;
    for (let i = 0; i <= ns && !o.signal.aborted; i++) {
      last = await ask(client, [{ authors: [who], kinds: [0], limit: 1 }], { ...o, maxEvents: 1, keepOpen: true });
      if (last.end === 'eose') open.push(last.id);
      else break;
    }
    for (const id of open) client.unsubscribe(id);
    if (last && !o.signal.aborted) out.subscriptions = { asked: ns + 1, accepted: open.length === ns + 1 };
  }
  return out;
}
