// Live mode on the relay's pages: a status-page section (how many relays are followed live, the
// events per minute and lag of the busiest), a table on /directory (every live relay, with the hop
// a crawl found it at: live mode may follow relays past spider.hops unless live.maxHop bounds it),
// its part of /directory.json, and its /metrics lines. Read from the live set's status; nothing is
// kept here.
import type { LiveRelayStatus, LiveStatus } from '../spider/live/index.js';
import type { Section } from '../relay/dashboard/status.js';
import { esc } from '../lib/html.js';

/** Relays listed one by one on the status page (the busiest); /directory lists them all. */
const STATUS_ROWS = 20;

const lag = (r: LiveRelayStatus) => (r.lag === null ? '-' : `${r.lag} s`);
const state = (r: LiveRelayStatus) => (r.state === 'cut-off' || r.state === 'waiting') && r.lastProblem ? `${r.state} (${r.lastProblem})` : r.state;
/** null: no crawl placed the relay (docs/spider.md "Which relays") */
const hop = (r: LiveRelayStatus) => (r.hop === null ? 'none' : String(r.hop));
/** "at most 50, any hop" / "at most 50, hop ≤ 2" */
const bounds = (s: LiveStatus) => `at most ${s.maxRelays}, ${s.maxHop < 0 ? 'any hop' : `hop ≤ ${s.maxHop}`}`;

export function liveSection(s: LiveStatus): Section {
  const rows: Array<[string, string]> = [
    ['live relays', s.enabled ? `${s.live} live, ${s.waiting} connecting, ${s.cutOff} cut off (${bounds(s)})` : 'off'],
    ['events per minute', String(s.perMinute)],
    ['events received / stored', `${s.events} / ${s.stored}`],
    ['outbox refresh', s.outbox.last ? `${s.outbox.rounds} rounds; last: ${s.outbox.last.pubkeys} pubkeys on ${s.outbox.last.relays} relays, ${s.outbox.last.counts.stored} events stored${s.outbox.running ? '; running' : ''}` : (s.outbox.running ? 'running' : '-')],
  ];
  for (const r of s.remotes.slice(0, STATUS_ROWS)) rows.push([r.url, `${state(r)}; ${r.perMinute}/min; lag ${lag(r)}; ${r.why === 'general' ? 'general relay' : 'write relay'}; hop ${hop(r)}`]);
  if (s.remotes.length > STATUS_ROWS) rows.push(['more', `${s.remotes.length - STATUS_ROWS} more on /directory`]);
  return { title: 'Live directory', rows };
}

/** The table inserted in /directory (as of the page's load). */
export function liveHtml(s: LiveStatus): string {
  const rows = s.remotes.map((r) => `<tr><td>${esc(r.url)}</td><td>${hop(r)}</td><td>${esc(state(r))}</td><td>${r.perMinute}</td><td>${esc(lag(r))}</td><td>${r.events}</td><td>${r.stored}</td><td>${r.caughtUp}</td><td>${r.reconnects}</td><td>${r.cutOffs}</td><td>${r.why}</td></tr>`).join('');
  return `<section id="live"><h2>Live subscriptions</h2><p class="sub">${s.live} live, ${s.waiting} connecting, ${s.cutOff} cut off, ${bounds(s)} (<code>spider.live.maxHop</code>; hop: where the crawl last found the relay, none: no crawl did, e.g. named only by lists beyond <code>spider.hops</code>); ${s.perMinute} events per minute (as of this page's load; <a href="/directory.json">/directory.json</a> has them under <code>live</code>)</p>
<div class="wide"><table><thead><tr><th>relay</th><th>hop</th><th>state</th><th>events/min</th><th>lag</th><th>events</th><th>stored</th><th>caught up</th><th>reconnects</th><th>cut off</th><th>chosen as</th></tr></thead><tbody>${rows}</tbody></table></div></section>`;
}

export function liveMetricsText(s: LiveStatus): string {
  return [
    '# HELP orbweaver_live_relays relays followed live, by state',
    '# TYPE orbweaver_live_relays gauge',
    `orbweaver_live_relays{state="live"} ${s.live}`,
    `orbweaver_live_relays{state="connecting"} ${s.waiting}`,
    `orbweaver_live_relays{state="cut-off"} ${s.cutOff}`,
    '# HELP orbweaver_live_events_total events received from live subscriptions',
    '# TYPE orbweaver_live_events_total counter',
    `orbweaver_live_events_total ${s.events}`,
    '# HELP orbweaver_live_stored_total events from live subscriptions stored',
    '# TYPE orbweaver_live_stored_total counter',
    `orbweaver_live_stored_total ${s.stored}`,
    '',
  ].join('\n');
}
