// The operator's dashboard at `/`: one self-contained HTML page (no external assets, no build
// step) that polls /status.json every few seconds and redraws: relay figures with rates, recent
// refusals by reason, and the extra sections (the spider's progress).
import type { Config } from '../../config.js';
import type { StatusFigures } from './figures.js';
import { VERSION } from '../version.js';
import type { Refusal } from './refusals.js';

export interface DashboardData {
  name: string;
  description: string;
  version: string;
  now: number;
  relay: Omit<StatusFigures, 'sections'>;
  access: Record<string, number>;
  refusals: { byReason: Record<string, number>; recent: Refusal[] };
  sections: StatusFigures['sections'];
}

export function dashboardJson(config: Config, f: StatusFigures, access: Record<string, number>, refusals: DashboardData['refusals']): string {
  const { sections, ...relay } = f;
  const d: DashboardData = { name: config.info.name, description: config.info.description, version: VERSION, now: Date.now(), relay, access, refusals, sections };
  return JSON.stringify(d);
}

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

// Runs in the browser. Plain ES2017, DOM built with textContent (no HTML injection from data).
const SCRIPT = String.raw`
(function () {
  var prev = null, failures = 0;
  function el(tag, text, cls) { var e = document.createElement(tag); if (text !== undefined) e.textContent = String(text); if (cls) e.className = cls; return e; }
  function table(rows) {
    var t = el('table');
    rows.forEach(function (r) { var tr = el('tr'); tr.appendChild(el('th', r[0])); var td = el('td', r[1]); if (r[2]) td.id = r[2]; tr.appendChild(td); t.appendChild(tr); });
    return t;
  }
  function section(title, body) { var s = el('section'); s.appendChild(el('h2', title)); s.appendChild(body); return s; }
  function mib(b) { return (b / 1048576).toFixed(1) + ' MiB'; }
  function dur(s) { s = Math.floor(s); return Math.floor(s / 86400) + 'd ' + Math.floor(s % 86400 / 3600) + 'h ' + Math.floor(s % 3600 / 60) + 'm ' + (s % 60) + 's'; }
  function rate(cur, key, d) { if (!prev) return ''; var dt = (d.now - prev.now) / 1000; if (dt <= 0) return ''; return ' (' + ((cur - prev.relay[key]) / dt).toFixed(1) + '/s)'; }
  function render(d) {
    document.title = d.name + ' — orbweaver';
    document.getElementById('name').textContent = d.name;
    document.getElementById('description').textContent = d.description;
    var r = d.relay, a = d.access;
    var main = document.getElementById('main');
    var parts = [];
    parts.push(section('Relay', table([
      ['connections', r.connections, 'fig-connections'],
      ['open subscriptions', r.subscriptions, 'fig-subscriptions'],
      ['events in store', r.events, 'fig-events'],
      ['store size', mib(r.storeBytes), 'fig-bytes'],
      ['accepted since start', r.eventsStored + rate(r.eventsStored, 'eventsStored', d), 'fig-stored'],
      ['refused since start', r.eventsRejected + rate(r.eventsRejected, 'eventsRejected', d), 'fig-rejected'],
      ['uptime', dur(r.uptimeSeconds), 'fig-uptime'],
      ['version', 'orbweaver ' + d.version],
    ])));
    parts.push(section('Access', table([
      ['AUTH succeeded / failed', a.authSucceeded + ' / ' + a.authFailed],
      ['rate-limited messages', a.rateLimited],
      ['scans cut short (budget / timeout)', a.scansCut],
      ['client IPs connected', a.clientIps],
      ['banned pubkeys', a.bannedPubkeys],
      ['blocked IPs and ranges', a.blockedIps],
    ])));
    var reasons = Object.keys(d.refusals.byReason).sort(function (x, y) { return d.refusals.byReason[y] - d.refusals.byReason[x]; });
    var ref = el('div');
    ref.appendChild(reasons.length ? table(reasons.map(function (k) { return [k, d.refusals.byReason[k]]; })) : el('p', 'none yet', 'muted'));
    if (d.refusals.recent.length) {
      var t = el('table', undefined, 'recent');
      var head = el('tr'); ['time', 'verb', 'message', 'ip'].forEach(function (h) { head.appendChild(el('th', h)); }); t.appendChild(head);
      d.refusals.recent.slice(0, 15).forEach(function (x) {
        var tr = el('tr');
        tr.appendChild(el('td', new Date(x.at).toLocaleTimeString()));
        tr.appendChild(el('td', x.verb)); tr.appendChild(el('td', x.message)); tr.appendChild(el('td', x.ip));
        t.appendChild(tr);
      });
      ref.appendChild(t);
    }
    parts.push(section('Refusals by reason', ref));
    d.sections.forEach(function (s) { parts.push(section(s.title, table(s.rows))); });
    main.replaceChildren.apply(main, parts);
    document.getElementById('updated').textContent = 'updated ' + new Date(d.now).toLocaleTimeString();
    document.body.setAttribute('data-updated', String(d.now));
    prev = d;
  }
  function tick() {
    fetch('/status.json', { cache: 'no-store' })
      .then(function (r) { if (!r.ok) throw new Error('HTTP ' + r.status); return r.json(); })
      .then(function (d) { failures = 0; render(d); })
      .catch(function () { failures++; document.getElementById('updated').textContent = 'relay not answering (' + failures + ')'; })
      .then(function () { setTimeout(tick, REFRESH_MS); });
  }
  render(JSON.parse(document.getElementById('initial').textContent));
  setTimeout(tick, REFRESH_MS);
})();
`;

export function dashboardPage(initialJson: string, refreshMs = 2000): string {
  const d = JSON.parse(initialJson) as DashboardData;
  // </script> cannot appear inside the JSON block: escape '<'
  const safeJson = initialJson.replace(/</g, '\\u003c');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<link rel="icon" href="data:,"><title>${esc(d.name)} — orbweaver</title>
<style>
body{font:15px/1.5 system-ui,sans-serif;max-width:60em;margin:2em auto;padding:0 1em;color:#222}
h1{margin-bottom:0}h2{font-size:1.1em;margin:1.5em 0 .3em;border-bottom:1px solid #ddd}
th{text-align:left;padding-right:2em;font-weight:500;color:#555;vertical-align:top}td{font-variant-numeric:tabular-nums}
table.recent td,table.recent th{font-size:.85em;padding-right:1em}code{background:#f3f3f3;padding:0 .3em}.muted,#updated{color:#888}
</style></head>
<body><h1 id="name">${esc(d.name)}</h1><p id="description">${esc(d.description)}</p>
<p>A Nostr relay (orbweaver). Connect a Nostr client to this address over WebSocket. Relay information (NIP-11): request this page with <code>Accept: application/nostr+json</code>. Management (NIP-86): POST here with <code>Content-Type: application/nostr+json+rpc</code>. Machine-readable: <a href="/status.json">/status.json</a>, <a href="/metrics">/metrics</a>, <a href="/healthz">/healthz</a>.</p>
<p id="updated"></p>
<noscript><p>This dashboard refreshes itself with JavaScript; without it, read <a href="/status.json">/status.json</a>.</p></noscript>
<main id="main"></main>
<script type="application/json" id="initial">${safeJson}</script>
<script>var REFRESH_MS = ${Math.max(250, refreshMs)};${SCRIPT}</script>
</body></html>`;
}
