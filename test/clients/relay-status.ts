// The relay's own account of a client test, from /status.json: how many NIP-42 challenges it sent
// and what it refused. A library's plain session (publish, read, search, count, live) must cost no
// challenge: the relay challenges only when something needs AUTH (auth.challenge on-demand).
import type { RelayProcess } from '../helpers/relay-process.js';

interface Status {
  auth: { required: string; challenge: string };
  access: Record<string, number>;
  refusals: { byReason: Array<{ reason: string; byVerb: Record<string, number> }> };
}

export async function relayStatus(relay: RelayProcess): Promise<Status> {
  return (await (await fetch(`${relay.httpUrl}/status.json?directory=0`)).json()) as Status;
}

export async function challengesSent(relay: RelayProcess): Promise<number> {
  const s = await relayStatus(relay);
  if (s.auth.challenge !== 'on-demand') throw new Error(`the relay challenges ${s.auth.challenge}, not on demand: started with other settings than the defaults?`);
  return s.access.authChallengesSent ?? NaN;
}
