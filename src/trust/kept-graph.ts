// The follow and mute graph kept between ranking passes (trust.keepGraph), so that a pass reads only
// the lists that changed since the pass before instead of the whole graph (docs/trust.md, "What a
// pass reads"). Kept in store ids, not pass ids: store ids never change, pass ids are given again
// each pass (pass-ids.ts), and since both run in the same order a kept list maps to exactly the
// row a full read would build. Each list is kept with its serial (a replaced list gets a new one):
// one scan of the store's current-list entries (12 bytes a list, nothing per edge) tells which
// lists changed, were added or are gone; only those are read and parsed.
import { setImmediate as tick } from 'node:timers/promises';
import type { RankStore } from '../store/ranks.js';
import { F64List, Rows, U32Chunks, U32List } from './graph.js';
import { givePassIds, IdMap, SEEN } from './pass-ids.js';
import type { PubkeyIds } from './pubkeys.js';

/** One graph kind's current lists in store ids: authors ascending, each with its serial and its members (ascending, the author left out). */
export class StoreLists {
  readonly authors = new U32List();
  readonly serials = new F64List();
  /** list i's members are targets[start[i] .. start[i + 1]) */
  readonly start = new U32List();
  readonly targets = new U32Chunks();

  constructor() {
    this.start.push(0);
  }

  /** Appends a list; authors come in ascending order, members ascending. */
  add(author: number, serial: number, members: ArrayLike<number>): void {
    this.authors.push(author);
    this.serials.push(serial);
    for (let i = 0; i < members.length; i++) this.targets.push(members[i]!);
    this.start.push(this.targets.length);
  }

  /** Appends list i of `from` (unchanged since it was kept). */
  copy(from: StoreLists, i: number): void {
    this.authors.push(from.authors.data[i]!);
    this.serials.push(from.serials.data[i]!);
    const s = from.start.data;
    for (let e = s[i]!, end = s[i + 1]!; e < end; e++) this.targets.push(from.targets.at(e));
    this.start.push(this.targets.length);
  }

  get size(): number {
    return this.authors.length;
  }
}

/** The graph a pass kept for the next one: the follow lists (kind 3) and the mute lists (kind 10000). */
export interface KeptGraph {
  follows: StoreLists;
  mutes: StoreLists;
}

/** A kind's current lists as scanned (authors ascending), before the edges are read. */
export interface Scanned {
  authors: U32List;
  serials: F64List;
}

/**
 * Every current list of a kind: author and serial (one read of the current-list entries). `m`
 * sees each author (a pubkey of the graph); `keep` false: only that, nothing is collected (a whole
 * read that keeps nothing for the next pass).
 */
export async function scanLists(ranks: RankStore, kind: number, m?: IdMap, keep = true): Promise<Scanned> {
  const out: Scanned = { authors: new U32List(), serials: new F64List() };
  for await (const b of ranks.listAuthors(kind)) {
    for (let i = 0; i < b.authors.length; i++) {
      const a = b.authors[i]!;
      if (keep) {
        out.authors.push(a);
        out.serials.push(b.serials[i]!);
      }
      if (m && m.map[a] !== SEEN) m.see(a);
    }
    await tick();
  }
  return out;
}

/** Edges copied between two yields (keepRows, refreshLists): a few ms of work. */
const COPY_SLICE = 500_000;

/**
 * The kept lists of a kind after a full read: the lists scanned (before the edges were read) with
 * their rows. A list replaced between the scan and the edges keeps the older serial, so the next
 * pass reads it again; a list added in between has no serial yet (0): the same.
 */
export async function keepRows(scanned: Scanned, rows: Rows, passToStore: Uint32Array): Promise<StoreLists> {
  const kept = new StoreLists();
  const src = rows.src.data;
  const start = rows.start.data;
  const { chunks, bits, mask } = rows.raw();
  const authors = scanned.authors.data;
  let r = 0;
  let i = 0;
  const members: number[] = [];
  let copied = 0;
  while (i < scanned.authors.length || r < rows.rows) {
    const a = i < scanned.authors.length ? authors[i]! : Infinity;
    const ra = r < rows.rows ? passToStore[src[r]!]! : Infinity;
    members.length = 0;
    if (ra <= a) {
      for (let e = start[r]!; e < start[r + 1]!; e++) members.push(passToStore[chunks[e >>> bits]![e & mask]!]!);
      r++;
    }
    const author = Math.min(a, ra);
    kept.add(author, a === author ? scanned.serials.data[i++]! : 0, members);
    copied += members.length + 1;
    if (copied >= COPY_SLICE) {
      copied = 0;
      await tick(); // the whole graph passes through here once: 20 M follows held the event loop for seconds
    }
  }
  return kept;
}

/**
 * The kept lists of a kind brought up to date: lists whose serial is the kept one are copied, the
 * others read from the store; gone lists dropped. Null when more than `maxChanged` lists changed
 * (reading the whole graph is then cheaper: ~3× less per list than parsing one) or a list could
 * not be read consistently (replaced twice while read): the caller reads the whole graph.
 */
export async function refreshLists(ranks: RankStore, kind: number, kept: StoreLists, maxChanged: (lists: number) => number): Promise<{ lists: StoreLists; read: number } | null> {
  const now = await scanLists(ranks, kind);
  const na = now.authors.data;
  const ns = now.serials.data;
  const ka = kept.authors.data;
  const ks = kept.serials.data;
  // what changed, counted before anything is read
  let changed = 0;
  for (let i = 0, k = 0; i < now.authors.length; i++) {
    while (k < kept.size && ka[k]! < na[i]!) k++;
    if (k >= kept.size || ka[k] !== na[i] || ks[k] !== ns[i]) changed++;
  }
  if (changed > maxChanged(now.authors.length)) return null;
  const lists = new StoreLists();
  let read = 0;
  let copied = 0;
  const ksStart = kept.start.data;
  for (let i = 0, k = 0; i < now.authors.length; i++) {
    const author = na[i]!;
    while (k < kept.size && ka[k]! < author) k++;
    if (k < kept.size && ka[k] === author && ks[k] === ns[i]) {
      lists.copy(kept, k);
      copied += ksStart[k + 1]! - ksStart[k]! + 1;
      if (copied >= COPY_SLICE) {
        copied = 0;
        await tick();
      }
      continue;
    }
    let serial: number | undefined = ns[i]!;
    let members = ranks.listMembers(kind, author, serial);
    if (!members) {
      // replaced or deleted since the scan: its list now, once
      serial = ranks.listSerial(kind, author);
      if (serial === undefined) continue;
      members = ranks.listMembers(kind, author, serial);
      if (!members) return null;
    }
    lists.add(author, serial, members.sort());
    if (++read % 1000 === 0) await tick();
  }
  return { lists, read };
}

/** The rows of a pass from kept lists, with pass ids given as a full read gives them (pass-ids.ts). */
export async function rowsOfKept(ranks: RankStore, kept: KeptGraph, ids: PubkeyIds): Promise<{ follows: Rows; mutes: Rows }> {
  const m = new IdMap(ranks.pubkeyIdLimit());
  for (const l of [kept.follows, kept.mutes]) {
    for (let i = 0; i < l.size; i++) if (m.map[l.authors.data[i]!] !== SEEN) m.see(l.authors.data[i]!);
    const { chunks } = l.targets;
    for (let e = 0; e < l.targets.length; e++) {
      const t = chunks[e >>> U32Chunks.BITS]![e & U32Chunks.MASK]!;
      if (m.map[t] !== SEEN) m.see(t);
    }
    await tick();
  }
  await givePassIds(ranks, m, ids);
  const pass = m.map;
  // store ids map to pass ids in the same order: a kept list's members stay sorted and distinct
  let scratch = new Uint32Array(1024);
  const toRows = async (l: StoreLists): Promise<Rows> => {
    const rows = new Rows();
    const s = l.start.data;
    const { chunks } = l.targets;
    for (let i = 0; i < l.size; i++) {
      const from = s[i]!;
      const to = s[i + 1]!;
      const src = pass[l.authors.data[i]!]!;
      if (to === from || src >= SEEN) continue; // a list with no member is a pubkey, not a row
      if (scratch.length < to - from) scratch = new Uint32Array(to - from);
      let n = 0;
      for (let e = from; e < to; e++) {
        const t = pass[chunks[e >>> U32Chunks.BITS]![e & U32Chunks.MASK]!]!;
        if (t < SEEN) scratch[n++] = t;
      }
      if (n > 0) rows.addSorted(src, scratch, n);
      if (i % 10_000 === 0) await tick();
    }
    return rows;
  };
  return { follows: await toRows(kept.follows), mutes: await toRows(kept.mutes) };
}
