// Which relays to follow live, chosen by value. Two lists feed it:
//   - the write relays (NIP-65 kind 10002: r tags without a marker or marked "write") of the most
//     pubkeys in the home's store, each pubkey counted with a weight (1 by default; a trust rank
//     once web-of-trust ranks exist: pass `weight`), since that is where people publish their
//     updates;
//   - the big general relays the spider found (most events stored from them over all runs), since
//     many people publish there whatever their lists say.
// `generalShare` percent of the places go to the second list first, the rest to the first, and a
// list that has fewer good candidates leaves its places to the other.
import type { EventStore } from '../../store/types.js';
import { normalizeRelayUrl } from '../../remote/url.js';

/** A pubkey's weight in the choice (e.g. a trust rank in [0, 1]); undefined counts as 1. */
export type PubkeyWeight = (pubkey: string) => number | undefined;

/** Most distinct relay URLs scored in one scan (memory does not grow with the lists read). */
export const MAX_SCORED_URLS = 50_000;

/** The write relays named by one kind 10002 event's tags (each once), or null for absurd lists. */
export function writeRelays(tags: unknown, maxTags: number): string[] | null {
  if (!Array.isArray(tags)) return null;
  const out = new Set<string>();
  let n = 0;
  for (const t of tags) {
    if (!Array.isArray(t) || t[0] !== 'r' || typeof t[1] !== 'string') continue;
    if (++n > maxTags) return null;
    if (t[2] !== undefined && t[2] !== 'write') continue;
    const u = normalizeRelayUrl(t[1]);
    if (u) out.add(u);
  }
  return [...out];
}

/**
 * Scores relays by the weighted pubkeys whose stored relay list names them as a write relay. The
 * store keeps one list per pubkey (replaceable), read in a stream: memory is the URL map (capped).
 */
export async function writeRelayScores(store: Pick<EventStore, 'iterate'>, o: { weight?: PubkeyWeight; maxTags: number; signal?: AbortSignal }): Promise<Map<string, number>> {
  const scores = new Map<string, number>();
  for await (const json of store.iterate({ kinds: [10002] }, { signal: o.signal })) {
    if (o.signal?.aborted) break;
    let ev: { pubkey?: unknown; tags?: unknown };
    try { ev = JSON.parse(json) as typeof ev; } catch { continue; }
    if (typeof ev.pubkey !== 'string') continue;
    const w = o.weight?.(ev.pubkey) ?? 1;
    if (!(w > 0)) continue;
    for (const url of writeRelays(ev.tags, o.maxTags) ?? []) {
      const s = scores.get(url);
      if (s !== undefined) scores.set(url, s + w);
      else if (scores.size < MAX_SCORED_URLS) scores.set(url, w);
    }
  }
  return scores;
}

export interface Choice {
  /** relay URL -> weighted pubkeys that write there */
  writeScores: Map<string, number>;
  /** the spider's relays with events stored from them over all runs */
  general: Array<{ url: string; stored: number }>;
  max: number;
  /** percent of max for the general relays */
  generalShare: number;
  /** relays never followed (ours, unsafe, failing) */
  excluded: (url: string) => boolean;
}

export interface Chosen {
  url: string;
  why: 'general' | 'write';
  /** weighted pubkeys writing there, or events stored from it */
  score: number;
}

export function chooseLive(c: Choice): Chosen[] {
  const general = c.general.filter((g) => g.stored > 0 && !c.excluded(g.url))
    .sort((a, b) => b.stored - a.stored || (a.url < b.url ? -1 : 1));
  const writers = [...c.writeScores].filter(([u]) => !c.excluded(u))
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  const out: Chosen[] = [];
  const taken = new Set<string>();
  const add = (x: Chosen) => { if (out.length < c.max && !taken.has(x.url)) { taken.add(x.url); out.push(x); } };
  const share = Math.floor((c.max * c.generalShare) / 100);
  let gi = 0;
  for (; gi < general.length && out.length < share; gi++) add({ url: general[gi]!.url, why: 'general', score: general[gi]!.stored });
  for (const [url, score] of writers) { if (out.length >= c.max) break; add({ url, why: 'write', score }); }
  for (; gi < general.length && out.length < c.max; gi++) add({ url: general[gi]!.url, why: 'general', score: general[gi]!.stored });
  return out;
}
