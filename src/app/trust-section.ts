// The trust ranking on the status page: mode, age and duration of the current ranks, graph size,
// NIP-85 service key and what the last publication did.
import type { Section } from '../relay/dashboard/status.js';
import type { Trust, TrustStatus } from '../trust/trust.js';
import type { RelayHandle } from '../relay/server.js';
import { parsePubkey } from '../nostr/keys.js';
import { peoplePage } from '../trust/people.js';

const age = (ms: number): string => (ms < 120_000 ? `${Math.round(ms / 1000)} s` : ms < 7_200_000 ? `${Math.round(ms / 60_000)} min` : `${(ms / 3_600_000).toFixed(1)} h`);

export function trustSection(s: TrustStatus, now = Date.now()): Section {
  const rows: Array<[string, string]> = [];
  const m = s.last;
  rows.push(['state', !s.enabled ? 'off' : s.running ? 'computing' : m ? 'idle' : 'waiting for the first pass']);
  if (m) {
    rows.push(
      ['mode', m.mode === 'rooted' ? `rooted (${m.roots} roots)` : 'global (orders search only)'],
      ['ranks age', age(now - m.computedAt)],
      ['last pass', `${(m.durationMs / 1000).toFixed(1)} s, ${m.iterations} iterations`],
      ['graph', `${m.nodes.toLocaleString('en')} pubkeys, ${m.edges.toLocaleString('en')} follows, ${m.muteEdges.toLocaleString('en')} mutes`],
    );
  }
  if (s.nip85) rows.push(['NIP-85 service key', s.nip85.pubkey], ['NIP-85 last publication', s.nip85.last ? `${s.nip85.last.published} published, ${s.nip85.last.unchanged} unchanged, ${s.nip85.last.failed} failed` : 'none yet']);
  if (s.lastError) rows.push(['problem', s.lastError]);
  return { title: 'Trust ranking', rows };
}

/**
 * /directory/people: the top pubkeys by rank (as of the last pass) and a lookup (?pubkey=hex or
 * npub: its rank, followers and mutes; the name only when it is among the top). The JSON twin is
 * /directory/people.json.
 */
export function mountPeople(relay: Pick<RelayHandle, 'addPage' | 'store'>, trust: Trust, relayName: string): void {
  const lookup = (q: URLSearchParams) => {
    const asked = q.get('pubkey');
    if (asked === null || asked === '') return undefined;
    const pk = parsePubkey(asked.trim());
    const r = pk ? relay.store.ranks.get(pk) : undefined;
    const top = pk ? trust.people().people.find((p) => p.pubkey === pk) : undefined;
    return { asked, person: pk && r ? { pubkey: pk, name: top?.name ?? '', ...r } : null };
  };
  relay.addPage('/directory/people', (q) => ({ type: 'text/html; charset=utf-8', body: peoplePage(trust.people(), relayName, lookup(q)) }));
  relay.addPage('/directory/people.json', (q) => {
    const l = lookup(q);
    if (l) return l.person ? { type: 'application/json', body: JSON.stringify(l.person) } : { status: '404 Not Found', type: 'application/json', body: JSON.stringify({ error: 'not ranked' }) };
    return { type: 'application/json', body: JSON.stringify(trust.people()) };
  });
}
