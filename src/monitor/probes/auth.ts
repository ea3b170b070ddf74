// NIP-42 probe: a REQ for direct messages to a key no one holds (kinds 4 and 1059, what relays that
// gate reads gate first) shows whether the relay asks for AUTH on demand; the challenges the probe
// connection received tell on-connect from on-demand; the check's own plain REQ tells whether a read
// is served without AUTH.
import type { RelayClient } from '../../remote/client.js';
import { ask, nobody, type Step } from './ask.js';
import type { AuthProbe } from './types.js';

/** The gated REQ: answered auth-required:, its reason; else undefined. */
export async function askGated(client: RelayClient, o: Step): Promise<string | undefined> {
  const a = await ask(client, [{ kinds: [4, 1059], '#p': [nobody()], limit: 1 }], { ...o, maxEvents: 1 });
  return a.end === 'closed' && /^auth-required:/.test(a.reason ?? '') ? a.reason : undefined;
}

/**
 * When the relay challenged (pure): on connect when the first challenge came before any answer and
 * no request of ours was refused auth-required: (a relay that challenges together with such a
 * refusal may send the challenge first), or when plain reads are refused; else on demand.
 */
export function authObservation(challenges: ReadonlyArray<{ afterAnswers: number }>, readWithoutAuth: boolean | null, gated: string | undefined, authRefusals: number): AuthProbe {
  const p: AuthProbe = { challenge: 'none', readWithoutAuth };
  if (gated) p.gated = gated;
  if (challenges.length === 0) return p;
  const early = challenges[0].afterAnswers === 0;
  p.challenge = readWithoutAuth === false || (early && authRefusals === 0) ? 'connect' : 'demand';
  return p;
}
