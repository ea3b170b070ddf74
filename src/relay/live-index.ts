// An inverted index of open subscriptions, so publishing an event costs in proportion to the
// subscriptions that could match it, not to all of them (strfry's ActiveMonitors idea).
// Each filter is filed under ONE dimension — exact ids, else exact authors, else its first tag
// condition, else ids or authors that hold hex prefixes, else its NIP-50 search (by the query's
// keys, nostr/search-live.ts), else kinds — and only filters with none of these are checked for
// every event. A candidate is then confirmed with the full filter.
//
// Prefixes are filed by length: for an event, each prefix length in use is one slice of its id
// (or pubkey) and one map lookup, so a publish costs at most 64 lookups per dimension however many
// prefixes are subscribed — never a pass over them (a client holding millions of short prefixes
// made every publish cost ~70 ms when they were checked one by one).
import { matchFilter, type Filter } from '../nostr/filter.js';
import type { NostrEvent } from '../nostr/event.js';
import { docOfEvent, isActiveSearch } from '../nostr/search.js';
import { docSearchKeys, searchKeys } from '../nostr/search-live.js';

export interface LiveSub<C> {
  conn: C;
  subId: string;
  filters: Filter[];
}

/** spamHidden: a NIP-50 search without include:spam, which leaves out authors the trust rank hides */
type Entry<C> = { sub: LiveSub<C>; filter: Filter; spamHidden: boolean };
/** What one key holds: a key named by one filter holds that entry itself, not a Set of one. */
type Slot<E> = E | Set<E>;
type Visit<E> = (e: E) => void;

/**
 * Entries by key. A REQ for 150 authors files 150 keys and takes them out again at its CLOSE, so
 * filing allocates nothing for a key only it names (a Set and an undo closure per key were ~9%
 * of the main thread in the outbox benchmark).
 */
class Buckets<K, E extends object> {
  private readonly map = new Map<K, Slot<E>>();
  get size(): number { return this.map.size; }
  add(k: K, e: E): void {
    const cur = this.map.get(k);
    if (cur === undefined) this.map.set(k, e);
    else if (cur instanceof Set) cur.add(e);
    else if (cur !== e) this.map.set(k, new Set([cur, e]));
  }
  delete(k: K, e: E): void {
    const cur = this.map.get(k);
    if (cur === e) this.map.delete(k);
    else if (cur instanceof Set && cur.delete(e) && cur.size === 1) this.map.set(k, cur.values().next().value!);
  }
  visit(k: K, fn: Visit<E>): void {
    const cur = this.map.get(k);
    if (cur === undefined) return;
    if (cur instanceof Set) for (const e of cur) fn(e);
    else fn(cur);
  }
}

/** Hex values, full (64) or prefixes: full ones by value, prefixes in buckets by their length. */
class HexBuckets<E extends object> {
  private readonly full = new Buckets<string, E>();
  private readonly byLength = new Map<number, Buckets<string, E>>();

  add(value: string, e: E): void {
    if (value.length === 64) return this.full.add(value, e);
    let b = this.byLength.get(value.length);
    if (!b) this.byLength.set(value.length, (b = new Buckets()));
    b.add(value, e);
  }

  delete(value: string, e: E): void {
    if (value.length === 64) return this.full.delete(value, e);
    const b = this.byLength.get(value.length);
    if (!b) return;
    b.delete(value, e);
    if (b.size === 0) this.byLength.delete(value.length);
  }

  /** Visits every entry that may match `hex` (a 64-char id or pubkey). */
  visit(hex: string, fn: Visit<E>): void {
    if (this.full.size > 0) this.full.visit(hex, fn);
    if (this.byLength.size > 0) for (const [len, b] of this.byLength) b.visit(hex.slice(0, len), fn);
  }
}

const allFull = (xs: string[]) => xs.every((x) => x.length === 64);
const NO_SUBS: never[] = [];
const tagKey = (name: string, value: string) => `${name}\u0000${value}`;

export class LiveIndex<C> {
  /**
   * @param hiddenFromSearch authors whose events a search leaves out unless it says include:spam
   * (trust ranks, store/ranks.ts): the same rule stored searches follow, so a live search does not
   * deliver what the same search over the store would hide
   */
  constructor(private readonly hiddenFromSearch?: (pubkey: string) => boolean) {}

  private ids = new HexBuckets<Entry<C>>();
  private authors = new HexBuckets<Entry<C>>();
  private byTag = new Buckets<string, Entry<C>>();
  private byKind = new Buckets<number, Entry<C>>();
  private bySearch = new Buckets<string, Entry<C>>();
  /** kinds the filed search filters accept (how many accept each), and how many accept any kind */
  private searchKinds = new Map<number, number>();
  private searchAnyKind = 0;
  private scanAll = new Set<Entry<C>>();
  private entries = new Map<LiveSub<C>, Entry<C>[]>();
  /**
   * Subscriptions added since the last publish, not filed yet. Most directory REQs are closed
   * right after their EOSE (a client reading 150 authors' relay lists), and with no event
   * published meanwhile filing and unfiling them would be all cost: the next publish files what is
   * still open, so each subscription is filed at most once and matching sees every one.
   */
  private unfiled = new Set<LiveSub<C>>();

  /** filters checked against events so far: what a publish costs, whatever else is subscribed */
  checks = 0;

  get size(): number { return this.entries.size; }

  add(sub: LiveSub<C>): void {
    this.entries.set(sub, sub.filters.map((filter) => ({
      sub, filter, spamHidden: this.hiddenFromSearch !== undefined && isActiveSearch(filter.search) && !filter.search!.includeSpam,
    })));
    this.unfiled.add(sub);
  }

  remove(sub: LiveSub<C>): void {
    const entries = this.entries.get(sub);
    if (!entries) return;
    this.entries.delete(sub);
    if (this.unfiled.delete(sub)) return;
    for (const e of entries) this.file(e, false);
  }

  /**
   * Files (or unfiles) an entry under the most selective dimension its filter has; every value of
   * it is filed, so an event matching the filter is always found under one of them. Adding and
   * removing go through this one choice, so they cannot disagree.
   */
  private file(e: Entry<C>, add: boolean): void {
    const { ids, authors, tags, kinds } = e.filter;
    if (ids && allFull(ids)) for (const id of ids) add ? this.ids.add(id, e) : this.ids.delete(id, e);
    else if (authors && allFull(authors)) for (const a of authors) add ? this.authors.add(a, e) : this.authors.delete(a, e);
    else if (tags && tags.length > 0) for (const v of tags[0][1]) add ? this.byTag.add(tagKey(tags[0][0], v), e) : this.byTag.delete(tagKey(tags[0][0], v), e);
    else if (ids) for (const id of ids) add ? this.ids.add(id, e) : this.ids.delete(id, e);
    else if (authors) for (const a of authors) add ? this.authors.add(a, e) : this.authors.delete(a, e);
    else if (isActiveSearch(e.filter.search)) {
      for (const k of searchKeys(e.filter.search)) add ? this.bySearch.add(k, e) : this.bySearch.delete(k, e);
      this.countSearchKinds(kinds, add ? 1 : -1);
    }
    else if (kinds) for (const k of kinds) add ? this.byKind.add(k, e) : this.byKind.delete(k, e);
    else if (add) this.scanAll.add(e);
    else this.scanAll.delete(e);
  }

  private countSearchKinds(kinds: number[] | undefined, d: number): void {
    if (!kinds) {
      this.searchAnyKind += d;
      return;
    }
    for (const k of new Set(kinds)) {
      const n = (this.searchKinds.get(k) ?? 0) + d;
      if (n > 0) this.searchKinds.set(k, n);
      else this.searchKinds.delete(k);
    }
  }

  /** Subscriptions with at least one filter matching `ev`, each once. */
  match(ev: NostrEvent): LiveSub<C>[] {
    // Every stored event comes through here; with no subscription open (a relay under an import,
    // a bulk publish) it allocates nothing.
    if (this.entries.size === 0) return NO_SUBS;
    if (this.unfiled.size > 0) {
      for (const sub of this.unfiled) for (const e of this.entries.get(sub)!) this.file(e, true);
      this.unfiled.clear();
    }
    const hits = new Set<LiveSub<C>>();
    let hidden: boolean | undefined; // looked up once per event, and only when a search would match
    const check = (e: Entry<C>) => {
      if (hits.has(e.sub)) return;
      this.checks++;
      if (!matchFilter(e.filter, ev)) return;
      if (e.spamHidden && (hidden ??= this.hiddenFromSearch!(ev.pubkey))) return;
      hits.add(e.sub);
    };
    this.ids.visit(ev.id, check);
    this.authors.visit(ev.pubkey, check);
    this.byKind.visit(ev.kind, check);
    if (this.byTag.size > 0) {
      for (const t of ev.tags) if (t.length >= 2 && t[0].length === 1) this.byTag.visit(tagKey(t[0], t[1]), check);
    }
    if (this.bySearch.size > 0 && (this.searchAnyKind > 0 || this.searchKinds.has(ev.kind))) {
      // the event's searchable text is folded once (cached per event object), whatever the number of searches
      const doc = docOfEvent(ev);
      if (doc !== null) docSearchKeys(doc, (k) => this.bySearch.visit(k, check));
    }
    for (const e of this.scanAll) check(e);
    return [...hits];
  }
}
