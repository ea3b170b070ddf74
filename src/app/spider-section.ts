// The spider's progress as a dashboard section: phase, hop, relays done / total, events, runs.
import type { SpiderStatus } from '../spider/index.js';
import type { StatusFigures } from '../relay/dashboard/figures.js';

const when = (ms: number | null | undefined) => (ms ? new Date(ms).toISOString().replace('T', ' ').slice(0, 19) + ' UTC' : '-');

export function spiderSection(s: SpiderStatus): StatusFigures['sections'][number] {
  const last = s.lastRun;
  return {
    title: 'Directory spider',
    rows: [
      ['phase', s.running ? `${s.phase}, hop ${s.hop} of ${s.maxHops}` : 'idle'],
      ['relays in this hop', `${s.relaysDone} / ${s.relaysTotal} done`],
      ['relays done this run', String(s.relaysDoneRun)],
      ['fetching now', s.current.join(', ') || '-'],
      ['events fetched / stored', `${s.events.fetched} / ${s.events.stored}`],
      ['relays in the directory', String(s.directorySize)],
      ['runs', String(s.runs)],
      ['last run', last ? `${when(last.finishedAt)}: ${last.relays.reached} reached, ${last.relays.failed} failed, ${last.events.stored} events stored` : '-'],
      ['next run', when(s.nextRun)],
    ],
  };
}
