// Relay discovery from NIP-65 relay lists (kind 10002): which relays a list names, and the choice of
// the next hop's relays (not seen yet, most-named first, bounded per hop and per run).
import type { NostrEvent } from '../../nostr/event.js';
import { normalizeRelayUrl } from '../../remote/url.js';

export const RELAY_LIST_KIND = 10002;

/**
 * The normalised relay URLs of a kind 10002 event's `r` tags (each once), or null when the list
 * names more than maxTags relays (absurd lists are ignored for discovery).
 */
export function relaysInList(ev: Pick<NostrEvent, 'tags'>, maxTags: number): string[] | null {
  let n = 0;
  const out = new Set<string>();
  for (const t of ev.tags) {
    if (t[0] !== 'r' || typeof t[1] !== 'string') continue;
    if (++n > maxTags) return null;
    const u = normalizeRelayUrl(t[1]);
    if (u) out.add(u);
  }
  return [...out];
}

/** Most distinct relay URLs counted per relay fetched (the directory keeps the top 10,000). */
const MAX_URLS = 50_000;

/**
 * Counts the relays named by relay lists. It is given only the home's current version of each list
 * (stored, or a copy of what the home holds), so one relay counts each author's list once without
 * remembering authors: memory grows with distinct URLs (capped), not with lists.
 */
export class LinkCollector {
  private counts = new Map<string, number>();
  ignored = 0;

  constructor(private readonly maxTags: number) {}

  add(ev: NostrEvent): void {
    if (ev.kind !== RELAY_LIST_KIND) return;
    const urls = relaysInList(ev, this.maxTags);
    if (urls === null) { this.ignored++; return; }
    for (const u of urls) {
      const n = this.counts.get(u);
      if (n !== undefined) this.counts.set(u, n + 1);
      else if (this.counts.size < MAX_URLS) this.counts.set(u, 1);
    }
  }

  /** relay URL -> number of lists naming it */
  links(): Record<string, number> {
    return Object.fromEntries(this.counts);
  }
}

export interface Candidate {
  url: string;
  /** lists naming it, summed over the relays of the previous hop */
  mentions: number;
  /** relays of the previous hop whose lists name it */
  referrers: string[];
}

/**
 * The next hop: relays named by the previous hop's lists that are not seen yet, most-named first
 * (ties by URL, so runs are reproducible), at most `max`.
 */
export function nextHop(linksByRelay: Map<string, Record<string, number>>, seen: Set<string>, max: number): Candidate[] {
  const cands = new Map<string, Candidate>();
  for (const [from, links] of linksByRelay) {
    for (const [url, n] of Object.entries(links)) {
      if (seen.has(url)) continue;
      let c = cands.get(url);
      if (!c) cands.set(url, (c = { url, mentions: 0, referrers: [] }));
      c.mentions += n;
      if (c.referrers.length < 50) c.referrers.push(from);
    }
  }
  return [...cands.values()].sort((a, b) => b.mentions - a.mentions || (a.url < b.url ? -1 : 1)).slice(0, Math.max(0, max));
}
