// The trust ranking on the status page: mode, age and duration of the current ranks, graph size,
// NIP-85 service key and what the last publication did.
import type { Section } from '../relay/dashboard/status.js';
import type { TrustStatus } from '../trust/trust.js';

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
