// Follow-graph shaped data against a naive oracle. 120 authors replace their follow lists (kind 3)
// and mute lists (kind 10000) thousands of times the way the network does (mostly unchanged
// re-publications, a follow swapped, several changed, older versions arriving after newer ones,
// equal created_at, duplicate p tags, uppercase and non-hex p values, relay hints, t tags), beside
// notes and reactions that mention the same pubkeys, addressable follow sets (kind 30000), profiles
// and NIP-09 deletions by id and by address. The oracle keeps the events NIP-01 and NIP-09 say are
// current, decided on its own and compared with every write's status; then every #p shape
// (kinds or none, one or two values, since/until cut inside the answers, authors, a second tag,
// limits, several filters in one REQ) and COUNT (with the follower HLL registers) must give exactly
// the oracle's answer, order included, every few hundred writes, at the end, after a reopen, and
// after more writes that follow the reopen. Replay with GRAPH_SEED=<seed>.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { NostrEvent } from '../../src/nostr/event.js';
import type { Filter, WireFilter } from '../../src/nostr/filter.js';
import { openStore } from '../../src/store/index.js';
import { graphOnlyMembers } from '../../src/store/graph-json.js';
import { decodeHeader, jsonOf } from '../../src/store/codec.js';
import { edgeKey, graphMembers, graphOnly, idPubkey, pubkeyId } from '../../src/store/graph.js';
import { CounterBatch, counterKey, isCountedPair } from '../../src/store/counters.js';
import { visitEntries } from '../../src/store/indexer.js';
import { SPOOL_FROM_KEY } from '../../src/store/spool.js';
import { SPILL_DIR } from '../../src/store/edge-files.js';
import { readSerial, serialKey } from '../../src/store/keys.js';
import { verifyStore } from '../../src/commands/check/verify.js';
import { storeDbs } from '../../src/store/schema.js';
import type { EventStore, QueryOptions, WriteResult, WriteStatus } from '../../src/store/types.js';
import { ev, ids, newestFirst, oracleRegisters, put, Q, rng, tmpDir } from './helpers.js';

const SEED = Number(process.env.GRAPH_SEED ?? 7_340_111);
const AUTHORS = 120;
/** followable pubkeys in order of popularity: FRESH that publish nothing, and FOLLOWED_AUTHORS of the authors */
const FRESH = 45;
const FOLLOWED_AUTHORS = 15;
/** kind 3 and kind 10000 writes before the store is closed and reopened */
const FOLLOW_WRITES = 4000;
/** events written after the reopen */
const AFTER_REOPEN = 800;
/** writes between two checks */
const CHECK_EVERY = 750;
const T0 = 1_700_000_000;
const BIG: Partial<QueryOptions> = { maxLimit: 100_000, defaultLimit: 100_000 };
const STORE_OPTS = { mapSize: 256 * 1024 ** 2 };
const SIG = 'ab'.repeat(64);


// ---- NIP-01, naively ----

const isHex64 = (s: string): boolean => /^[0-9a-f]{64}$/.test(s);
const isReplaceableKind = (k: number): boolean => k === 0 || k === 3 || (k >= 10000 && k < 20000);
const isAddressableKind = (k: number): boolean => k >= 30000 && k < 40000;

/** `kind:pubkey:d` of a replaceable (d empty) or addressable event (its first d tag), else null */
function addressOf(e: NostrEvent): string | null {
  if (isReplaceableKind(e.kind)) return `${e.kind}:${e.pubkey}:`;
  if (isAddressableKind(e.kind)) {
    const d = e.tags.find((t) => t[0] === 'd');
    return `${e.kind}:${e.pubkey}:${d && d.length >= 2 ? d[1] : ''}`;
  }
  return null;
}

/** The "#x" entries of a wire filter. */
const tagConditions = (w: WireFilter): Array<[string, string[]]> =>
  Object.entries(w)
    .filter(([k]) => k.length === 2 && k[0] === '#')
    .map(([k, v]) => [k[1]!, v as string[]]);

/** NIP-01 filter match: every present condition holds; a tag condition wants a tag [name, value, ...] with one of the values */
function matcher(w: WireFilter): (e: NostrEvent) => boolean {
  const tags = tagConditions(w);
  return (e) => {
    if (w.ids && !w.ids.includes(e.id)) return false;
    if (w.authors && !w.authors.includes(e.pubkey)) return false;
    if (w.kinds && !w.kinds.includes(e.kind)) return false;
    if (w.since !== undefined && e.created_at < w.since) return false;
    if (w.until !== undefined && e.created_at > w.until) return false;
    for (const [name, values] of tags) {
      if (!e.tags.some((t) => t.length >= 2 && t[0] === name && values.includes(t[1]!))) return false;
    }
    return true;
  };
}

/** The store's checked filter form ("#p" becomes tags: [['p', values]]) */
function toFilter(w: WireFilter): Filter {
  const f: Filter = {};
  if (w.ids) f.ids = w.ids;
  if (w.authors) f.authors = [...new Set(w.authors)];
  if (w.kinds) f.kinds = [...new Set(w.kinds)];
  if (w.since !== undefined) f.since = w.since;
  if (w.until !== undefined) f.until = w.until;
  if (w.limit !== undefined) f.limit = w.limit;
  for (const [name, values] of tagConditions(w)) (f.tags ??= []).push([name, [...new Set(values)]]);
  return f;
}

interface Outcome {
  status: WriteStatus;
  removed: string[];
}

/**
 * What a relay keeps, by NIP-01 and NIP-09, decided one event at a time in arrival order:
 * a stored id is a duplicate; an id its author deleted is refused; an address deleted at or after
 * an event's created_at refuses it; a replaceable/addressable event replaces the stored version
 * when it is newer, or equally old with a lower id, else it is refused. A kind 5 removes its
 * author's own events named by `e` (and blocks those ids from that author even when not stored),
 * and by `a` every version of the address at or before its created_at (blocking later arrivals
 * as old). Precedence of the refusals as types.ts lists them: duplicate, deleted, replaced.
 */
class Oracle {
  /** stored events by id */
  readonly live = new Map<string, NostrEvent>();
  /** address -> its stored version */
  private readonly current = new Map<string, NostrEvent>();
  /** `${id}:${deleter}` */
  private readonly tombIds = new Set<string>();
  /** address -> latest created_at of a deletion naming it */
  private readonly tombAddrs = new Map<string, number>();
  /** every event ever offered, for failure messages */
  readonly seen = new Map<string, NostrEvent>();
  private sortedCache: NostrEvent[] | null = null;

  currentAt(address: string): NostrEvent | undefined {
    return this.current.get(address);
  }

  apply(e: NostrEvent): Outcome {
    this.seen.set(e.id, e);
    if (this.live.has(e.id)) return { status: 'duplicate', removed: [] };
    if (e.kind !== 5 && this.tombIds.has(`${e.id}:${e.pubkey}`)) return { status: 'deleted', removed: [] };
    const removed: string[] = [];
    const address = addressOf(e);
    if (address !== null) {
      const tomb = this.tombAddrs.get(address);
      if (tomb !== undefined && e.created_at <= tomb) return { status: 'deleted', removed: [] };
      const cur = this.current.get(address);
      if (cur) {
        const wins = e.created_at > cur.created_at || (e.created_at === cur.created_at && e.id < cur.id);
        if (!wins) return { status: 'replaced', removed: [] };
        this.drop(cur);
        removed.push(cur.id);
      }
      this.current.set(address, e);
    }
    this.live.set(e.id, e);
    this.sortedCache = null;
    if (e.kind === 5) this.applyDeletion(e, removed);
    return { status: 'stored', removed };
  }

  private applyDeletion(del: NostrEvent, removed: string[]): void {
    for (const t of del.tags) {
      if (t.length < 2) continue;
      if (t[0] === 'e' && isHex64(t[1]!)) {
        const target = this.live.get(t[1]!);
        if (target) {
          if (target.pubkey !== del.pubkey || target.kind === 5) continue; // not the deleter's own, or a deletion: no effect
          this.drop(target);
          removed.push(target.id);
        }
        this.tombIds.add(`${t[1]}:${del.pubkey}`);
      } else if (t[0] === 'a') {
        const m = /^(\d+):([0-9a-f]{64}):(.*)$/s.exec(t[1]!);
        if (!m) continue;
        const kind = Number(m[1]);
        if (m[2] !== del.pubkey || !(isReplaceableKind(kind) || isAddressableKind(kind))) continue;
        const address = `${kind}:${m[2]}:${isAddressableKind(kind) ? m[3] : ''}`;
        this.tombAddrs.set(address, Math.max(this.tombAddrs.get(address) ?? 0, del.created_at));
        const cur = this.current.get(address);
        if (cur && cur.created_at <= del.created_at) {
          this.drop(cur);
          removed.push(cur.id);
        }
      }
    }
  }

  private drop(e: NostrEvent): void {
    this.live.delete(e.id);
    const address = addressOf(e);
    if (address !== null && this.current.get(address) === e) this.current.delete(address);
    this.sortedCache = null;
  }

  /** every stored event, newest first, lower id first */
  sorted(): NostrEvent[] {
    return (this.sortedCache ??= [...this.live.values()].sort(newestFirst));
  }

  /** the stored events with a p tag of each value, newest first (only narrows what matches() is asked about) */
  private byP(): Map<string, NostrEvent[]> {
    if (this.byPCache && this.byPOf === this.sorted()) return this.byPCache;
    const m = new Map<string, NostrEvent[]>();
    for (const e of this.sorted()) {
      for (const v of new Set(e.tags.filter((t) => t[0] === 'p' && t.length >= 2).map((t) => t[1]!))) {
        let l = m.get(v);
        if (!l) m.set(v, (l = []));
        l.push(e);
      }
    }
    this.byPOf = this.sorted();
    return (this.byPCache = m);
  }
  private byPCache: Map<string, NostrEvent[]> | null = null;
  private byPOf: NostrEvent[] | null = null;

  /** the events a filter may match, newest first */
  private candidates(w: WireFilter): NostrEvent[] {
    const p = w['#p'];
    if (!p) return this.sorted();
    if (p.length === 1) return this.byP().get(p[0]!) ?? [];
    const any = new Set(p.flatMap((v) => this.byP().get(v) ?? []));
    return this.sorted().filter((e) => any.has(e));
  }

  /** NIP-01 REQ: each filter's matches newest first cut at its limit, the union de-duplicated, newest first */
  answer(ws: WireFilter[], opts: Pick<QueryOptions, 'defaultLimit' | 'maxLimit'>): NostrEvent[] {
    const out = new Map<string, NostrEvent>();
    for (const w of ws) {
      const limit = Math.min(w.limit ?? opts.defaultLimit, opts.maxLimit);
      const matches = matcher(w);
      let n = 0;
      for (const e of this.candidates(w)) {
        if (n >= limit) break;
        if (!matches(e)) continue;
        out.set(e.id, e);
        n++;
      }
    }
    return [...out.values()].sort(newestFirst);
  }

  /** NIP-45 COUNT: events matching any filter, limits ignored */
  count(ws: WireFilter[]): NostrEvent[] {
    const ms = ws.map(matcher);
    const candidates = new Set(ws.flatMap((w) => this.candidates(w)));
    return this.sorted().filter((e) => candidates.has(e) && ms.some((m) => m(e)));
  }

  /** current lists of one kind: author -> distinct lowercase-hex p values */
  lists(kind: number): Map<string, Set<string>> {
    const out = new Map<string, Set<string>>();
    for (const e of this.live.values()) {
      if (e.kind !== kind) continue;
      const targets = new Set(e.tags.filter((t) => t[0] === 'p' && t.length >= 2 && isHex64(t[1]!)).map((t) => t[1]!));
      if (targets.size > 0) out.set(e.pubkey, targets);
    }
    return out;
  }
}

// ---- the network: who follows and mutes whom, and how lists change ----

interface ListState {
  kind: number;
  pubkey: string;
  d: string;
  /** what the author's newest stored version holds (the base of the next change) */
  follows: string[];
  tags: string[][];
  /** every version generated, oldest first */
  versions: NostrEvent[];
  /** the highest created_at used for this address */
  clock: number;
}

interface Planned {
  e: NostrEvent;
  want: Outcome;
  /** what the generator meant by it, for failure messages */
  why: string;
}

interface Target {
  name: string;
  value: string;
}

class Network {
  readonly r: () => number;
  readonly authors: string[];
  /** followable pubkeys, most popular first */
  readonly pool: string[];
  /** pubkeys many mute lists name and no follow list does */
  readonly spammers: string[];
  /** the most popular pubkey in uppercase: a p value some clients write */
  readonly upper: string;
  /** p values that are no pubkey: one long enough to be hashed by an index, one short */
  readonly nonHex = ['npub1' + 'qpzry9x8gf2tvdw0s3jn54khce6mua7l'.repeat(2).slice(0, 58), 'not-a-pubkey'];
  readonly unknown: string;
  readonly oracle = new Oracle();
  private readonly followable: Set<string>;
  private readonly lists = new Map<string, ListState>();
  private readonly notes: NostrEvent[] = [];
  private readonly zipfCum: number[];
  private readonly hasMutes: Set<string>;
  now = T0;
  followWrites = 0;
  readonly tally = new Map<string, number>();

  constructor(seed: number) {
    this.r = rng(seed);
    this.authors = Array.from({ length: AUTHORS }, () => this.hex(64));
    const pool = [...Array.from({ length: FRESH }, () => this.hex(64)), ...this.authors.slice(0, FOLLOWED_AUTHORS)];
    for (let i = pool.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      [pool[i], pool[j]] = [pool[j]!, pool[i]!];
    }
    this.pool = pool;
    this.spammers = Array.from({ length: 3 }, () => this.hex(64));
    this.unknown = this.hex(64);
    this.upper = pool[0]!.toUpperCase();
    this.followable = new Set([...pool, ...this.spammers]);
    let sum = 0;
    this.zipfCum = pool.map((_, k) => (sum += 1 / (k + 1)));
    this.hasMutes = new Set(this.authors.filter(() => this.r() < 0.85));
  }

  int(n: number): number {
    return Math.floor(this.r() * n);
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)]!;
  }
  hex(chars: number): string {
    let s = '';
    for (let i = 0; i < chars; i++) s += '0123456789abcdef'[this.int(16)];
    return s;
  }
  /** a pool index, Zipf-distributed: index k with weight 1/(k+1) */
  zipf(): number {
    const x = this.r() * this.zipfCum[this.zipfCum.length - 1]!;
    const k = this.zipfCum.findIndex((c) => c > x);
    return k < 0 ? this.zipfCum.length - 1 : k;
  }
  count(what: string): void {
    this.tally.set(what, (this.tally.get(what) ?? 0) + 1);
  }

  /** the global clock: many events share a second */
  tick(): number {
    if (this.r() < 0.55) this.now++;
    return this.now;
  }

  private make(kind: number, pubkey: string, created_at: number, tags: string[][], content = ''): NostrEvent {
    return ev({ id: this.hex(64), pubkey, created_at, kind, tags, content, sig: SIG });
  }

  private state(kind: number, pubkey: string, d = ''): ListState {
    const key = `${kind}:${pubkey}:${d}`;
    let st = this.lists.get(key);
    if (!st) {
      const follows: string[] = [];
      if (kind === 3) {
        this.pool.forEach((pk, k) => {
          if (this.r() < Math.min(0.95, 4 / (k + 1))) follows.push(pk);
        });
        if (follows.length === 0) follows.push(this.pool[this.zipf()]!);
      } else if (kind === 10000) {
        [0.7, 0.35, 0.1].forEach((p, i) => {
          if (this.r() < p) follows.push(this.spammers[i]!);
        });
        for (const pk of this.pool) if (this.r() < 0.04) follows.push(pk);
        if (follows.length === 0) follows.push(this.spammers[0]!);
      } else if (kind === 30000) {
        for (let i = 0, n = 3 + this.int(8); i < n; i++) {
          const pk = this.pool[this.zipf()]!;
          if (!follows.includes(pk)) follows.push(pk);
        }
      }
      st = { kind, pubkey, d, follows, tags: this.decorate(kind, d, follows), versions: [], clock: 0 };
      this.lists.set(key, st);
    }
    return st;
  }

  private address(st: ListState): string {
    return `${st.kind}:${st.pubkey}:${st.d}`;
  }

  /** a pubkey to follow (kind 3, 30000) or mute (10000) */
  private candidate(kind: number): string {
    if (kind === 10000) return this.r() < 0.5 ? this.pick(this.spammers) : this.pick(this.pool);
    return this.pool[this.zipf()]!;
  }

  /** the follows with `changes` random additions or removals (at least one follow left) */
  private changed(st: ListState, changes: number): string[] {
    const f = [...st.follows];
    for (let i = 0; i < changes; i++) {
      if (f.length > 1 && (this.r() < 0.5 || i === 0)) f.splice(this.int(f.length), 1);
      for (let tries = 0; tries < 10; tries++) {
        const pk = this.candidate(st.kind);
        if (!f.includes(pk)) {
          f.push(pk);
          break;
        }
      }
    }
    return f;
  }

  /** the tags of a list: p tags (some with a relay hint, some with a petname), now and then a duplicate p, an uppercase or non-hex p, a valueless p, t tags */
  private decorate(kind: number, d: string, follows: string[]): string[][] {
    const tags: string[][] = follows.map((pk) => {
      const x = this.r();
      return x < 0.2 ? ['p', pk, 'wss://relay.example.com'] : x < 0.25 ? ['p', pk, '', 'alice'] : ['p', pk];
    });
    const insert = (t: string[]): void => void tags.splice(this.int(tags.length + 1), 0, t);
    if (follows.length > 0 && this.r() < 0.12) insert(['p', this.pick(follows), this.r() < 0.5 ? 'wss://other.example.com' : '']);
    if (this.r() < 0.06) insert(['p', this.upper]);
    if (this.r() < 0.05) insert(['p', this.pick(this.nonHex)]);
    if (this.r() < 0.02) insert(['p']);
    if (this.r() < 0.2) insert(['t', 'x']);
    if (this.r() < 0.08) insert(['t', 'nostr']);
    if (kind === 30000) tags.unshift(['d', d]);
    return tags;
  }

  /** a new version of the list at created_at, or the same tags again */
  private version(st: ListState, created_at: number, follows: string[] | null): NostrEvent {
    const tags = follows ? this.decorate(st.kind, st.d, follows) : st.tags.map((t) => [...t]);
    const content = st.kind === 3 && this.r() < 0.3 ? '{"wss://relay.example.com":{"read":true,"write":true}}' : '';
    const e = this.make(st.kind, st.pubkey, created_at, tags, content);
    st.versions.push(e);
    return e;
  }

  private nextTime(st: ListState): number {
    return Math.max(this.tick(), st.clock + 1);
  }

  /** one write of a list the way they arrive */
  private listWrite(st: ListState): Array<[NostrEvent, string]> {
    const cur = this.oracle.currentAt(this.address(st));
    if (st.versions.length === 0) return [[this.version(st, this.nextTime(st), null), 'first list']];
    const x = this.r();
    if (x < 0.5) return [[this.version(st, this.nextTime(st), null), 'unchanged re-publication']];
    if (x < 0.68) return [[this.version(st, this.nextTime(st), this.changed(st, 1)), 'one follow swapped']];
    if (x < 0.76) return [[this.version(st, this.nextTime(st), this.changed(st, 2 + this.int(5))), 'several changes']];
    if (x < 0.84) {
      if (this.r() < 0.5 && st.versions.length > 1) return [[this.pick(st.versions.slice(0, -1)), 'an older version again']];
      const at = (cur?.created_at ?? st.clock) - 1 - this.int(300);
      return [[this.version(st, at, this.changed(st, 1)), 'an older version, late']];
    }
    if (x < 0.91) return [[this.version(st, cur?.created_at ?? st.clock, this.changed(st, 1)), 'equal created_at']];
    if (x < 0.95) return [[cur ?? st.versions[st.versions.length - 1]!, 'the current version again']];
    return [[this.version(st, this.nextTime(st) + 1 + this.int(400), this.changed(st, 1)), 'a version from ahead of the others']];
  }

  /** a kind 5: by id (the author's current follow or mute list, an old version, someone else's list) or by address */
  private deletion(): Array<[NostrEvent, string]> {
    const a = this.pick(this.authors);
    const x = this.r();
    const cur3 = this.oracle.currentAt(`3:${a}:`);
    const cur10k = this.oracle.currentAt(`10000:${a}:`);
    if (x < 0.35 && cur3) return [[this.make(5, a, this.tick(), [['e', cur3.id], ['k', '3']]), 'deletion of the current follow list by id']];
    if (x < 0.45 && cur10k) return [[this.make(5, a, this.tick(), [['e', cur10k.id], ['k', '10000']]), 'deletion of the current mute list by id']];
    const st3 = this.state(3, a);
    if (x < 0.55 && st3.versions.length > 1) {
      return [[this.make(5, a, this.tick(), [['e', this.pick(st3.versions.slice(0, -1)).id], ['k', '3']]), 'deletion of an old follow list by id']];
    }
    if (x < 0.62) {
      const other = this.oracle.currentAt(`3:${this.pick(this.authors)}:`);
      if (other && other.pubkey !== a) return [[this.make(5, a, this.tick(), [['e', other.id]]), "deletion of another author's follow list (no effect)"]];
    }
    if (x < 0.85) {
      const kind = this.r() < 0.7 || !this.hasMutes.has(a) ? 3 : 10000;
      const st = this.state(kind, a);
      const base = this.oracle.currentAt(this.address(st))?.created_at ?? st.clock;
      const y = this.r();
      const at = y < 0.6 ? base : y < 0.8 ? base + this.int(5) : base - 1 - this.int(3);
      const out: Array<[NostrEvent, string]> = [[this.make(5, a, at, [['a', `${kind}:${a}:`], ['k', String(kind)]]), `deletion of ${kind}:${a.slice(0, 8)}: by address`]];
      st.clock = Math.max(st.clock, at);
      if (this.r() < 0.5) out.push([this.version(st, at, this.changed(st, 1)), 'a version as old as its address deletion']);
      if (this.r() < 0.7) out.push([this.version(st, at + 1, null), 'a version just after its address deletion']);
      return out;
    }
    return [[this.make(5, a, this.tick(), [['a', `30000:${a}:friends`]]), 'deletion of a follow set by address']];
  }

  private note(): Array<[NostrEvent, string]> {
    const tags: string[][] = [];
    for (let i = 0, n = 1 + this.int(3); i < n; i++) tags.push(this.r() < 0.2 ? ['p', this.pool[this.zipf()]!, 'wss://relay.example.com'] : ['p', this.pool[this.zipf()]!]);
    if (this.r() < 0.05) tags.push(['p', this.upper]);
    if (this.r() < 0.03) tags.push(['p', this.pick(this.nonHex)]);
    if (this.r() < 0.1) tags.push(['t', 'x']);
    if (this.notes.length > 0 && this.r() < 0.3) tags.unshift(['e', this.pick(this.notes).id, '', 'reply']);
    const e = this.make(1, this.pick(this.authors), this.tick(), tags, 'gm');
    this.notes.push(e);
    return [[e, 'note']];
  }

  private reaction(): Array<[NostrEvent, string]> {
    if (this.notes.length === 0) return this.note();
    const n = this.pick(this.notes);
    const tags = [['e', n.id], ['p', n.pubkey]];
    if (this.r() < 0.5) tags.push(['p', this.pool[this.zipf()]!]);
    return [[this.make(7, this.pick(this.authors), this.tick(), tags, '+'), 'reaction']];
  }

  private followSet(): Array<[NostrEvent, string]> {
    const st = this.state(30000, this.pick(this.authors), this.pick(['friends', 'devs']));
    const x = this.r();
    if (st.versions.length === 0 || x < 0.6) return [[this.version(st, this.nextTime(st), this.changed(st, 1)), 'follow set']];
    if (x < 0.8) return [[this.version(st, this.nextTime(st), null), 'follow set re-published']];
    return [[this.version(st, st.clock - 1 - this.int(100), this.changed(st, 1)), 'an older follow set, late']];
  }

  private profile(pubkey = this.pick(this.authors)): Array<[NostrEvent, string]> {
    const st = this.state(0, pubkey);
    const cur = this.oracle.currentAt(this.address(st));
    const x = this.r();
    const at = !cur || x < 0.75 ? this.nextTime(st) : x < 0.9 ? cur.created_at : cur.created_at - 1 - this.int(50);
    const e = this.make(0, pubkey, at, [], JSON.stringify({ name: `user${this.int(1000)}` }));
    st.versions.push(e);
    return [[e, 'profile']];
  }

  /** Decides each event with the oracle as it is made (in the order it will be written), and keeps the lists' states. */
  private plan(made: Array<[NostrEvent, string]>): Planned[] {
    return made.map(([e, why]) => {
      const want = this.oracle.apply(e);
      this.count(`${e.kind === 3 || e.kind === 10000 ? 'list' : `kind ${e.kind}`} ${want.status}`);
      if (why === 'equal created_at') this.count(`equal created_at ${want.status}`);
      if (e.kind === 3 || e.kind === 10000) this.followWrites++;
      const address = addressOf(e);
      const st = address === null ? undefined : this.lists.get(address);
      if (st) {
        st.clock = Math.max(st.clock, e.created_at);
        if (want.status === 'stored') {
          st.follows = [...new Set(e.tags.filter((t) => t[0] === 'p' && t.length >= 2 && this.followable.has(t[1]!)).map((t) => t[1]!))];
          st.tags = e.tags;
        }
      }
      return { e, want, why };
    });
  }

  /** Every author's first follow list, mute list and profile. */
  first(): Planned[] {
    const made: Array<[NostrEvent, string]> = [];
    for (const a of this.authors) {
      made.push(...this.listWrite(this.state(3, a)));
      if (this.hasMutes.has(a)) made.push(...this.listWrite(this.state(10000, a)));
      if (this.r() < 0.8) made.push(...this.profile(a));
    }
    return this.plan(made);
  }

  /** The next n or so events, of every sort. */
  next(n: number): Planned[] {
    const out: Planned[] = [];
    while (out.length < n) {
      const x = this.r();
      let made: Array<[NostrEvent, string]>;
      if (x < 0.58) made = this.listWrite(this.state(3, this.active()));
      else if (x < 0.8) {
        const a = this.active();
        made = this.listWrite(this.state(this.hasMutes.has(a) ? 10000 : 3, a));
      } else if (x < 0.88) made = this.note();
      else if (x < 0.93) made = this.reaction();
      else if (x < 0.96) made = this.followSet();
      else if (x < 0.982) made = this.profile();
      else made = this.deletion();
      out.push(...this.plan(made));
    }
    return out;
  }

  /** an author, the first 20 more often (some accounts re-publish their lists all day) */
  private active(): string {
    return this.r() < 0.3 ? this.authors[this.int(20)]! : this.pick(this.authors);
  }

  /** The followees a check asks about: the popular, a sample of the tail, spammers, odd values, an unknown pubkey. */
  targets(): Target[] {
    const out: Target[] = this.pool.slice(0, 5).map((value, k) => ({ name: `pool[${k}] (popular)`, value }));
    const tail = new Set<number>();
    while (tail.size < 6) tail.add(5 + this.int(this.pool.length - 5));
    for (const k of [...tail].sort((a, b) => a - b)) out.push({ name: `pool[${k}] (tail${this.authors.includes(this.pool[k]!) ? ', an author' : ''})`, value: this.pool[k]! });
    this.spammers.forEach((value, i) => out.push({ name: `spammer[${i}]`, value }));
    out.push({ name: 'pool[0] in uppercase', value: this.upper });
    this.nonHex.forEach((value) => out.push({ name: `non-hex ${JSON.stringify(value)}`, value }));
    out.push({ name: 'unknown pubkey', value: this.unknown });
    return out;
  }
}

// ---- comparing the store with the oracle ----

const short = (v: unknown): string => JSON.stringify(v, (_k, x: unknown) => (typeof x === 'string' && /^[0-9a-fA-F]{64}$/.test(x) ? `${x.slice(0, 8)}…` : x));

function describe(o: Oracle, id: string | undefined): string {
  if (id === undefined) return '(nothing)';
  const e = o.seen.get(id);
  return e ? `${id.slice(0, 12)} (kind ${e.kind}, author ${e.pubkey.slice(0, 8)}, created_at ${e.created_at})` : `${id.slice(0, 12)} (never written)`;
}

/** Equal lists, or a failure naming the check, the followee, the filters and the first position that differs. */
function sameIds(o: Oracle, got: string[], want: string[], ctx: string): void {
  let i = 0;
  while (i < got.length && i < want.length && got[i] === want[i]) i++;
  if (i === got.length && i === want.length) return;
  assert.fail(
    `${ctx}\n  first difference at position ${i}: store ${describe(o, got[i])}, oracle ${describe(o, want[i])}` +
      `\n  store returned ${got.length}, oracle ${want.length}` +
      `\n  store only: ${got.filter((x) => !want.includes(x)).length}, oracle only: ${want.filter((x) => !got.includes(x)).length}`,
  );
}

async function sameQuery(store: EventStore, o: Oracle, label: string, t: Target, ws: WireFilter[], opts: Partial<QueryOptions> = {}): Promise<void> {
  const got = await ids(store, ws.map(toFilter), opts);
  const want = o.answer(ws, { ...Q, ...opts }).map((e) => e.id);
  const limits = opts === BIG ? ' (limits up to 100000)' : '';
  sameIds(o, got, want, `seed ${SEED}, ${label}: REQ ${short(ws)}${limits} for followee ${t.name} ${t.value}`);
}

async function sameCount(store: EventStore, o: Oracle, label: string, t: Target, ws: WireFilter[]): Promise<void> {
  const fs = ws.map(toFilter);
  const r = await store.countResult(fs);
  const want = o.count(ws);
  const ctx = `seed ${SEED}, ${label}: COUNT ${short(ws)} for followee ${t.name} ${t.value}`;
  assert.ok(!r.approximate, `${ctx}: approximate`);
  assert.equal(r.count, want.length, `${ctx}: store counted ${r.count}, oracle ${want.length}`);
  const f = ws[0]!;
  if (ws.length === 1 && f.kinds?.length === 1 && f.kinds[0] === 3 && f['#p']?.length === 1 && Object.keys(f).length === 2) {
    // one follow list per author: the count is the followers
    assert.equal(new Set(want.map((e) => e.pubkey)).size, want.length, `${ctx}: oracle (one list per author)`);
    if (isHex64(t.value)) {
      assert.ok(r.hll, `${ctx}: no HLL registers`);
      assert.equal(Buffer.from(r.hll).toString('hex'), oracleRegisters(fs[0]!, want), `${ctx}: HLL registers`);
    }
  }
}

/** created_at values of an answer, for since/until bounds inside it */
function bounds(net: Network, answer: NostrEvent[]): { hi: number; lo: number } {
  if (answer.length === 0) return { hi: net.now - net.int(100), lo: T0 + net.int(100) };
  const i = net.int(answer.length);
  const j = i + net.int(answer.length - i);
  return { hi: answer[i]!.created_at, lo: answer[j]!.created_at };
}

async function checkTarget(store: EventStore, net: Network, label: string, t: Target, other: Target): Promise<void> {
  const o = net.oracle;
  const v = t.value;
  const q = (ws: WireFilter[], opts: Partial<QueryOptions> = {}): Promise<void> => sameQuery(store, o, label, t, ws, opts);
  const c = (ws: WireFilter[]): Promise<void> => sameCount(store, o, label, t, ws);

  // kind 3 alone: the followers, cut by limits
  await q([{ kinds: [3], '#p': [v], limit: 5 }]);
  await q([{ kinds: [3], '#p': [v], limit: 50 }]);
  await q([{ kinds: [3], '#p': [v] }], BIG);
  await q([{ kinds: [3], '#p': [v] }]);
  // mute lists, both list kinds, notes and reactions, every kind
  await q([{ kinds: [10000], '#p': [v], limit: 20 }]);
  await q([{ kinds: [10000], '#p': [v] }], BIG);
  await q([{ kinds: [3, 10000], '#p': [v], limit: 30 }]);
  await q([{ kinds: [3, 10000], '#p': [v] }], BIG);
  await q([{ kinds: [3, 1, 7], '#p': [v], limit: 40 }]);
  await q([{ '#p': [v], limit: 25 }]);
  await q([{ '#p': [v] }], BIG);

  // since and until inside the answers, bounds equal to events' created_at and just past them
  const k3 = o.answer([{ kinds: [3], '#p': [v] }], { defaultLimit: Infinity, maxLimit: Infinity });
  const all = o.answer([{ '#p': [v] }], { defaultLimit: Infinity, maxLimit: Infinity });
  const b = bounds(net, k3.length > 0 ? k3 : all);
  const b2 = bounds(net, all);
  await q([{ kinds: [3], '#p': [v], since: b.lo, until: b.hi }], BIG);
  await q([{ kinds: [3], '#p': [v], since: b.lo, until: b.hi, limit: 4 }]);
  await q([{ kinds: [3], '#p': [v], since: b.hi, limit: 10 }]);
  await q([{ kinds: [3], '#p': [v], until: b.lo, limit: 10 }]);
  await q([{ kinds: [3], '#p': [v], since: b.lo + 1, until: b.hi - 1 }], BIG);
  await q([{ kinds: [3], '#p': [v], since: b.hi, until: b.hi }], BIG);
  await q([{ kinds: [3, 10000], '#p': [v], since: b2.lo, until: b2.hi, limit: 15 }]);
  await q([{ '#p': [v], since: b2.lo, until: b2.hi }], BIG);
  await q([{ '#p': [v], until: b2.hi, limit: 8 }]);
  await q([{ kinds: [10000], '#p': [v], since: b2.lo }], BIG);

  // two values, authors, a second tag condition
  await q([{ kinds: [3], '#p': [v, other.value], limit: 30 }]);
  await q([{ kinds: [3], '#p': [v, other.value] }], BIG);
  const followers = k3.map((e) => e.pubkey);
  const authors = [...new Set([...Array.from({ length: Math.min(2, followers.length) }, () => net.pick(followers)), net.pick(net.authors), net.pick(net.authors)])];
  await q([{ kinds: [3], '#p': [v], authors }], BIG);
  await q([{ kinds: [3, 1], '#p': [v], authors, limit: 5 }]);
  await q([{ kinds: [3], '#p': [v], '#t': ['x'] }], BIG);
  await q([{ kinds: [3], '#p': [v], '#t': ['x'], limit: 3 }]);

  // several filters in one REQ: each limit on its own, the union newest first
  await q([{ kinds: [3], '#p': [v], limit: 3 }, { kinds: [1], '#p': [v] }]);
  await q([{ kinds: [3], '#p': [v], limit: 10 }, { kinds: [10000], '#p': [v], limit: 2 }, { '#p': [v], since: b2.lo, limit: 7 }, { kinds: [3], '#p': [v], limit: 5 }]);
  await q([{ kinds: [3], '#p': [v], limit: 4 }, { kinds: [0, 3, 10000], authors }]);

  // COUNT
  await c([{ kinds: [3], '#p': [v] }]);
  await c([{ kinds: [3], '#p': [v], since: b.lo }]);
  await c([{ kinds: [3], '#p': [v], until: b.hi }]);
  await c([{ kinds: [3], '#p': [v], since: b.lo, until: b.hi }]);
  await c([{ kinds: [10000], '#p': [v] }]);
  await c([{ kinds: [10000], '#p': [v], until: b2.hi }]);
  await c([{ '#p': [v] }]);
  await c([{ '#p': [v], since: b2.lo }]);
  await c([{ kinds: [3], '#p': [v] }, { kinds: [10000], '#p': [v] }]);
  await c([{ kinds: [3], '#p': [v, other.value] }]);
}

async function check(store: EventStore, net: Network, label: string): Promise<void> {
  const o = net.oracle;
  assert.equal(store.stats().events, o.live.size, `seed ${SEED}, ${label}: events stored`);
  const targets = net.targets();
  for (const t of targets) await checkTarget(store, net, label, t, net.pick(targets.filter((x) => x !== t)));

  // the lists the trust ranks are computed from
  for (const kind of [3, 10000]) {
    const got = new Map<string, Set<string>>();
    for await (const batch of store.ranks.lists(kind, 37, 400)) {
      for (const l of batch) {
        const author = l.author.toString('hex');
        assert.ok(!got.has(author), `seed ${SEED}, ${label}: ranks.lists(${kind}) gave ${author} twice`);
        const targets = new Set(l.targets.filter(isHex64));
        if (targets.size > 0) got.set(author, targets);
      }
    }
    const want = o.lists(kind);
    for (const [author, set] of want) assert.deepEqual(got.get(author), set, `seed ${SEED}, ${label}: ranks.lists(${kind}) of ${author}`);
    assert.equal(got.size, want.size, `seed ${SEED}, ${label}: ranks.lists(${kind}) authors`);
  }

  // replaceable lists by author (address lookups)
  const authors = Array.from({ length: 6 }, () => net.pick(net.authors));
  const none: Target = { name: '(none: by author)', value: '' };
  await sameQuery(store, o, label, none, [{ kinds: [0, 3, 10000], authors }], BIG);
  await sameQuery(store, o, label, none, [{ kinds: [3, 10000], authors, limit: 3 }]);
}

/**
 * Every other write goes as the relay's writer thread gets it: the JSON only, and for a list whose
 * tags are all follows, the members a signature-check thread read out of it (graph-json.ts), which
 * the writer then takes for the tags. Lists are replaced across both ways.
 */
let writes = 0;
let viaMembers = 0;
function write(store: EventStore, e: NostrEvent): Promise<WriteResult> {
  const json = JSON.stringify(e);
  const members = writes++ % 2 === 0 ? graphOnlyMembers(json) : null;
  if (members === null) return put(store, e);
  viaMembers++;
  return store.write(null, json, members);
}

async function writeAll(store: EventStore, net: Network, planned: Planned[], oneByOne: boolean, label: string): Promise<void> {
  let results: WriteResult[];
  if (oneByOne) {
    results = [];
    for (const p of planned) results.push(await write(store, p.e));
  } else results = await Promise.all(planned.map((p) => write(store, p.e)));
  planned.forEach((p, i) => {
    const r = results[i]!;
    const got = `${r.status} ok=${r.ok} removed=[${[...(r.removed ?? [])].sort().map((x) => x.slice(0, 12))}]`;
    const okWant = p.want.status === 'stored' || p.want.status === 'duplicate';
    const want = `${p.want.status} ok=${okWant} removed=[${[...p.want.removed].sort().map((x) => x.slice(0, 12))}]`;
    if (got !== want) {
      assert.fail(
        `seed ${SEED}, ${label}: write ${i + 1} of ${planned.length}${oneByOne ? ' (one by one)' : ' (at once)'}: ${p.why}: ${describe(net.oracle, p.e.id)} tags ${short(p.e.tags)}\n  store: ${got}\n  oracle: ${want}`,
      );
    }
  });
}

/** The store under test, and how to bring it to a state the oracle can check (the spool's variant closes and reopens it). */
interface Handle {
  store: EventStore;
  checkpoint(label: string): Promise<void>;
}

/** Writes `planned` in batches of random sizes, mostly all at once, some one by one; checks every CHECK_EVERY writes. */
async function writeSome(h: Handle, net: Network, more: () => boolean, label: string, counter: { writes: number; sinceCheck: number }, every = CHECK_EVERY): Promise<void> {
  while (more()) {
    const oneByOne = net.r() < 0.15;
    const planned = net.next(oneByOne ? 1 + net.int(15) : 20 + net.int(280));
    await writeAll(h.store, net, planned, oneByOne, `${label}, after ${counter.writes} writes`);
    counter.writes += planned.length;
    counter.sinceCheck += planned.length;
    if (counter.sinceCheck >= every) {
      counter.sinceCheck = 0;
      await h.checkpoint(`${label}, after ${counter.writes} writes`);
    }
  }
}

test('follow and mute lists replaced thousands of times: every #p shape and COUNT equal a naive NIP-01 oracle, before and after reopen', async (tc) => {
  const started = performance.now();
  const dir = tmpDir();
  const net = new Network(SEED);
  let store = await openStore({ dir, ...STORE_OPTS });
  const h: Handle = { get store() { return store; }, checkpoint: (label) => check(store, net, label) };
  try {
    const counter = { writes: 0, sinceCheck: 0 };
    const first = net.first();
    await writeAll(store, net, first, false, 'the first lists');
    counter.writes += first.length;
    await check(store, net, 'after the first lists');

    await writeSome(h, net, () => net.followWrites < FOLLOW_WRITES, 'before reopen', counter);
    await check(store, net, `at the end (${counter.writes} writes)`);

    await store.close();
    store = await openStore({ dir, ...STORE_OPTS });
    await check(store, net, 'after reopen');

    const until = counter.writes + AFTER_REOPEN;
    await writeSome(h, net, () => counter.writes < until, 'after reopen', counter);
    await check(store, net, `after ${counter.writes} writes, the last ${AFTER_REOPEN} after the reopen`);

    // the generator made every case it is meant to make
    const n = (k: string): number => net.tally.get(k) ?? 0;
    tc.diagnostic(`seed ${SEED}: ${counter.writes} writes (${net.followWrites} follow and mute lists), ${net.oracle.live.size} events stored, ${Math.round(performance.now() - started)} ms`);
    tc.diagnostic([...net.tally].sort().map(([k, v]) => `${k}: ${v}`).join(', '));
    assert.ok(net.followWrites >= 3000);
    assert.ok(viaMembers >= 1000, `only ${viaMembers} lists were written with their members read from the JSON`);
    for (const k of ['list stored', 'list replaced', 'list duplicate', 'list deleted', 'equal created_at stored', 'equal created_at replaced', 'kind 5 stored']) {
      assert.ok(n(k) >= 10, `only ${n(k)} writes of "${k}"`);
    }
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

/** Every derived index, the whole graph included, exact against the events (orbweaver verify). */
async function verifyClean(store: EventStore, label: string): Promise<void> {
  const r = await verifyStore(store.env, storeDbs(store));
  assert.ok(r.clean, `seed ${SEED + 1}, ${label}: verify: ${JSON.stringify({ indexes: r.indexes.filter((x) => x.samples.length), meta: r.meta })}`);
}

/**
 * A process that died holding entries back: the time and tag entries of the events stored since
 * the median serial, and the edges of the current lists among them (uncounted: held edges are
 * counted at the merge), are taken out of the indexes and SPOOL_FROM_KEY is set, as a kill before
 * the import's merge leaves the store (store/spool.ts). Returns the events whose entries were taken out.
 */
async function dieHoldingEntries(dir: string): Promise<number> {
  const store = await openStore({ dir, ...STORE_OPTS });
  const dbs = storeDbs(store);
  const serials = [...dbs.events.getKeys({})].map((k) => readSerial(k));
  const from = serials[Math.floor(serials.length / 2)]!;
  const held = new Set([dbs.created, dbs.kind, dbs.pubkey, dbs.pubkind, dbs.tagkind]);
  const uncount = new CounterBatch();
  store.env.transactionSync(() => {
    for (const serial of serials.filter((s) => s >= from)) {
      const value = dbs.events.getBinary(serialKey(serial))!;
      const h = decodeHeader(value);
      const { tags } = JSON.parse(jsonOf(value)) as { tags: string[][] };
      visitEntries(dbs, { ...h, tags, graphOnly: graphOnly(h.kind, tags) }, serial, null, (db, key) => void (held.has(db) && db.removeSync(key)));
    }
    for (const { key, value } of dbs.graph.graphcur.getRange({})) {
      const serial = value.readUIntBE(4, 5);
      if (serial < from) continue;
      const kind = key.readUInt16BE(0);
      const { tags } = JSON.parse(jsonOf(dbs.events.getBinary(serialKey(serial))!)) as { tags: string[][] };
      const author = idPubkey(dbs, key.readUInt32BE(2))!;
      for (const m of graphMembers(kind, tags)) {
        if (!dbs.graph.graph.removeSync(edgeKey(kind, pubkeyId(dbs, m)!, key.readUInt32BE(2)))) continue;
        if (isCountedPair('p', kind)) uncount.note(counterKey(m, kind), 'p', m, kind, author, -1);
      }
    }
    uncount.apply(dbs.tagcount);
    dbs.meta.putSync(SPOOL_FROM_KEY, from);
  });
  await store.close();
  return serials.length - serials.indexOf(from);
}

test('an import\'s held-back entries (the spool): every #p shape equals the oracle after each merge, and a store left holding entries is completed at open', async (tc) => {
  const dir = tmpDir();
  const net = new Network(SEED + 1);
  // a small spool: merges every few hundred edges, and replacements that take spooled edges out
  const SPOOL = { ...STORE_OPTS, spool: { edges: 700, indexBytes: 6000 } };
  let store = await openStore({ dir, ...SPOOL });
  // the held-back edges are in the graph only once merged: close (which merges the rest) before each check
  const reopen = async (label: string) => {
    await store.close();
    store = await openStore({ dir, ...SPOOL });
    await check(store, net, label);
    await verifyClean(store, label);
  };
  const h: Handle = { get store() { return store; }, checkpoint: reopen };
  try {
    const counter = { writes: 0, sinceCheck: 0 };
    await writeAll(store, net, net.first(), false, 'the first lists (spool)');
    await reopen('after the first lists (spool)');
    await writeSome(h, net, () => net.followWrites < FOLLOW_WRITES / 2, 'spool', counter, 3 * CHECK_EVERY);
    await reopen(`at the end (spool, ${counter.writes} writes)`);

    await store.close();
    const cut = await dieHoldingEntries(dir);
    store = await openStore({ dir, ...STORE_OPTS });
    assert.equal(storeDbs(store).meta.get(SPOOL_FROM_KEY), undefined, 'the open completed the graph');
    await check(store, net, `after the open wrote the entries of ${cut} events`);
    await verifyClean(store, 'after the open completed the graph');

    // the same recovery with a small memory: the edges go to files and are merged once, at the end
    // (as an import's now are), the entries are merged whenever they fill
    await store.close();
    const cut2 = await dieHoldingEntries(dir);
    const done: Array<Record<string, number>> = [];
    const logger = { warn: () => {}, info: (o: object) => void done.push(o as Record<string, number>) };
    store = await openStore({ dir, ...STORE_OPTS, logger, recoverSizes: { edges: 300, indexBytes: 2_000 } });
    const summary = done.find((o) => 'files' in o)!;
    assert.equal(summary.events, cut2);
    assert.ok(summary.files > 1, `the held edges went to files (${summary.files})`);
    assert.equal(existsSync(join(dir, SPILL_DIR)), false, 'the merge removed its files');
    assert.equal(storeDbs(store).meta.get(SPOOL_FROM_KEY), undefined, 'the recovery completed the graph');
    await check(store, net, `after a recovery through ${summary.files} files wrote the entries of ${cut2} events`);
    await verifyClean(store, 'after a recovery through files');
    tc.diagnostic(`seed ${SEED + 1}: ${counter.writes} writes through a spool of 700 edges and 6,000 bytes of keys; the entries of ${cut} events written at open, of ${cut2} through ${summary.files} files`);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

// Two shapes of spool: its edges fill first (the time and tag entries are merged with them), and its
// time and tag entries fill first, again and again, while the edges wait in memory and in files for
// their own merge (writer.ts relieveSpool: those merges write the entries only).
for (const shape of [
  { name: 'edges fill first', spool: { edges: 300, indexBytes: 1 << 20 }, seed: SEED + 2, entriesFirst: false },
  { name: 'entries fill first', spool: { edges: 300, indexBytes: 2_500 }, seed: SEED + 4, entriesFirst: true },
]) test(`an import\'s held edges in files (a full spool while the graph is larger; ${shape.name}): every #p shape equals the oracle once merged, lists replaced while in a file included; files a kill left are removed at open`, async (tc) => {
  const dir = tmpDir();
  const net = new Network(shape.seed);
  // small transactions and a small spool: the first lists fill it again and again after the first
  // merge, while the graph already holds more than the spool, so they go to files; the replacements
  // that follow replace lists whose edges are in those files
  const merges: Array<{ indexOnly: boolean; edges: number }> = [];
  const logger = { warn: () => {}, info: (o: object, msg?: string) => { if (msg === 'held-back index entries merged') merges.push(o as { indexOnly: boolean; edges: number }); } };
  const FILED = { ...STORE_OPTS, maxBatch: 8, spool: shape.spool, logger };
  let store = await openStore({ dir, ...FILED });
  const spilled = new Set<string>();
  const watch = () => {
    if (existsSync(join(dir, SPILL_DIR))) for (const f of readdirSync(join(dir, SPILL_DIR))) spilled.add(f);
  };
  try {
    const first = net.first();
    const part = Math.ceil(first.length / 12);
    for (let i = 0; i < first.length; i += part) {
      await writeAll(store, net, first.slice(i, i + part), false, `the first lists, from ${i} (files)`);
      watch();
    }
    assert.ok(spilled.size > 0, 'full spools went to files');
    const counter = { writes: 0, sinceCheck: 0 };
    const h: Handle = { get store() { return store; }, checkpoint: async () => watch() };
    await writeSome(h, net, () => net.followWrites < FOLLOW_WRITES / 4, 'files', counter, 200);
    await store.close();
    assert.equal(existsSync(join(dir, SPILL_DIR)), false, 'the last merge removed the files and their directory');
    store = await openStore({ dir, ...STORE_OPTS });
    await check(store, net, `after ${counter.writes} writes through files (${spilled.size} files)`);
    await verifyClean(store, 'after the merge of the files');
    await store.close();

    // a file left behind (an import killed while holding edges in files) is removed at the next open
    mkdirSync(join(dir, SPILL_DIR), { recursive: true });
    writeFileSync(join(dir, SPILL_DIR, 'edges-0-3.bin'), Buffer.alloc(16));
    store = await openStore({ dir, ...STORE_OPTS });
    assert.equal(existsSync(join(dir, SPILL_DIR)), false, 'the open removed the files of a killed import');
    await check(store, net, 'after the open removed a stale file');
    const entriesOnly = merges.filter((m) => m.indexOnly).length;
    if (shape.entriesFirst) assert.ok(entriesOnly >= 3, `the entries filled first and were merged alone (${entriesOnly} of ${merges.length} merges)`);
    assert.ok(merges.some((m) => !m.indexOnly && m.edges > 0), 'the held edges were merged');
    tc.diagnostic(`seed ${shape.seed}: ${counter.writes} writes, ${spilled.size} files of held edges, ${merges.length} merges (${entriesOnly} of entries only)`);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
