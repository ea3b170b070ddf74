// The finder: relay URLs named in stored events become candidates for the directory, each
// with where it was found. Sources:
// - kind 3 content: the legacy JSON map {"wss://relay": {"read": true, "write": true}, …};
// - kind 2 content: a recommended relay URL (deprecated, still stored);
// - `r` tags of the kinds in spider.finderKinds (default 2, 3, 10002);
// - kind 30166 (NIP-66) of other monitors: the `d` tag names the relay they checked.
// Events are read twice over: as the ingest path stores them (see(), cheap: a kind check) and by a
// full scan of the stored events once a day (newest first, bounded per kind), which covers what
// was stored while no finder listened. URLs already in the directory, not normalisable or not
// allowed by the SSRF rules (unless allowPrivate) are not candidates.
import type { Logger } from 'pino';
import type { EventStore } from '../store/types.js';
import type { NostrEvent } from '../nostr/event.js';
import { normalizeRelayUrl, syntacticRefusal } from '../remote/url.js';
import type { RelayDirectory } from './records.js';
import type { CandidateStore, Sighting } from './candidates.js';

export const RELAY_DISCOVERY_KIND = 30166;

/** Most URLs taken from one event: longer lists and maps are junk, as for discovery. */
export const MAX_URLS_PER_EVENT = 200;
/** Most events read per kind by one full scan (newest first). */
export const SCAN_LIMIT_PER_KIND = 200_000;
/** Sightings held between two cycles (the live feed). */
const MAX_PENDING_URLS = 50_000;
const FULL_SCAN_EVERY = 24 * 3_600_000;

export interface FinderOptions {
  /** kinds whose r tags name relays */
  rKinds: number[];
  /** our monitor's pubkey: its own 30166 are no news */
  selfPubkey?: string;
}

/** The relay URLs an event names, each once, with the source it was named through (pure). */
export function relaysNamedBy(ev: Pick<NostrEvent, 'kind' | 'tags' | 'content' | 'pubkey'>, o: FinderOptions): Array<{ url: string; source: string }> {
  const out = new Map<string, string>();
  const take = (raw: unknown, source: string) => {
    const u = normalizeRelayUrl(raw);
    if (u && !out.has(u)) out.set(u, source);
  };
  if (ev.kind === 3 && ev.content.length > 2) {
    let map: unknown;
    try { map = JSON.parse(ev.content); } catch { map = null; }
    if (map && typeof map === 'object' && !Array.isArray(map)) {
      const keys = Object.keys(map);
      if (keys.length <= MAX_URLS_PER_EVENT) for (const k of keys) take(k, 'kind 3 content');
    }
  }
  if (ev.kind === 2) take(ev.content, 'kind 2 content');
  if (ev.kind === RELAY_DISCOVERY_KIND && ev.pubkey !== o.selfPubkey) {
    const d = ev.tags.find((t) => t[0] === 'd');
    if (d) take(d[1], 'NIP-66 30166');
  }
  if (o.rKinds.includes(ev.kind)) {
    const rs = ev.tags.filter((t) => t[0] === 'r' && typeof t[1] === 'string');
    if (rs.length <= MAX_URLS_PER_EVENT) for (const t of rs) take(t[1], `r tag of kind ${ev.kind}`);
  }
  return [...out].map(([url, source]) => ({ url, source }));
}

export interface FinderDeps {
  store: EventStore;
  candidates: CandidateStore;
  directory: RelayDirectory;
  rKinds: number[];
  allowPrivate: boolean;
  maxCandidates: number;
  selfPubkey?: string;
  log: Logger;
}

export interface FinderSummary {
  fullScan: boolean;
  /** events read (scan and live feed) */
  events: number;
  /** URLs named that were candidates before or became ones */
  added: number;
  updated: number;
  /** named but already in the directory */
  known: number;
  /** refused by the SSRF rules */
  refused: number;
  /** left out: the candidate list is full */
  full: number;
}

export class Finder {
  private counts = new Map<string, Map<string, number>>();
  private firsts = new Map<string, Sighting>();
  private events = 0;
  private readonly kinds: number[];

  constructor(private readonly d: FinderDeps) {
    this.kinds = [...new Set([...d.rKinds, 2, 3, RELAY_DISCOVERY_KIND])].sort((a, b) => a - b);
  }

  /** Whether an event of this kind can name relays (the live feed's cheap filter). */
  wants(kind: number): boolean {
    return this.kinds.includes(kind);
  }

  /** An event the ingest path stored: its relays wait in memory for the next run. */
  see(ev: NostrEvent): void {
    if (!this.wants(ev.kind) || this.counts.size >= MAX_PENDING_URLS) return;
    this.events++;
    for (const { url, source } of relaysNamedBy(ev, { rKinds: this.d.rKinds, selfPubkey: this.d.selfPubkey })) {
      let m = this.counts.get(url);
      if (!m) {
        if (this.counts.size >= MAX_PENDING_URLS) return;
        this.counts.set(url, (m = new Map()));
        this.firsts.set(url, { url, source, event: ev.id, pubkey: ev.pubkey });
      }
      m.set(source, (m.get(source) ?? 0) + 1);
    }
  }

  fullScanDue(now = Date.now()): boolean {
    const last = this.d.candidates.meta().lastFullScan;
    return last === undefined || now - last >= FULL_SCAN_EVERY;
  }

  /** Scans the stored events when a full scan is due (or `full`), then writes what was seen as candidates. */
  async run(o: { full?: boolean; signal?: AbortSignal; now?: number } = {}): Promise<FinderSummary> {
    const now = o.now ?? Date.now();
    const full = o.full ?? this.fullScanDue(now);
    if (full) {
      for (const kind of this.kinds) {
        let n = 0;
        for await (const json of this.d.store.iterate({ kinds: [kind] }, { signal: o.signal ? { get aborted() { return o.signal!.aborted; } } : undefined })) {
          if (o.signal?.aborted) break;
          let ev: NostrEvent;
          try { ev = JSON.parse(json) as NostrEvent; } catch { continue; }
          this.see(ev);
          if (++n >= SCAN_LIMIT_PER_KIND) break;
        }
      }
      if (!o.signal?.aborted) await this.d.candidates.setMeta({ ...this.d.candidates.meta(), lastFullScan: now });
    }
    const counts = this.counts, firsts = this.firsts, events = this.events;
    this.counts = new Map();
    this.firsts = new Map();
    this.events = 0;
    const summary: FinderSummary = { fullScan: full, events, added: 0, updated: 0, known: 0, refused: 0, full: 0 };
    for (const url of [...counts.keys()]) {
      if (this.d.directory.get(url)) { summary.known++; counts.delete(url); continue; }
      if (syntacticRefusal(url, this.d.allowPrivate)) { summary.refused++; counts.delete(url); }
    }
    const r = await this.d.candidates.add(counts, firsts, this.d.maxCandidates, now);
    Object.assign(summary, { added: r.added, updated: r.updated, full: r.full });
    if (summary.added || summary.full) this.d.log.info(summary, 'finder: relay candidates found in stored events');
    return summary;
  }
}
