// What the monitor publishes from a relay's NIP-11 claims and its probes' observations (pure; the
// table in docs/monitor.md):
// - N: a NIP a probe saw served, whether NIP-11 claims it or not; no N for a claimed NIP a probe saw
//   refused, answered wrongly or not answered; the claim kept for NIPs no probe tests and where the
//   probe could not tell (search found nothing, the probe was skipped);
// - T Search: only for a relay that answered a search with matching events;
// - the differences between claim and observation, in words, for /directory and the CLI.
import type { Nip11Info } from '../../remote/nip11.js';
import type { NipProbe, Outcome, ProbeReport } from './types.js';

/** The NIPs the probes test, and the probe of each. */
export const PROBED_NIPS = [42, 45, 50, 77] as const;
export type ProbedNip = (typeof PROBED_NIPS)[number];

/** served: a probe saw it; not: a probe saw it refused or broken; unknown: the claim decides. */
export type Verdict = 'served' | 'not' | 'unknown';

const NIP_VERDICT: Record<Outcome, Verdict> = { served: 'served', refused: 'not', wrong: 'not', silent: 'not', empty: 'unknown', skipped: 'unknown' };

export function verdict(nip: ProbedNip, p: ProbeReport | undefined): Verdict {
  if (!p) return 'unknown';
  // a relay that flooded the probes did not serve what they were waiting for
  const flooded = /^flood/.test(p.cut ?? '');
  const of = (x: NipProbe | undefined) => (x ? (flooded && x.outcome === 'skipped' ? 'not' : NIP_VERDICT[x.outcome]) : 'unknown');
  switch (nip) {
    case 50: return of(p.search);
    case 45: return of(p.count);
    case 77: return of(p.negentropy);
    // a relay that never challenged may still ask for AUTH on writes: only a challenge is an observation
    case 42: return p.auth && p.auth.challenge !== 'none' ? 'served' : 'unknown';
  }
}

/** The probe outcome of each probed NIP, for the history and the views ({"50": "served", …}). */
export function outcomes(p: ProbeReport | undefined): Record<string, string> {
  if (!p) return {};
  const out: Record<string, string> = {};
  if (p.search) out['50'] = p.search.outcome;
  if (p.count) out['45'] = p.count.outcome;
  if (p.negentropy) out['77'] = p.negentropy.outcome;
  if (p.auth) out['42'] = p.auth.challenge === 'none' ? 'no challenge' : `challenge on ${p.auth.challenge}`;
  return out;
}

export interface Published {
  /** N tags: each once, ascending */
  nips: number[];
  /** T tags */
  types: string[];
  /** NIP-11's supported_nips as claimed (each once, ascending) */
  claimed: number[];
  /** claim against observation, in words; empty when they agree (or nothing was probed) */
  differences: string[];
}

const nipName = (n: number) => `NIP-${String(n).padStart(2, '0')}`;

function why(p: NipProbe | undefined): string {
  if (!p) return '';
  const d = p.detail ? `: ${p.detail}` : '';
  return p.outcome === 'silent' ? 'no answer' : p.outcome === 'skipped' ? 'flooded the probes' : `${p.outcome}${d}`;
}

/** N, T and the differences of one check: the claims of `nip11`, corrected by `probes` (absent: probes off). */
export function decide(nip11: Nip11Info | null, probes: ProbeReport | undefined): Published {
  const claimed = [...new Set((nip11?.supported_nips ?? []).filter((n) => Number.isSafeInteger(n) && n >= 0))].sort((a, b) => a - b);
  if (!probes) return { nips: claimed, types: claimed.includes(50) ? ['Search'] : [], claimed, differences: [] };
  const nips = new Set(claimed);
  const differences: string[] = [];
  const probeOf: Record<ProbedNip, NipProbe | undefined> = { 50: probes.search, 45: probes.count, 77: probes.negentropy, 42: undefined };
  for (const n of PROBED_NIPS) {
    const v = verdict(n, probes);
    const isClaimed = claimed.includes(n);
    if (v === 'served') {
      nips.add(n);
      if (!isClaimed) differences.push(`serves ${nipName(n)} without claiming it`);
    } else if (v === 'not') {
      nips.delete(n);
      if (isClaimed) differences.push(`claims ${nipName(n)}, ${why(probeOf[n])}`);
    }
  }
  if (probes.count?.outcome === 'served' && probes.count.hll === false) differences.push('NIP-45 hll malformed');
  const lim = nip11?.limitation ?? {};
  const l = probes.limits;
  if (l?.limit && lim.max_limit && l.limit.got > lim.max_limit) differences.push(`claims max_limit ${lim.max_limit}, sent ${l.limit.got} events to limit ${l.limit.asked}`);
  if (l?.filters && lim.max_filters && !l.filters.accepted) differences.push(`claims max_filters ${lim.max_filters}, refused a REQ with ${l.filters.asked}${l.filters.reason ? ` (${l.filters.reason})` : ''}`);
  if (l?.subscriptions && l.subscriptions.accepted) differences.push(`claims max_subscriptions ${lim.max_subscriptions}, accepted ${l.subscriptions.asked}`);
  if (probes.auth?.readWithoutAuth === true && lim.auth_required === true) differences.push('claims auth_required, served a REQ without AUTH');
  if (probes.nip11 === 'invalid') differences.push('NIP-11 document not valid');
  else if (probes.nip11 === 'absent') differences.push('no NIP-11 document');
  return { nips: [...nips].sort((a, b) => a - b), types: verdict(50, probes) === 'served' ? ['Search'] : [], claimed, differences };
}
