// The operator's status page at `/`: one self-contained HTML document (no external assets, no
// build step) with the first /status.json embedded; client.ts renders it and keeps it current.
// Layout, top to bottom: the relay's address to copy, live figures with rates, four charts of the
// last hour, refusals by reason, access figures, the spider's progress and the relay directory.
import type { DashboardData } from './status.js';
import { CLIENT_SCRIPT } from './client.js';
import { esc } from '../../lib/html.js';

const STYLE = `
:root{--fg:#1d2329;--muted:#6b7580;--line:#e3e7eb;--card:#f6f8fa;--accent:#3b6fd4;--ok:#2a9d5c;--warn:#c77b2a;--bad:#d1495b}
@media (prefers-color-scheme:dark){:root{--fg:#e2e6ea;--muted:#96a0aa;--line:#2e353c;--card:#1b2026;--accent:#6f9cf0}body{background:#12161a}}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);max-width:78em;margin:1.5em auto;padding:0 1.2em}
body.stale main,body.stale .figures{opacity:.55}
header{display:flex;flex-wrap:wrap;gap:.4em 2em;align-items:flex-end;justify-content:space-between;border-bottom:1px solid var(--line);padding-bottom:.8em}
h1{margin:0;font-size:1.6em;font-weight:650}
#description{margin:.15em 0 0;color:var(--muted)}
.connect{display:flex;align-items:center;gap:.5em;flex-wrap:wrap}
.connect label{color:var(--muted);font-size:.85em}
#address{font:600 1.05em ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:var(--card);border:1px solid var(--line);border-radius:6px;padding:.25em .6em;user-select:all}
button{font:inherit;font-size:.85em;border:1px solid var(--line);background:var(--card);color:var(--fg);border-radius:6px;padding:.2em .7em;cursor:pointer}
button:hover{border-color:var(--accent)}
.meta{color:var(--muted);font-size:.85em;margin:.5em 0 0}
.meta a{color:inherit}
#updated::before{content:"";display:inline-block;width:.55em;height:.55em;border-radius:50%;background:var(--ok);margin-right:.4em;vertical-align:.05em}
body.stale #updated::before{background:var(--bad)}
.figures{display:grid;grid-template-columns:repeat(auto-fit,minmax(11em,1fr));gap:.7em;margin:1.1em 0}
.fig{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:.6em .8em}
.fig .label{color:var(--muted);font-size:.8em;text-transform:uppercase;letter-spacing:.04em}
.fig .value{font-size:1.65em;font-weight:650;font-variant-numeric:tabular-nums;line-height:1.25}
.fig .sub{color:var(--muted);font-size:.8em;font-variant-numeric:tabular-nums}
.fig .sub.alert{color:#b3261e;font-weight:600}
.charts{display:grid;grid-template-columns:repeat(2,minmax(0,1fr));gap:.7em}
@media (max-width:50em){.charts{grid-template-columns:1fr}}
.chart{border:1px solid var(--line);border-radius:8px;padding:.5em .7em .4em}
.chart h3{margin:0;font-size:.9em;font-weight:600}
.chart .legend{font-size:.8em;color:var(--muted);min-height:1.3em;font-variant-numeric:tabular-nums}
.chart .key{margin-right:1em;white-space:nowrap}.chart .key i{display:inline-block;width:.8em;height:.25em;margin-right:.35em;vertical-align:.2em}
.chart .at{float:right}
.chart .frame{position:relative}
.chart .ymax{position:absolute;top:0;left:.2em;font-size:.72em;color:var(--muted);pointer-events:none}
.chart .plot svg{display:block;width:100%;height:110px}
.chart .line{fill:none;stroke-width:1.6;vector-effect:non-scaling-stroke}.chart .line.dash{stroke-dasharray:4 3}
.chart .area{opacity:.1;stroke:none}.chart .grid{stroke:var(--line);vector-effect:non-scaling-stroke}
.chart .cursor{stroke:var(--muted);stroke-width:1;vector-effect:non-scaling-stroke}
.chart .axis{display:flex;justify-content:space-between;font-size:.72em;color:var(--muted)}
h2{font-size:1.05em;margin:1.6em 0 .5em;padding-bottom:.2em;border-bottom:1px solid var(--line)}
.cols{display:grid;grid-template-columns:repeat(auto-fit,minmax(24em,1fr));gap:0 2em}
table{border-collapse:collapse;font-variant-numeric:tabular-nums}
th,td{text-align:left;padding:.18em 1.2em .18em 0;vertical-align:top}
th{font-weight:500;color:var(--muted)}
#refusals td,#refusals tfoot td{text-align:right}#refusals thead th:not(:first-child){text-align:right}
#refusals tfoot th,#refusals tfoot td{border-top:1px solid var(--line);font-weight:600}
details{margin-top:.6em}summary{cursor:pointer;color:var(--muted);font-size:.9em}
details table{font-size:.85em;margin-top:.3em}
.muted{color:var(--muted)}
[hidden]{display:none!important}
.toolbar{display:flex;flex-wrap:wrap;gap:.5em;align-items:center;margin-bottom:.5em}
#dir-filter{font:inherit;padding:.25em .5em;border:1px solid var(--line);border-radius:6px;min-width:18em;background:transparent;color:var(--fg)}
.chip{border-radius:999px;padding:.1em .7em}.chip.on{border-color:var(--accent);background:var(--accent);color:#fff}
#dir-count,#dir-generated{color:var(--muted);font-size:.85em}
.scroll{overflow-x:auto}
#directory{width:100%;font-size:.88em}
#directory thead th{position:sticky;top:0;background:Canvas;cursor:pointer;white-space:nowrap;border-bottom:1px solid var(--line);user-select:none}
#directory td{border-bottom:1px solid var(--line)}
#directory td.url{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;white-space:nowrap}
#directory td.err{color:var(--bad);max-width:22em;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
#directory .num,#directory th.num{text-align:right;padding-right:1.5em}
.pill{display:inline-block;border-radius:999px;padding:0 .55em;font-size:.85em;background:var(--card);border:1px solid var(--line)}
.pill.st-ok{color:var(--ok);border-color:var(--ok)}.pill.st-partial,.pill.st-backoff{color:var(--warn);border-color:var(--warn)}
.pill.st-failed{color:var(--bad);border-color:var(--bad)}.pill.st-crawling{color:var(--accent);border-color:var(--accent)}
footer{margin:2em 0 1em;color:var(--muted);font-size:.8em}
h2 .more{font-size:.8em;font-weight:400;margin-left:.8em;color:var(--accent)}
#directory td.url a{color:inherit;text-decoration:none}#directory td.url a:hover{text-decoration:underline}
code{background:var(--card);padding:0 .3em;border-radius:4px}
`;

const fig = (id: string, label: string, sub: string) =>
  `<div class="fig"><div class="label">${label}</div><div class="value" id="fig-${id}">-</div><div class="sub" id="${sub}"></div></div>`;

const chartBox = (id: string, title: string) =>
  `<div class="chart" id="${id}" data-title="${esc(title)}"><h3>${esc(title)}</h3><div class="legend"></div><div class="frame"><span class="ymax"></span><div class="plot"></div></div><div class="axis"><span>60 min ago</span><span>30 min ago</span><span>now</span></div></div>`;

export function dashboardPage(d: DashboardData, refreshMs = 2000): string {
  // </script> cannot appear inside the JSON block: escape '<'
  const json = JSON.stringify(d).replace(/</g, '\\u003c');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<link rel="icon" href="data:,"><title>${esc(d.name)} · relay status</title><style>${STYLE}</style></head>
<body>
<header>
  <div><h1 id="name">${esc(d.name)}</h1><p id="description">${esc(d.description)}</p></div>
  <div class="connect"><label for="address">connect a Nostr client to</label><span id="address">${esc(d.publicUrl ?? d.listenUrl)}</span><button id="copy-address" type="button">copy</button></div>
</header>
<p class="meta"><span id="updated"></span> · times in UTC · <span id="fig-version"></span> · machine-readable: <a href="/status.json">/status.json</a>, <a href="/metrics">/metrics</a>, <a href="/healthz">/healthz</a></p>
<noscript><p>This page refreshes itself with JavaScript; without it, read <a href="/status.json">/status.json</a>.</p></noscript>
<div class="figures">
${fig('connections', 'connections', 'fig-subscriptions')}
${fig('events', 'events in store', 'fig-bytes')}
${fig('stored', 'stored since start', 'rate-stored')}
${fig('refused', 'events refused', 'rate-refused')}
${fig('latency', 'query time p95, 1 min', 'rate-latency')}
${fig('uptime', 'uptime', 'fig-started')}
</div>
<main>
<div class="charts">
${chartBox('chart-events', 'Events stored and refused per second')}
${chartBox('chart-connections', 'Open connections')}
${chartBox('chart-latency', 'Query time, REQ to EOSE (ms)')}
${chartBox('chart-reqs', 'REQs per second')}
</div>
<div class="cols">
<section><h2>Refusals by reason</h2><div id="refusals-box"></div><details id="recent-refusals"></details></section>
<section><h2>Access</h2><div id="access-box"></div></section>
</div>
<div id="sections"></div>
<section id="directory-box" hidden>
<h2>Relay directory <a class="more" href="/directory">uptime, round-trip times, software and NIPs of every relay →</a></h2>
<p id="dir-hint" class="muted" hidden></p>
<div class="toolbar" id="dir-toolbar"><input id="dir-filter" type="search" placeholder="filter: URL, state, quirk, error" aria-label="filter the relay directory"><span id="dir-states"></span><span id="dir-count"></span><span id="dir-generated"></span></div>
<div class="scroll" id="dir-scroll"><table id="directory"><thead><tr></tr></thead><tbody></tbody></table></div>
</section>
</main>
<footer>Relay information (NIP-11): this address with <code>Accept: application/nostr+json</code>. Management (NIP-86): POST here with <code>Content-Type: application/nostr+json+rpc</code>. Client addresses are not shown here: the recent refusals with their client IPs are the operator's, through the management method <code>listrefusals</code>.</footer>
<script type="application/json" id="initial">${json}</script>
<script>var REFRESH_MS = ${Math.max(250, refreshMs)};${CLIENT_SCRIPT}</script>
</body></html>`;
}
