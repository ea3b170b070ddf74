// /directory: the relay directory as a product page — one self-contained HTML document (no external
// assets, no build step) with the first /directory.json embedded; client.ts renders and refreshes it.
// Top to bottom: figures (relays, checked, online now / 24 h / 7 d, candidates), the views by
// network, software and version and supported NIP, the table of every relay, and the detail of the
// relay picked (uptime bar and RTT chart as inline SVG).
import type { DirectoryDocument } from './document.js';
import { DIRECTORY_SCRIPT } from './client.js';
import { esc } from '../lib/html.js';
import { DIRECTORY_CSS, fig } from '../lib/directory-style.js';

export function directoryPage(doc: DirectoryDocument, relayName: string, refreshMs = 30_000): string {
  // '<' cannot end the JSON block early
  const json = JSON.stringify(doc).replace(/</g, '\\u003c');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<link rel="icon" href="data:,"><title>${esc(relayName)} · relay directory</title><style>${DIRECTORY_CSS}</style></head>
<body>
<header><div><h1>Relay directory</h1><p class="sub">${esc(relayName)} · <span id="monitor-line"></span></p></div>
<p class="sub"><span id="as-of"></span> · times in UTC · <a href="/">relay status</a> · machine-readable: <a href="/directory.json">/directory.json</a></p></header>
<noscript><p>This page is drawn with JavaScript; without it, read <a href="/directory.json">/directory.json</a>.</p></noscript>
<div class="figs">
${fig('total', 'relays in the directory', 'found by the spider and the finder')}
${fig('checked', 'checked by the monitor', 'NIP-66 health checks')}
${fig('now', 'online now', 'at the latest check')}
${fig('day', 'online in 24 h', 'at least one check online')}
${fig('week', 'online in 7 days', 'at least one check online')}
${fig('candidates', 'candidates', '')}
</div>
<main>
<div class="views">
<section><h2>By network</h2><div id="by-network"></div></section>
<section><h2>By software and version</h2><div id="by-software"></div></section>
<section><h2>By supported NIP</h2><div id="by-nip"></div></section>
<section><h2>Serving now (probed)</h2><div id="serving"></div><p class="sub" id="differing"></p></section>
</div>
<section id="detail" hidden></section>
<h2>Relays</h2>
<div class="tools"><input id="filter" type="search" placeholder="filter: URL, software, network, nip-50, auth …" aria-label="filter the relays"><span id="chips"></span><span id="shown"></span></div>
<div class="wide"><table id="relays"><thead><tr></tr></thead><tbody></tbody></table></div>
</main>
<footer>Health checks follow NIP-66: each online relay's latest check is published as a kind 30166 event signed by the monitor, readable here with a REQ for kind 30166. Uptime is online checks over checks in the window; round-trip times are percentiles of the online checks of the last 30 days.</footer>
<script type="application/json" id="initial">${json}</script>
<script>var REFRESH_MS = ${Math.max(1000, refreshMs)};${DIRECTORY_SCRIPT}</script>
</body></html>`;
}
