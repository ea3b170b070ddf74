// The human page at `/`: name, description, live figures, and where the machine-readable parts are.
// Plain HTML, no external assets.
import type { Config } from '../config.js';
import { VERSION } from './version.js';

export interface StatusFigures {
  connections: number;
  subscriptions: number;
  events: number;
  storeBytes: number;
  eventsStored: number;
  eventsRejected: number;
  uptimeSeconds: number;
  /** extra sections (the spider's progress) as label -> value rows */
  sections: Array<{ title: string; rows: Array<[string, string]> }>;
}

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export function statusPage(config: Config, f: StatusFigures): string {
  const row = ([k, v]: [string, string]) => `<tr><th>${esc(k)}</th><td>${esc(v)}</td></tr>`;
  const table = (title: string, rows: Array<[string, string]>) => `<h2>${esc(title)}</h2><table>${rows.map(row).join('')}</table>`;
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<meta http-equiv="refresh" content="10"><title>${esc(config.info.name)}</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:46em;margin:2em auto;padding:0 1em;color:#222}th{text-align:left;padding-right:2em;font-weight:500;color:#555}code{background:#f3f3f3;padding:0 .3em}</style></head>
<body><h1>${esc(config.info.name)}</h1><p>${esc(config.info.description)}</p>
<p>A Nostr relay. Connect a Nostr client to this address over WebSocket. Relay information (NIP-11): request this page with <code>Accept: application/nostr+json</code>. Metrics: <a href="/metrics">/metrics</a>. Health: <a href="/healthz">/healthz</a>.</p>
${table('Relay', [
    ['connections', String(f.connections)],
    ['open subscriptions', String(f.subscriptions)],
    ['events stored', String(f.events)],
    ['store size', `${(f.storeBytes / 1024 / 1024).toFixed(1)} MiB`],
    ['accepted since start', String(f.eventsStored)],
    ['refused since start', String(f.eventsRejected)],
    ['uptime', `${Math.floor(f.uptimeSeconds / 3600)}h ${Math.floor((f.uptimeSeconds % 3600) / 60)}m`],
    ['version', `orbweaver ${VERSION}`],
  ])}
${f.sections.map((s) => table(s.title, s.rows)).join('\n')}
</body></html>`;
}
