// An inverted index of open subscriptions, so publishing an event costs in proportion to the
// subscriptions that could match it, not to all of them (strfry's ActiveMonitors idea).
// Each filter is filed under ONE dimension — exact ids, else exact authors, else its first tag
// condition, else kinds — and only filters with none of these (or with hex prefixes) are checked
// for every event. A candidate is then confirmed with the full filter.
import { matchFilter, type Filter } from '../nostr/filter.js';
import type { NostrEvent } from '../nostr/event.js';

export interface LiveSub<C> {
  conn: C;
  subId: string;
  filters: Filter[];
}

type Entry<C> = { sub: LiveSub<C>; filter: Filter };

export class LiveIndex<C> {
  private byId = new Map<string, Set<Entry<C>>>();
  private byAuthor = new Map<string, Set<Entry<C>>>();
  private byTag = new Map<string, Set<Entry<C>>>();
  private byKind = new Map<number, Set<Entry<C>>>();
  private scanAll = new Set<Entry<C>>();
  private entries = new Map<LiveSub<C>, Array<() => void>>();

  /** filters checked against events so far: what a publish costs, whatever else is subscribed */
  checks = 0;

  get size(): number { return this.entries.size; }

  add(sub: LiveSub<C>): void {
    const undo: Array<() => void> = [];
    for (const filter of sub.filters) {
      const e: Entry<C> = { sub, filter };
      const file = <K>(map: Map<K, Set<Entry<C>>>, keys: K[]) => {
        for (const k of keys) {
          let set = map.get(k);
          if (!set) map.set(k, (set = new Set()));
          set.add(e);
          undo.push(() => { set!.delete(e); if (set!.size === 0) map.delete(k); });
        }
      };
      if (filter.ids && filter.ids.every((x) => x.length === 64)) file(this.byId, filter.ids);
      else if (filter.authors && filter.authors.every((x) => x.length === 64)) file(this.byAuthor, filter.authors);
      else if (filter.tags && filter.tags.length > 0) file(this.byTag, filter.tags[0][1].map((v) => `${filter.tags![0][0]}\u0000${v}`));
      else if (filter.kinds) file(this.byKind, filter.kinds);
      else {
        this.scanAll.add(e);
        undo.push(() => this.scanAll.delete(e));
      }
    }
    this.entries.set(sub, undo);
  }

  remove(sub: LiveSub<C>): void {
    const undo = this.entries.get(sub);
    if (!undo) return;
    for (const u of undo) u();
    this.entries.delete(sub);
  }

  /** Subscriptions with at least one filter matching `ev`, each once. */
  match(ev: NostrEvent): LiveSub<C>[] {
    const hits = new Set<LiveSub<C>>();
    const check = (set: Set<Entry<C>> | undefined) => {
      if (!set) return;
      for (const e of set) {
        if (hits.has(e.sub)) continue;
        this.checks++;
        if (matchFilter(e.filter, ev)) hits.add(e.sub);
      }
    };
    check(this.byId.get(ev.id));
    check(this.byAuthor.get(ev.pubkey));
    check(this.byKind.get(ev.kind));
    if (this.byTag.size > 0) {
      for (const t of ev.tags) if (t.length >= 2 && t[0].length === 1) check(this.byTag.get(`${t[0]}\u0000${t[1]}`));
    }
    check(this.scanAll);
    return [...hits];
  }
}
