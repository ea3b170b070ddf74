// An inverted index of open subscriptions, so publishing an event costs in proportion to the
// subscriptions that could match it, not to all of them (strfry's ActiveMonitors idea).
// Each filter is filed under ONE dimension — exact ids, else exact authors, else its first tag
// condition, else ids or authors that hold hex prefixes, else kinds — and only filters with none
// of these are checked for every event. A candidate is then confirmed with the full filter.
//
// Prefixes are filed by length: for an event, each prefix length in use is one slice of its id
// (or pubkey) and one map lookup, so a publish costs at most 64 lookups per dimension however many
// prefixes are subscribed — never a pass over them (a client holding millions of short prefixes
// made every publish cost ~70 ms when they were checked one by one).
import { matchFilter, type Filter } from '../nostr/filter.js';
import type { NostrEvent } from '../nostr/event.js';

export interface LiveSub<C> {
  conn: C;
  subId: string;
  filters: Filter[];
}

type Entry<C> = { sub: LiveSub<C>; filter: Filter };
type Undo = () => void;

/** Sets of entries by key, with the undo of each filing. */
class Buckets<K, E> {
  readonly map = new Map<K, Set<E>>();
  get size(): number { return this.map.size; }
  get(k: K): Set<E> | undefined { return this.map.get(k); }
  file(k: K, e: E, undo: Undo[]): void {
    let set = this.map.get(k);
    if (!set) this.map.set(k, (set = new Set()));
    set.add(e);
    const s = set;
    undo.push(() => {
      s.delete(e);
      if (s.size === 0 && this.map.get(k) === s) this.map.delete(k);
    });
  }
}

/** Hex values, full (64) or prefixes: full ones by value, prefixes in buckets by their length. */
class HexBuckets<E> {
  readonly full = new Buckets<string, E>();
  private readonly byLength = new Map<number, Buckets<string, E>>();

  file(value: string, e: E, undo: Undo[]): void {
    if (value.length === 64) return this.full.file(value, e, undo);
    let b = this.byLength.get(value.length);
    if (!b) this.byLength.set(value.length, (b = new Buckets()));
    const bucket = b;
    bucket.file(value, e, undo);
    undo.push(() => {
      if (bucket.size === 0 && this.byLength.get(value.length) === bucket) this.byLength.delete(value.length);
    });
  }

  /** Calls `visit` with every set that may hold an entry matching `hex` (a 64-char id or pubkey). */
  candidates(hex: string, visit: (s: Set<E> | undefined) => void): void {
    if (this.full.size > 0) visit(this.full.get(hex));
    if (this.byLength.size > 0) for (const [len, b] of this.byLength) visit(b.get(hex.slice(0, len)));
  }
}

const allFull = (xs: string[]) => xs.every((x) => x.length === 64);
const NO_SUBS: never[] = [];

export class LiveIndex<C> {
  private ids = new HexBuckets<Entry<C>>();
  private authors = new HexBuckets<Entry<C>>();
  private byTag = new Buckets<string, Entry<C>>();
  private byKind = new Buckets<number, Entry<C>>();
  private scanAll = new Set<Entry<C>>();
  private entries = new Map<LiveSub<C>, Undo[]>();

  /** filters checked against events so far: what a publish costs, whatever else is subscribed */
  checks = 0;

  get size(): number { return this.entries.size; }

  add(sub: LiveSub<C>): void {
    const undo: Undo[] = [];
    for (const filter of sub.filters) {
      const e: Entry<C> = { sub, filter };
      const { ids, authors, tags, kinds } = filter;
      // the most selective dimension the filter has; every value of it is filed, so an event
      // matching the filter is always found under one of them
      if (ids && allFull(ids)) for (const id of ids) this.ids.file(id, e, undo);
      else if (authors && allFull(authors)) for (const a of authors) this.authors.file(a, e, undo);
      else if (tags && tags.length > 0) for (const v of tags[0][1]) this.byTag.file(`${tags[0][0]}\u0000${v}`, e, undo);
      else if (ids) for (const id of ids) this.ids.file(id, e, undo);
      else if (authors) for (const a of authors) this.authors.file(a, e, undo);
      else if (kinds) for (const k of kinds) this.byKind.file(k, e, undo);
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
    // Every stored event comes through here; with no subscription open (a relay under an import,
    // a bulk publish) it allocates nothing.
    if (this.entries.size === 0) return NO_SUBS;
    const hits = new Set<LiveSub<C>>();
    const check = (set: Set<Entry<C>> | undefined) => {
      if (!set) return;
      for (const e of set) {
        if (hits.has(e.sub)) continue;
        this.checks++;
        if (matchFilter(e.filter, ev)) hits.add(e.sub);
      }
    };
    this.ids.candidates(ev.id, check);
    this.authors.candidates(ev.pubkey, check);
    check(this.byKind.get(ev.kind));
    if (this.byTag.size > 0) {
      for (const t of ev.tags) if (t.length >= 2 && t[0].length === 1) check(this.byTag.get(`${t[0]}\u0000${t[1]}`));
    }
    check(this.scanAll);
    return [...hits];
  }
}
