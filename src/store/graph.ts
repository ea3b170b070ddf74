// The follow graph: the `p` tags of follow lists (kind 3) and mute lists (kind 10000) as an index
// of its own, so that a re-published list writes only the follows that changed.
//
// In the tag+kind index a follow was keyed by the list's created_at and serial, so every
// re-publication (new created_at) removed every entry of the old version and wrote every entry of
// the new one: 2N B-tree writes for a list that usually differs by a follow or none. Here a follow
// is keyed by who follows whom, which does not change when the list is replaced:
//
//   ev.pkid      pubkey (32)                          -> id (4)        dense ids, allocated once
//   ev.idpk      id (4)                               -> pubkey (32)
//   ev.graph     kind (2) + followee id (4) + follower id (4) -> ''    each person's follower set
//   ev.graphcur  kind (2) + author id (4)             -> created_at (4) + serial (5)   each author's current list
//   ev.graphtime kind (2) + created_at (4) + serial (5) -> author id (4)  each current list, by time
//
// A replaced list writes the difference of the two member sets and one graphcur entry. Only the
// current version of a list is in the graph: these kinds are replaceable, so the store holds at
// most one version per (kind, author). Which tags go here: a `p` tag whose value is 64 lowercase
// hex (a pubkey) in an event of a graph kind; every other tag of those events stays in the tag+kind
// index. Follower counts (counters.ts) are noted for the changes only; NIP-45 registers likewise.
//
// Reading: `{"kinds":[3],"#p":[pk]}` is answered by one of two cursors (query.ts picks by cost):
// GraphSetCursor reads the follower set and each follower's graphcur entry and sorts them by time;
// GraphWalkCursor walks graphtime newest first and probes the set for each list's author.
import { COUNTER_HEADER, counterKey, isCountedPair, type CounterBatch } from './counters.js';
import { isHex64 } from '../nostr/hex.js';
import { EMPTY, kindPrefix, readSerial, SERIAL_BYTES, SUFFIX_BYTES, timeRange, TYPE_HEX, u32 } from './keys.js';
import type { EdgeSpool } from './graph-spool.js';
import { PubkeyIdCache } from './pubkey-id-cache.js';
import type { Membership } from './follower-cache.js';
import { MAX_CHUNK, nextChunk, type KeyCursor } from './scan.js';
import type { BinDb, Dbs } from './schema.js';

import { isGraphKind, isGraphTag } from './graph-json.js';
export { GRAPH_KINDS, isGraphKind, isGraphTag } from './graph-json.js';

/** meta key of the next pubkey id */
export const NEXT_PKID_KEY = 'nextPkId';
/** meta key prefix of the number of current lists of a graph kind (the walk's cost estimate) */
export const LISTS_KEY = (kind: number): string => `graphLists.${kind}`;

export interface GraphDbs {
  pkid: BinDb;
  idpk: BinDb;
  graph: BinDb;
  graphcur: BinDb;
  /**
   * The current lists of each graph kind in time order with their authors (graphcur read
   * backwards): the walk reads a list's author with its key, where it once read the kind index and
   * then looked the author up by serial (a B-tree descent per list: ~40% of a followers answer).
   */
  graphtime: BinDb;
}

/**
 * Committed ids of pubkeys this process has read or written, per store (a follow list names the
 * same popular pubkeys again and again: the lookup was a tenth of an import). Only committed ids go
 * in: those read from the store, and those a transaction allocated once it has committed
 * (GraphTxn.committed), never one that may still be taken back; a committed id never changes.
 */
const idCaches = new WeakMap<GraphDbs, PubkeyIdCache>();
/**
 * Most pubkey ids remembered per store: 48 bytes each at most, 48 MB when full
 * (pubkey-id-cache.ts). Room for the 1.66 M pubkeys of the 5,000,000 directory events (2,000,000)
 * put the import over its 1 GB of memory (1,037 MB against 999) and read no faster once the lines
 * were past their first new pubkeys (docs/storage.md, "Where the import's reading goes").
 */
const MAX_CACHED_IDS = 1_000_000;

function idCache(g: GraphDbs): PubkeyIdCache {
  let m = idCaches.get(g);
  if (!m) idCaches.set(g, (m = new PubkeyIdCache(MAX_CACHED_IDS)));
  return m;
}

function remember(g: GraphDbs, pubkeyHex: string, id: number): void {
  idCache(g).set(pubkeyHex, id);
}

export function openGraphDbs(open: (name: string) => BinDb): GraphDbs {
  return { pkid: open('pkid'), idpk: open('idpk'), graph: open('graph'), graphcur: open('graphcur'), graphtime: open('graphtime') };
}

/** kind (2) + id (4) */
export function kindIdKey(kind: number, id: number): Buffer {
  const b = Buffer.allocUnsafe(6);
  b.writeUInt16BE(kind, 0);
  b.writeUInt32BE(id, 2);
  return b;
}

/** edge keys are built here for puts and removes (lmdb-js copies a key before it returns) */
const edgeScratch = Buffer.allocUnsafe(10);

/** kind (2) + followee (4) + follower (4) */
export function edgeKey(kind: number, followee: number, follower: number): Buffer {
  const b = Buffer.allocUnsafe(10);
  b.writeUInt16BE(kind, 0);
  b.writeUInt32BE(followee, 2);
  b.writeUInt32BE(follower, 6);
  return b;
}

/** kind (2) + created_at (4) + serial (5): a list's key in graphtime, the kind index's key of the list */
export function listTimeKey(kind: number, createdAt: number, serial: number): Buffer {
  const b = Buffer.allocUnsafe(2 + 4 + SERIAL_BYTES);
  b.writeUInt16BE(kind, 0);
  b.writeUInt32BE(createdAt, 2);
  b.writeUIntBE(serial, 6, SERIAL_BYTES);
  return b;
}

/** The follower set's key range of (kind, followee): [start, end). */
export function setRange(kind: number, followee: number): { start: Buffer; end: Buffer } {
  return { start: edgeKey(kind, followee, 0), end: followee === 0xffffffff ? kindIdKey(kind + 1, 0) : kindIdKey(kind, followee + 1) };
}

/** A list of a graph kind as the graph sees it. */
export interface GraphList {
  /** the distinct pubkeys of its graph tags, in tag order */
  members: string[];
  /** every tag is a graph tag: the list has no entry in the tag+kind index (indexer.ts skips its tags) */
  only: boolean;
}

/** The graph's view of a list of a graph kind (one pass over its tags). */
export function graphList(kind: number, tags: string[][]): GraphList {
  const members: string[] = [];
  let only = true;
  if (!isGraphKind(kind)) return { members, only: false };
  const seen = new Set<string>();
  for (const t of tags) {
    if (!isGraphTag(t)) {
      only = false;
      continue;
    }
    if (seen.has(t[1]!)) continue;
    seen.add(t[1]!);
    members.push(t[1]!);
  }
  return { members, only };
}

/** The distinct pubkeys of an event's graph tags, in tag order. */
export const graphMembers = (kind: number, tags: string[][]): string[] => graphList(kind, tags).members;

/** GraphList.only without the members (no set of the values is built). */
export function graphOnly(kind: number, tags: string[][]): boolean {
  if (!isGraphKind(kind)) return false;
  for (const t of tags) if (!isGraphTag(t)) return false;
  return true;
}

/**
 * The `"tags":[...]` part of an event's JSON as the store keeps it (canonical: content follows
 * tags, and no string in a tag can hold an unescaped quote), or null. Two events whose parts are
 * equal have equal tags: a list re-published unchanged is recognised without parsing the old one.
 */
export function tagsJson(json: string): string | null {
  const i = json.indexOf('"tags":');
  if (i < 0) return null;
  const j = json.indexOf(',"content":', i);
  return j < 0 ? null : json.slice(i, j);
}

/** The id of a pubkey (hex), or undefined when it has none. */
export function pubkeyId(dbs: Pick<Dbs, 'graph'>, pubkeyHex: string): number | undefined {
  // the cache reads lowercase hex only (pubkey-id-cache.ts); anything else names no pubkey
  if (!isHex64(pubkeyHex)) return undefined;
  const g = dbs.graph;
  const known = idCache(g).get(pubkeyHex);
  if (known !== undefined) return known;
  const v = g.pkid.getBinaryFast(Buffer.from(pubkeyHex, 'hex'));
  if (!v) return undefined;
  const id = v.readUInt32BE(0);
  remember(g, pubkeyHex, id);
  return id;
}

/** The pubkey (hex) of an id. */
export function idPubkey(dbs: Dbs, id: number): string | undefined {
  const v = dbs.graph.idpk.getBinaryFast(u32(id));
  return v ? v.toString('hex', 0, v.length) : undefined; // explicit end: see codec.ts jsonOf
}

/** Journals a write: the previous value of `key` in `db` (undefined: it was absent). */
export type Journal = (db: BinDb, key: Buffer, prev: Buffer | undefined) => void;

/**
 * The graph's part of one write transaction: member-set differences, id allocation, the per-kind
 * list counts. `journal` takes each write back if its operation throws (txn.ts).
 */
export class GraphTxn {
  private nextId = -1;
  private startNextId = -1;
  private readonly listDelta = new Map<number, number>();
  /** id entries written since the last replace() began (it counts them in what it returns) */
  private allocated = 0;
  /**
   * New edges of this transaction not put yet: finish() puts them in key order, where a put costs
   * about half what it does in arrival order (the pages of one followee's set come one after the
   * other; measured 0.85-0.9 against 1.25-1.5 µs a put, docs/storage.md "A writer thread"). Per
   * list (kind and author): its followee ids. A later replace() of the same list in this
   * transaction puts that list's edges first, so its removals find them where they always did.
   */
  private readonly pendingEdges = new Map<number, PendingEdges>();

  constructor(
    private readonly dbs: Dbs,
    private readonly journal: Journal,
    /** null: follower counts are not noted (a migration that moves entries the counters already count) */
    private readonly counters: CounterBatch | null,
    /** journals a function that takes back a group of writes (absent: nothing is taken back) */
    private readonly undo: (fn: () => void) => void = () => {},
    /** the import's held-back edges (graph-spool.ts); null: every edge is written at once */
    private readonly spool: EdgeSpool | null = null,
  ) {}

  private allocId(): number {
    if (this.nextId < 0) {
      const v = this.dbs.meta.get(NEXT_PKID_KEY);
      this.nextId = this.startNextId = typeof v === 'number' ? v : 1;
    }
    if (this.nextId > 0xfffffffe) throw new Error('pubkey ids exhausted');
    return this.nextId++;
  }

  /** ids this transaction allocated: not remembered in the id cache until they are committed */
  private readonly fresh = new Map<string, number>();

  /** the store's committed ids (idCaches), looked up once per transaction rather than once per follow */
  private cache: PubkeyIdCache | null = null;

  /** The id of a pubkey, allocated (and journaled) when it has none yet. */
  idOf(pubkeyHex: string): number {
    const g = this.dbs.graph;
    const known = (this.cache ??= idCache(g)).get(pubkeyHex) ?? this.fresh.get(pubkeyHex);
    if (known !== undefined) return known;
    const pk = Buffer.from(pubkeyHex, 'hex');
    const v = g.pkid.getBinaryFast(pk);
    if (v) {
      const id = v.readUInt32BE(0);
      remember(g, pubkeyHex, id);
      return id;
    }
    const id = this.allocId();
    this.allocated += 2;
    this.fresh.set(pubkeyHex, id);
    // an operation taken back takes its ids back too: a later list in this transaction that names
    // the pubkey must allocate it again, with the pkid and idpk entries the take-back removed (and
    // the id must not reach the cache at the commit)
    this.undo(() => this.fresh.delete(pubkeyHex));
    const idk = u32(id);
    g.pkid.putSync(pk, idk);
    this.journal(g.pkid, pk, undefined);
    g.idpk.putSync(idk, pk);
    this.journal(g.idpk, idk, undefined);
    return id;
  }

  /**
   * Replaces an author's current list of a graph kind: `before` and `after` are the member sets of
   * the old and new versions (empty: none; the same array: unchanged), `current` the new version's created_at and serial
   * (null: the list is gone). Writes only the members that changed; returns the entries written.
   */
  replace(kind: number, author: string, before: string[], after: string[], current: { createdAt: number; serial: number } | null): number {
    const { graph } = this.dbs.graph;
    this.allocated = 0;
    const authorId = this.idOf(author);
    const counted = this.counters !== null && isCountedPair('p', kind);
    let n = 0;
    // the edges as followee ids, each list's undo one closure (not one per edge: a list has hundreds)
    const added: number[] = [];
    const removed: number[] = [];
    const old = before.length > 0 ? new Set(before) : null;
    const keep = old ? new Set<string>() : null;
    // journaled first and filled as the edges are written, so an operation that throws half way is taken back whole
    this.undo(() => {
      const pending = this.pendingEdges.get(listKey(kind, authorId));
      if (pending?.followees === added && !pending.put) this.pendingEdges.delete(listKey(kind, authorId));
      else for (const id of added) graph.removeSync(edgeKey(kind, id, authorId));
      for (const id of removed) graph.putSync(edgeKey(kind, id, authorId), EMPTY);
    });
    const key = edgeScratch;
    key.writeUInt16BE(kind, 0);
    key.writeUInt32BE(authorId, 6);
    const spool = this.spool;
    // the list's edges written earlier in this transaction go in now: what follows removes and adds against the graph
    this.putPending(kind, authorId);
    if (spool && before !== after) {
      if (spool.holds(kind, authorId)) {
        // the list changes or goes: its held-back edges go into the graph first, then the difference as usual
        const taken = spool.take(kind, authorId);
        this.undo(taken.undo);
        this.undo(() => {
          for (const id of taken.followees) graph.removeSync(edgeKey(kind, id, authorId));
        });
        for (const id of taken.followees) {
          key.writeUInt32BE(id, 2);
          graph.putSync(key, EMPTY);
        }
        // held edges were not counted yet: written now, they are. The held list is the version this
        // one replaces, so its members are `before` (the followees above are their ids, in order)
        if (counted) this.counters!.noteFollows(kind, author, taken.followees, before, 1);
        n += taken.followees.length;
      } else {
        // A list whose held edges are in a file (edge-files.ts) has them marked dead there, never
        // written nor counted: none of `before` is in the graph, as for a new list (no edges of
        // this author in the graph). Either is held back, merged in key order later, and counted
        // then (spool.ts: its follower counters once per merge, not once per transaction).
        const filed = spool.holdsFiled(kind, authorId);
        if (filed) this.undo(spool.killFiled(kind, authorId));
        if (filed || before.length === 0) {
          if (current) for (const m of after) added.push(this.idOf(m));
          if (added.length > 0) this.undo(spool.add(kind, authorId, author, added.splice(0), current!.serial));
          return this.current(kind, authorId, current) + this.allocated;
        }
      }
    }
    // the members added and removed (index for index with `added` and `removed`), noted for the follower counters once per list
    const plus: string[] = old ? [] : after;
    const minus: string[] = [];
    // the same array: an unchanged re-publication (txn.ts), nothing to write but the current list
    // (new edges are put at finish(), in key order; with a spool this path is the rare one)
    const defer = spool === null;
    if (before !== after) for (const m of after) {
      if (old?.has(m)) {
        keep!.add(m);
        continue;
      }
      // not there: the graph holds exactly the members of the current version (orbweaver verify checks it)
      const id = this.idOf(m);
      if (!defer) {
        key.writeUInt32BE(id, 2);
        graph.putSync(key, EMPTY);
      }
      added.push(id);
      if (old) plus.push(m);
    }
    if (defer && added.length > 0) this.pendingEdges.set(listKey(kind, authorId), { kind, author: authorId, followees: added, put: false });
    if (before !== after) for (const m of before) {
      if (keep!.has(m)) continue;
      const id = this.fresh.get(m) ?? pubkeyId(this.dbs, m);
      if (id === undefined) continue;
      key.writeUInt32BE(id, 2);
      if (!graph.removeSync(key)) continue;
      removed.push(id);
      minus.push(m);
    }
    if (counted && before !== after) {
      this.counters!.noteFollows(kind, author, added, plus, 1);
      this.counters!.noteFollows(kind, author, removed, minus, -1);
    }
    return n + added.length + removed.length + this.current(kind, authorId, current) + this.allocated;
  }

  /** Writes (or removes, `current` null) the author's current-list entries and counts the list; returns the entries written. */
  private current(kind: number, authorId: number, current: { createdAt: number; serial: number } | null): number {
    let n = 0;
    const { graphcur, graphtime } = this.dbs.graph;
    const ck = kindIdKey(kind, authorId);
    const prev = graphcur.getBinary(ck) ?? undefined;
    if (prev && prev.length >= 4 + SERIAL_BYTES) {
      const tk = listTimeKey(kind, prev.readUInt32BE(0), readSerial(prev, 4));
      const had = graphtime.getBinary(tk) ?? undefined;
      if (had) {
        graphtime.removeSync(tk);
        this.journal(graphtime, tk, had);
        n++;
      }
    }
    if (current) {
      const v = Buffer.allocUnsafe(4 + SERIAL_BYTES);
      v.writeUInt32BE(current.createdAt, 0);
      v.writeUIntBE(current.serial, 4, SERIAL_BYTES);
      graphcur.putSync(ck, v);
      const tk = listTimeKey(kind, current.createdAt, current.serial);
      graphtime.putSync(tk, u32(authorId));
      this.journal(graphtime, tk, undefined);
      n++;
    } else if (prev) graphcur.removeSync(ck);
    if (current || prev) {
      this.journal(graphcur, ck, prev);
      n++;
    }
    const delta = (current ? 1 : 0) - (prev ? 1 : 0);
    if (delta !== 0) this.listDelta.set(kind, (this.listDelta.get(kind) ?? 0) + delta);
    return n;
  }

  /** One list's pending edges, put now (in arrival order: this is the rare case). */
  private putPending(kind: number, authorId: number): void {
    const p = this.pendingEdges.get(listKey(kind, authorId));
    if (!p) return;
    this.pendingEdges.delete(listKey(kind, authorId));
    p.put = true; // first: should a put throw, the undo removes whichever went in
    const { graph } = this.dbs.graph;
    for (const id of p.followees) graph.putSync(edgeKey(kind, id, authorId), EMPTY);
  }

  /** Every pending edge, in key order (kind, followee, follower). */
  private putAllPending(): void {
    if (this.pendingEdges.size === 0) return;
    const byKind = new Map<number, { lists: PendingEdges[]; edges: number }>();
    for (const p of this.pendingEdges.values()) {
      let group = byKind.get(p.kind);
      if (!group) byKind.set(p.kind, (group = { lists: [], edges: 0 }));
      group.lists.push(p);
      group.edges += p.followees.length;
    }
    const { graph } = this.dbs.graph;
    const key = edgeScratch;
    for (const kind of [...byKind.keys()].sort((a, b) => a - b)) {
      const { lists, edges } = byKind.get(kind)!;
      for (const p of lists) p.put = true; // first: should a put throw, the undo removes whichever went in
      key.writeUInt16BE(kind, 0);
      const put = (followee: number, follower: number): void => {
        key.writeUInt32BE(followee, 2);
        key.writeUInt32BE(follower, 6);
        graph.putSync(key, EMPTY);
      };
      let maxFollowee = 0;
      for (const p of lists) for (const id of p.followees) if (id > maxFollowee) maxFollowee = id;
      if (maxFollowee < EXACT_FOLLOWEE) {
        // followee and follower as one double, exact below 2^53, sorted natively; no allocation per edge
        const sorted = new Float64Array(edges);
        let k = 0;
        for (const p of lists) for (const id of p.followees) sorted[k++] = id * 0x1_0000_0000 + p.author;
        sorted.sort();
        for (let i = 0; i < sorted.length; i++) {
          const w = sorted[i]!;
          const followee = Math.floor(w / 0x1_0000_0000);
          put(followee, w - followee * 0x1_0000_0000);
        }
      } else {
        // the same in 64-bit words (a store past two million pubkey ids)
        const sorted = new BigUint64Array(edges);
        let k = 0;
        for (const p of lists) {
          const follower = BigInt(p.author);
          for (const id of p.followees) sorted[k++] = (BigInt(id) << 32n) | follower;
        }
        sorted.sort();
        for (let i = 0; i < sorted.length; i++) put(Number(sorted[i]! >> 32n), Number(sorted[i]! & 0xffffffffn));
      }
    }
    this.pendingEdges.clear();
  }

  /**
   * The transaction has committed: the ids it allocated are the store's now, and the id cache holds
   * them (otherwise each new pubkey's next lookup went to LMDB once more to find it).
   */
  committed(): void {
    if (this.fresh.size === 0) return;
    const cache = idCache(this.dbs.graph);
    for (const [hex, id] of this.fresh) cache.set(hex, id);
    this.fresh.clear();
  }

  /** Puts the pending edges, persists the id counter and the list counts; once, at the end of the transaction. */
  finish(): void {
    this.putAllPending();
    if (this.nextId !== this.startNextId) this.dbs.meta.putSync(NEXT_PKID_KEY, this.nextId);
    for (const [kind, d] of this.listDelta) {
      const cur = this.dbs.meta.get(LISTS_KEY(kind));
      this.dbs.meta.putSync(LISTS_KEY(kind), Math.max(0, (typeof cur === 'number' ? cur : 0) + d));
    }
    this.listDelta.clear();
    this.startNextId = this.nextId;
  }
}

/** A list's new edges not put yet (GraphTxn.pendingEdges). */
interface PendingEdges {
  kind: number;
  author: number;
  /** followee ids, the replace() call's own `added` array (its undo recognises it) */
  followees: number[];
  /** being put or put (the undo then removes them from the graph) */
  put: boolean;
}

/** followee ids below this pack with a 32-bit follower into one exact double (2^21 x 2^32 = 2^53) */
const EXACT_FOLLOWEE = 2 ** 21;

/** kind and author id as one Map key (exact: kind < 2^16, id < 2^32) */
const listKey = (kind: number, authorId: number): number => kind * 0x1_0000_0000 + authorId;

/** Current lists of a graph kind (kept in meta). */
export function listCount(dbs: Dbs, kind: number): number {
  const v = dbs.meta.get(LISTS_KEY(kind));
  return typeof v === 'number' ? v : 0;
}

/** Whether a tag prefix (keys.ts) is a hex `p` value: the graph holds it for the graph kinds. */
export const isHexP = (tag: Uint8Array): boolean => tag[0] === 0x70 && tag[1] === TYPE_HEX;

/** The pubkey (hex) of a hex tag prefix. */
export const prefixPubkey = (tag: Uint8Array): string => Buffer.from(tag.subarray(2, 34)).toString('hex');

/**
 * Size of the follower set of (kind, followee), counted up to `cap` (cap + 1: more). The skip must
 * stay small: lmdb-js's `offset` walks on past the range's end key (query.ts countRange), so a skip
 * of millions over a small set walked the rest of the graph (~0.5 s per follower REQ).
 */
export function setSize(dbs: Dbs, kind: number, followee: number, cap: number): number {
  const r = setRange(kind, followee);
  let longer = false;
  for (const _ of dbs.graph.graph.getKeys({ start: r.start, end: r.end, offset: cap, limit: 1 })) longer = true;
  if (longer) return cap + 1;
  return dbs.graph.graph.getKeysCount({ start: r.start, end: r.end });
}

/**
 * The stored follower counter of (kind, followee) where the kind is counted, or undefined. Its
 * value changes with every change of the set (counters.ts): follower-cache.ts keys sets by it.
 */
export function followerCounter(dbs: Dbs, kind: number, followee: number): Buffer | undefined {
  if (!isCountedPair('p', kind)) return undefined;
  const pk = idPubkey(dbs, followee);
  const v = pk === undefined ? undefined : dbs.tagcount.getBinary(counterKey(pk, kind));
  return v && v.length >= COUNTER_HEADER ? v : undefined;
}

/**
 * The follower count of (kind, followee) for planning: the NIP-45 counter where the kind is counted
 * (one read, whatever the size), else the set counted natively to its end (~50 ns a follower).
 */
export function followerCount(dbs: Dbs, kind: number, followee: number, counter = followerCounter(dbs, kind, followee)): number {
  if (counter) return counter.readUInt32BE(1);
  const r = setRange(kind, followee);
  return dbs.graph.graph.getKeysCount({ start: r.start, end: r.end });
}

/** One follower set to read for a filter: (kind, followee), with the scan's time bounds. */
export interface GraphSource {
  kind: number;
  /** the followee's id */
  followee: number;
}

/**
 * The followers' current lists of (kind, followee) within since..until, newest first (created_at,
 * then serial, descending: the order of the time indexes), read whole at the first head().
 * Keys are created_at + serial (9 bytes), what the scan reads of a time-ordered key.
 */
export class GraphSetCursor implements KeyCursor {
  ca = 0;
  serial = 0;
  private keys: Buffer | null = null;
  private n = 0;
  private i = 0;

  constructor(
    private readonly dbs: Dbs,
    private readonly src: GraphSource,
    private readonly since: number,
    private readonly until: number,
    private readonly charge: (entries: number) => void,
  ) {}

  private load(): void {
    const { graph, graphcur } = this.dbs.graph;
    const r = setRange(this.src.kind, this.src.followee);
    const cas: number[] = [];
    const serials: number[] = [];
    const key = Buffer.allocUnsafe(6);
    key.writeUInt16BE(this.src.kind, 0);
    let read = 0;
    for (const k of graph.getKeys({ start: r.start, end: r.end })) {
      read++;
      k.copy(key, 2, 6, 10);
      const v = graphcur.getBinaryFast(key);
      if (!v) continue; // cannot happen with an exact graph
      const ca = v.readUInt32BE(0);
      if (ca < this.since || ca > this.until) continue;
      cas.push(ca);
      serials.push(v.readUIntBE(4, SERIAL_BYTES));
    }
    this.charge(2 * read);
    const order = Array.from(cas.keys()).sort((a, b) => cas[b]! - cas[a]! || serials[b]! - serials[a]!);
    const keys = Buffer.allocUnsafe(order.length * SUFFIX_BYTES);
    order.forEach((j, i) => {
      keys.writeUInt32BE(cas[j]!, i * SUFFIX_BYTES);
      keys.writeUIntBE(serials[j]!, i * SUFFIX_BYTES + 4, SERIAL_BYTES);
    });
    this.keys = keys;
    this.n = order.length;
    this.decode();
  }

  private decode(): void {
    if (this.i >= this.n) return;
    const o = this.i * SUFFIX_BYTES;
    this.ca = this.keys!.readUInt32BE(o);
    this.serial = this.keys!.readUIntBE(o + 4, SERIAL_BYTES);
  }

  head(): Buffer | undefined {
    if (!this.keys) this.load();
    if (this.i >= this.n) return undefined;
    return this.keys!.subarray(this.i * SUFFIX_BYTES, (this.i + 1) * SUFFIX_BYTES);
  }

  advance(): void {
    this.i++;
    this.decode();
  }
}

/**
 * The lists of a graph kind newest first (graphtime), keeping those whose author is in the
 * follower set of (kind, followee): one probe of the set per list read, the author read with the
 * list's key. Cheaper than reading the set when the set is large and the limit small.
 */
export class GraphWalkCursor implements KeyCursor {
  ca = 0;
  serial = 0;
  private keys: Buffer[] = [];
  private authors: number[] = [];
  private i = 0;
  /** index in keys of the head that passed its probe (-1: none yet) */
  private checked = -1;
  private last: Buffer | null = null;
  private exhausted = false;
  private readonly range: { start: Buffer; end: Buffer };
  private readonly probe = Buffer.allocUnsafe(10);

  constructor(
    private readonly dbs: Dbs,
    src: GraphSource,
    since: number,
    until: number,
    private chunk: number,
    private readonly charge: (entries: number) => void,
    /** the follower set in memory (follower-cache.ts), tested instead of probing the graph */
    private readonly member: Membership | null = null,
  ) {
    this.range = timeRange(kindPrefix(src.kind), since, until);
    this.probe.writeUInt16BE(src.kind, 0);
    this.probe.writeUInt32BE(src.followee, 2);
  }

  head(): Buffer | undefined {
    for (;;) {
      if (this.i >= this.keys.length) {
        if (this.exhausted) return undefined;
        this.refill();
        continue;
      }
      const k = this.keys[this.i]!;
      if (this.checked === this.i) return k;
      const author = this.authors[this.i]!;
      let found: boolean;
      if (this.member) found = this.member(author);
      else {
        this.charge(1);
        this.probe.writeUInt32BE(author, 6);
        found = this.dbs.graph.graph.doesExist(this.probe);
      }
      if (found) {
        this.checked = this.i;
        this.ca = k.readUInt32BE(2);
        this.serial = readSerial(k, 6);
        return k;
      }
      this.i++;
    }
  }

  advance(): void {
    this.i++;
  }

  private refill(): void {
    const opts = nextChunk(this.range, this.last, this.chunk);
    const keys: Buffer[] = [];
    const authors: number[] = [];
    let read = 0;
    for (const { key, value } of this.dbs.graph.graphtime.getRange(opts)) {
      read++;
      this.last = key;
      if (key.length !== 2 + SUFFIX_BYTES || value.length < 4) continue; // cannot happen: graph.ts writes both
      keys.push(key);
      authors.push(value.readUInt32BE(0));
    }
    this.charge(read);
    this.keys = keys;
    this.authors = authors;
    this.i = 0;
    this.checked = -1;
    // the end of the range: fewer entries than asked for (a skipped entry does not end it)
    if (read < this.chunk) this.exhausted = true;
    this.chunk = Math.min(this.chunk * 2, MAX_CHUNK);
  }
}

