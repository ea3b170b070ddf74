// The people view: the top pubkeys by trust rank with their profile names, and one pubkey's rank,
// for the /directory/people page, /directory/people.json and `orbweaver directory --people`.
// Names come from the stored kind 0 profiles (unverified claims: shown, never trusted).
import type { RankMeta, RankRecord } from '../store/ranks.js';
import type { EventStore } from '../store/types.js';
import type { PassResult } from './pass.js';
import { esc } from '../lib/html.js';
import { DIRECTORY_CSS, fig } from '../lib/directory-style.js';

export interface Person extends RankRecord {
  pubkey: string;
  name: string;
}

export interface PeopleView {
  ranks: RankMeta | null;
  people: Person[];
}

async function names(store: EventStore, pubkeys: string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (pubkeys.length === 0) return out;
  const evs = await store.query([{ kinds: [0], authors: pubkeys, limit: pubkeys.length }], { defaultLimit: pubkeys.length, maxLimit: pubkeys.length });
  for (const j of evs) {
    try {
      const e = JSON.parse(j) as { pubkey: string; content: string };
      const p = JSON.parse(e.content) as { name?: unknown; display_name?: unknown };
      const n = typeof p.display_name === 'string' && p.display_name ? p.display_name : typeof p.name === 'string' ? p.name : '';
      out.set(e.pubkey, n.slice(0, 100));
    } catch { /* not a JSON profile: no name */ }
  }
  return out;
}

/** The `n` highest ranked pubkeys (a read of the whole rank table: not per request). */
export async function topPeople(store: EventStore, n: number): Promise<PeopleView> {
  const top = store.ranks.top(n);
  const nm = await names(store, top.map((t) => t.pubkey));
  return { ranks: store.ranks.meta() ?? null, people: top.map((t) => ({ pubkey: t.pubkey, name: nm.get(t.pubkey) ?? '', ...t.record })) };
}

/** The `n` highest ranked pubkeys of a pass just computed (a loop over its arrays, not the table). */
export async function topOfPass(store: EventStore, r: PassResult, n: number): Promise<PeopleView> {
  const best: number[] = [];
  for (let i = 0; i < r.meta.nodes; i++) {
    if (best.length === n && r.score[i]! <= r.score[best[n - 1]!]!) continue;
    let at = best.length;
    while (at > 0 && r.score[best[at - 1]!]! < r.score[i]!) at--;
    best.splice(at, 0, i);
    if (best.length > n) best.pop();
  }
  const rows = best.map((i) => ({ pubkey: r.ids.hex(i), score: r.score[i]!, rank: r.rank[i]!, followers: r.followers[i]!, mutes: r.mutes[i]! }));
  const nm = await names(store, rows.map((x) => x.pubkey));
  return { ranks: r.meta, people: rows.map((x) => ({ ...x, name: nm.get(x.pubkey) ?? '' })) };
}

/** One pubkey's rank and name; null when it is unranked. */
export async function personOf(store: EventStore, pubkey: string): Promise<Person | null> {
  const r = store.ranks.get(pubkey);
  if (!r) return null;
  return { pubkey, name: (await names(store, [pubkey])).get(pubkey) ?? '', ...r };
}

export function formatPeople(v: PeopleView): string {
  if (!v.ranks) return 'no trust ranks computed yet';
  const lines = [`trust ranks: ${v.ranks.mode}${v.ranks.mode === 'rooted' ? ` (${v.ranks.roots} roots)` : ''}, computed ${new Date(v.ranks.computedAt).toISOString()} in ${(v.ranks.durationMs / 1000).toFixed(1)} s, ${v.ranks.nodes} pubkeys, ${v.ranks.edges} follows`, ''];
  lines.push('rank  followers  mutes  pubkey                                                            name');
  for (const p of v.people) lines.push(`${String(p.rank).padStart(4)}  ${String(p.followers).padStart(9)}  ${String(p.mutes).padStart(5)}  ${p.pubkey}  ${p.name.replace(/[\u0000-\u001f]/g, ' ')}`);
  return lines.join('\n');
}

/** A row's bar: `value` of `max` as an inline SVG (no script, no external asset). */
function meter(value: number, max: number, cls: string): string {
  const w = max > 0 ? Math.max(0, Math.min(100, (value / max) * 100)) : 0;
  return `<svg class="meter ${cls}" viewBox="0 0 100 8" preserveAspectRatio="none" aria-hidden="true"><rect class="track" width="100" height="8"/><rect class="fill" width="${w.toFixed(1)}" height="8"/></svg>`;
}

const PEOPLE_CSS = `
form.tools input{font:inherit;padding:.25em .5em;border:1px solid var(--line);border-radius:6px;min-width:42em;max-width:100%;background:transparent;color:var(--fg)}
#people{width:100%;font-size:.87em}
#people th{border-bottom:1px solid var(--line);white-space:nowrap}
#people td{border-bottom:1px solid var(--line);white-space:nowrap}
#people tbody tr:hover{background:var(--panel)}
#people .num{text-align:right;padding-right:.6em}
#people td.pk{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.92em}
#people td.name{white-space:normal;max-width:22em;overflow-wrap:anywhere}
svg.meter{display:inline-block;width:6em;height:.6em;vertical-align:middle;margin-right:1.2em}
svg.meter .track{fill:var(--line)}svg.meter.rank .fill{fill:var(--link)}svg.meter.followers .fill{fill:var(--up)}
#found{border:1px solid var(--line);border-radius:8px;padding:.5em 1em;margin:1em 0}
#found code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
`;

/**
 * /directory/people: figures of the last rank pass, a lookup, and the top pubkeys with a bar for
 * their rank and their followers. Rendered on the server: nothing here needs a script.
 */
export function peoplePage(v: PeopleView, relayName: string, lookup?: { asked: string; person: Person | null }): string {
  const r = v.ranks;
  const mode = r ? (r.mode === 'rooted' ? `rooted in ${r.roots} ${r.roots === 1 ? 'key' : 'keys'}` : 'global') : '-';
  const at = r ? new Date(r.computedAt).toISOString() : '';
  const maxFollowers = v.people.reduce((m, p) => Math.max(m, p.followers), 0);
  const rows = v.people.map((p, i) => `<tr><td class="num">${i + 1}</td><td class="num">${p.rank}</td><td>${meter(p.rank, 100, 'rank')}</td><td class="num">${p.followers}</td><td>${meter(p.followers, maxFollowers, 'followers')}</td><td class="num">${p.mutes}</td><td class="pk">${p.pubkey}</td><td class="name">${esc(p.name)}</td></tr>`).join('\n');
  const found = lookup
    ? `<section id="found">${lookup.person ? `<code>${esc(lookup.person.pubkey)}</code> ${esc(lookup.person.name)}: rank ${lookup.person.rank}, ${lookup.person.followers} followers, ${lookup.person.mutes} mutes` : `${esc(lookup.asked.slice(0, 100))}: not ranked`}</section>`
    : '';
  const table = v.people.length > 0
    ? `<h2>The ${v.people.length} highest ranked</h2>
<div class="wide"><table id="people"><thead><tr><th class="num">#</th><th class="num">rank</th><th></th><th class="num">followers</th><th></th><th class="num">mutes</th><th>pubkey</th><th>name (claimed)</th></tr></thead>
<tbody>
${rows}
</tbody></table></div>`
    : `<p class="muted">${r ? 'No pubkey is ranked yet.' : 'No trust ranks computed yet: the first pass runs once follow lists are stored.'}</p>`;
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<link rel="icon" href="data:,"><title>${esc(relayName)} · people</title><style>${DIRECTORY_CSS}${PEOPLE_CSS}</style></head>
<body>
<header><div><h1>People by trust rank</h1><p class="sub">${esc(relayName)} · web of trust over the stored follow and mute lists</p></div>
<p class="sub">times in UTC · <a href="/directory">relay directory</a> · <a href="/">relay status</a> · machine-readable: <a href="/directory/people.json">/directory/people.json</a></p></header>
<div class="figs">
${fig('nodes', 'pubkeys ranked', 'authors and the keys they follow', r ? String(r.nodes) : '-')}
${fig('edges', 'follows', 'p tags of kind 3 lists', r ? String(r.edges) : '-')}
${fig('mode', 'rank', r && r.mode === 'rooted' ? 'PageRank from the trusted keys' : 'PageRank over everyone', mode)}
${fig('computed', 'computed at', r ? `${at.slice(0, 10)}, in ${(r.durationMs / 1000).toFixed(1)} s` : '', r ? at.slice(11, 19) : '-')}
</div>
<main>
<form class="tools" method="get" action="/directory/people"><input name="pubkey" type="search" placeholder="look up a pubkey (hex or npub)" aria-label="pubkey to look up" value="${lookup ? esc(lookup.asked.slice(0, 100)) : ''}"><button>look up</button></form>
${found}
${table}
</main>
<footer>Rank is 0–100: a PageRank over the follow lists (kind 3) stored here${r && r.mode === 'rooted' ? ', started from the trusted keys' : ''}; mutes (kind 10000) by ranked people lower it. Names are what each pubkey's own profile (kind 0) claims, not verified. The same figures as NIP-85 assertions (kind 30382) when the relay publishes them.</footer>
</body></html>`;
}
