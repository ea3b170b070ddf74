// The people view: the top pubkeys by trust rank with their profile names, and one pubkey's rank,
// for the /directory/people page, /directory/people.json and `orbweaver directory --people`.
// Names come from the stored kind 0 profiles (unverified claims: shown, never trusted).
import type { RankMeta, RankRecord } from '../store/ranks.js';
import type { EventStore } from '../store/types.js';
import type { PassResult } from './pass.js';
import { esc } from '../lib/html.js';

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

export function peoplePage(v: PeopleView, relayName: string, lookup?: { asked: string; person: Person | null }): string {
  const rows = v.people.map((p, i) => `<tr><td>${i + 1}</td><td>${p.rank}</td><td>${p.followers}</td><td>${p.mutes}</td><td><code>${p.pubkey}</code></td><td>${esc(p.name)}</td></tr>`).join('');
  const found = lookup ? `<p>${lookup.person ? `<code>${esc(lookup.person.pubkey)}</code> ${esc(lookup.person.name)}: rank ${lookup.person.rank}, ${lookup.person.followers} followers, ${lookup.person.mutes} mutes` : `${esc(lookup.asked.slice(0, 100))}: not ranked`}</p>` : '';
  const summary = v.ranks ? `${v.ranks.mode} rank${v.ranks.mode === 'rooted' ? ` from ${v.ranks.roots} roots` : ''}, ${v.ranks.nodes} pubkeys, ${v.ranks.edges} follows, computed ${new Date(v.ranks.computedAt).toISOString()}` : 'no ranks computed yet';
  return `<!doctype html><html><head><meta charset="utf-8"><title>${esc(relayName)}: people</title><style>body{font-family:sans-serif;margin:1em}td,th{padding:2px 8px;text-align:left}code{font-size:85%}</style></head><body><h1>People by trust rank</h1><p>${esc(summary)}. <a href="/directory">relays</a></p><form><input name="pubkey" size="70" placeholder="pubkey (hex or npub)"> <button>look up</button></form>${found}<table><tr><th>#</th><th>rank</th><th>followers</th><th>mutes</th><th>pubkey</th><th>name (claimed)</th></tr>${rows}</table></body></html>`;
}
