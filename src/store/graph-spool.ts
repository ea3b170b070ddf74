// The import's follow edges, held back and merged into the graph in key order (spool.ts).
//
// A new follow list writes one edge per follow, and in a large graph nearly every edge lands on a
// leaf page of its own: a transaction of the import's size (tens of thousands of edges) dirties a
// page per edge, and each page is copied and written back (~40 µs an edge on this machine class,
// ../shared/perf/lmdb-page-cost). Written sorted, millions to a transaction, each dirtied page takes
// dozens of edges (~6 µs each). So while the import runs, the edges of a list whose author had no
// current list (nearly every list of a first import) are held here instead of written.
//
// Only additions are held: a list whose author has edges here and that is replaced or deleted
// takes its held edges out and writes them to the graph first (take), then the difference as
// usual; one whose held edges are in a file (edge-files.ts) is marked dead there instead, and its
// new version is held as a new list. So between merges the graph holds a subset of the true edges,
// and the missing ones are the members of current lists stored since the spool was last empty.
import { hllAdd, HLL_REGISTERS } from '../nostr/nip45.js';
import { addRegistersToCounter, counterKey, counterOffset, isCountedPair } from './counters.js';
import { EdgeMerge, fileSource, memorySource, removeEdgeFiles, writeEdgeFile, type EdgeFile } from './edge-files.js';
import { idPubkey } from './graph.js';
import { EMPTY } from './keys.js';
import { PubkeyChunks } from './pubkey-chunks.js';
import type { Dbs } from './schema.js';

/** a spooled author's edges: where they are in its kind's array */
interface Run {
  kind: number;
  author: number;
  start: number;
  /**
   * its edges (the followee ids are the words' odd halves from start): the ids are not kept as an
   * array of their own, which held every spooled edge a second time on the heap (~45 MB of arrays
   * at 550,000 lines of the 5,000,000 set, a heap snapshot showed)
   */
  len: number;
}

/** Edges of one kind: pairs of 32-bit words, follower then followee (as little-endian 64-bit keys they sort by followee, then follower). */
class KindEdges {
  words = new Uint32Array(2 * 65536);
  len = 0;
  /**
   * author id -> the author's run. One map per kind keyed by the id alone (a small integer): the
   * merge looks a run up for every edge it counts, and a key of kind and id together was a heap
   * number, hashed as such.
   */
  readonly runs = new Map<number, Run>();

  push(followee: number, follower: number): void {
    if (2 * this.len + 2 > this.words.length) {
      const grown = new Uint32Array(this.words.length * 2);
      grown.set(this.words);
      this.words = grown;
    }
    this.words[2 * this.len] = follower;
    this.words[2 * this.len + 1] = followee;
    this.len++;
  }
}

/**
 * The pubkeys of the authors whose edges are held, 32 bytes each side by side (pubkey-chunks.ts),
 * found by the author's id through a dense array (4 bytes per pubkey id up to the largest held
 * author's). The merge reads one for every edge it counts: through a map of runs to a Buffer per
 * author it was three or four cache misses an edge, most of the merge's own time. In chunks since
 * the eighteenth session: one buffer that doubled held up to twice the pubkeys (64 MB for the 53 MB
 * of 5,000,000 directory events) and, while it was copied, both.
 */
class HeldAuthors {
  /** author id -> slot + 1 (0: none) */
  slotOf = new Int32Array(1 << 16);
  /** slot -> the pubkey's 32 bytes */
  readonly pubkeys = new PubkeyChunks();
  private slots = 0;

  note(author: number, pubkeyHex: string): void {
    if (author >= this.slotOf.length) {
      const grown = new Int32Array(Math.max(author + 1, 2 * this.slotOf.length));
      grown.set(this.slotOf);
      this.slotOf = grown;
    }
    if (this.slotOf[author] !== 0) return;
    this.pubkeys.set(this.slots, pubkeyHex);
    this.slotOf[author] = ++this.slots;
  }

  clear(): void {
    this.slotOf.fill(0);
    this.slots = 0;
  }
}

/** the registers of one followee's new followers, gathered by a merge (drain) */
const mergeRegisters = new Uint8Array(HLL_REGISTERS);

/**
 * Followees whose follower counters one call of drain() (a part of the merge: one transaction)
 * writes at most. The counters are keyed by pubkey, so in id order each lands on a page of its
 * own: where the graph's long tail has a follower or two per followee, a part of 262,144 edges wrote
 * ~100,000 counters, and at 1,500,000 events of the 5,000,000 set one part dirtied 163 MB of pages,
 * which LMDB keeps for reuse while the store is open (the import's peak memory).
 */
const COUNTED_PER_PART = 16_384;

/** A pubkey id never allocated (graph.ts allocId stops below it): a taken-out edge, which sorts last. */
const DEAD = 0xffffffff;

/** A kind's held edges sorted (a copy: the spool stays as it is until clear()), the taken-out ones (sorted last) left off. */
function sortedLive(e: KindEdges): { words: Uint32Array; len: number } {
  const sorted = new BigUint64Array(e.len);
  new Uint32Array(sorted.buffer).set(e.words.subarray(0, 2 * e.len));
  sorted.sort();
  const words = new Uint32Array(sorted.buffer);
  let len = e.len;
  while (len > 0 && words[2 * len - 1] === DEAD) len--;
  return { words, len };
}

export class EdgeSpool {
  private readonly kinds = new Map<number, KindEdges>();
  private readonly authors = new HeldAuthors();
  /** the first serial spooled since the spool was last empty (0: empty) */
  from = 0;
  /** the spool's state when the write transaction began, to go back to if it does not commit */
  private mark: { lens: Map<number, number>; from: number; added: Run[]; taken: Array<{ run: Run; followees: number[] }>; killed: Array<() => void> } | null = null;
  /** held edges written to files (edge-files.ts), oldest first, and the number of spills so far */
  private files: EdgeFile[] = [];
  private spills = 0;
  /** per kind, the authors whose held list is in a file (a bit per author id) */
  private readonly inFiles = new Map<number, Uint8Array>();
  /** per kind, author -> spills before which its held edges are dead (its list was replaced or deleted while in a file) */
  private readonly deadBefore = new Map<number, Map<number, number>>();
  /** a part of a merge did not commit (restartDrain): some held edges may be in the graph already */
  private restarted = false;

  constructor(
    /** edges held before the writer merges them */
    readonly max: number,
    /**
     * filled again from the stored events after a kill (spool.ts recoverSpool): some of its edges
     * were written and counted with their events (a list replaced within the import)
     */
    private readonly refilled = false,
    /** where full spools go until the merge at the end (absent: every full spool is merged) */
    private readonly spillDir?: string,
  ) {}

  /** edges held in files */
  get filed(): number {
    let n = 0;
    for (const f of this.files) n += f.len;
    return n;
  }

  /**
   * Whether full spools go to files (an import's, which has a directory for them) rather than into
   * the graph. They always do: everything held is merged once, at the end (docs/storage.md, "One
   * merge at the end").
   */
  get toFiles(): boolean {
    return this.spillDir !== undefined;
  }

  /** Whether the author's held list of this kind is in a file. */
  holdsFiled(kind: number, author: number): boolean {
    const bits = this.inFiles.get(kind);
    return bits !== undefined && author >> 3 < bits.length && (bits[author >> 3]! & (1 << (author & 7))) !== 0;
  }

  private setFiled(kind: number, author: number, on: boolean): void {
    let bits = this.inFiles.get(kind);
    if (!bits || author >> 3 >= bits.length) {
      if (!on) return;
      const grown = new Uint8Array(Math.max((author >> 3) + 1, 2 * (bits?.length ?? 4096)));
      if (bits) grown.set(bits);
      this.inFiles.set(kind, (bits = grown));
    }
    if (on) bits[author >> 3]! |= 1 << (author & 7);
    else bits[author >> 3]! &= ~(1 << (author & 7));
  }

  /**
   * The author's held list of this kind, in a file, is replaced or deleted: its edges there are
   * marked dead (the merge skips them: never written, never counted). Returns what takes it back.
   */
  killFiled(kind: number, author: number): () => void {
    let dead = this.deadBefore.get(kind);
    if (!dead) this.deadBefore.set(kind, (dead = new Map()));
    const prev = dead.get(author);
    dead.set(author, this.spills);
    this.setFiled(kind, author, false);
    const undo = () => {
      if (prev === undefined) dead.delete(author);
      else dead.set(author, prev);
      this.setFiled(kind, author, true);
    };
    this.mark?.killed.push(undo);
    return undo;
  }

  /** Writes the held edges to files, one per kind, sorted; the spool then holds none in memory. Returns the edges written. */
  spill(): number {
    // counted first: a kind whose file could not be written stays in memory, past this spill's files
    const seq = this.spills++;
    let n = 0;
    for (const [kind, e] of this.kinds) {
      const { words, len } = sortedLive(e);
      if (len > 0) this.files.push(writeEdgeFile(this.spillDir!, seq, kind, words, len));
      for (const author of e.runs.keys()) this.setFiled(kind, author, true);
      e.len = 0;
      e.runs.clear();
      n += len;
    }
    return n;
  }

  /** edges held (taken-out ones included until the next merge) */
  get size(): number {
    let n = 0;
    for (const e of this.kinds.values()) n += e.len;
    return n;
  }

  private edges(kind: number): KindEdges {
    let e = this.kinds.get(kind);
    if (!e) this.kinds.set(kind, (e = new KindEdges()));
    return e;
  }

  get full(): boolean {
    return this.size >= this.max;
  }

  /** Whether the author's list of this kind has edges here. */
  holds(kind: number, author: number): boolean {
    return this.kinds.get(kind)?.runs.has(author) === true;
  }

  /** A write transaction begins (writer.ts): what rollback() takes back starts here. */
  begin(): void {
    const lens = new Map<number, number>();
    for (const [k, e] of this.kinds) lens.set(k, e.len);
    this.mark = { lens, from: this.from, added: [], taken: [], killed: [] };
  }

  /** The transaction committed. */
  commit(): void {
    this.mark = null;
  }

  /** The transaction did not commit: the edges it spooled go, the ones it took out come back. */
  rollback(): void {
    const m = this.mark;
    if (!m) return;
    for (const run of m.added) {
      const runs = this.edges(run.kind).runs;
      if (runs.get(run.author) === run) runs.delete(run.author);
    }
    for (const [k, e] of this.kinds) e.len = m.lens.get(k) ?? 0;
    for (const t of m.taken) this.restore(t.run, t.followees);
    for (let i = m.killed.length - 1; i >= 0; i--) m.killed[i]!();
    this.from = m.from;
    this.mark = null;
  }

  /** Holds the edges of a new list (its author has none in the graph or here). Returns what takes them back. */
  add(kind: number, author: number, pubkey: string, followees: number[], serial: number): () => void {
    const e = this.edges(kind);
    const run: Run = { kind, author, start: e.len, len: followees.length };
    this.authors.note(author, pubkey);
    const from = this.from;
    for (const f of followees) e.push(f, author);
    if (this.from === 0) this.from = serial;
    e.runs.set(author, run);
    this.mark?.added.push(run);
    // an operation that throws is taken back alone, its last write first (txn.ts run)
    return () => {
      e.len = run.start;
      e.runs.delete(author);
      this.from = from;
    };
  }

  /**
   * Takes the author's spooled edges out: returns their followee ids (the caller writes them to the
   * graph) and what puts them back if the operation is taken back.
   */
  take(kind: number, author: number): { followees: number[]; undo: () => void } {
    const e = this.edges(kind);
    const run = e.runs.get(author)!;
    const w = e.words;
    const followees = new Array<number>(run.len);
    for (let i = 0; i < run.len; i++) {
      followees[i] = w[2 * (run.start + i) + 1]!;
      w[2 * (run.start + i)] = w[2 * (run.start + i) + 1] = DEAD;
    }
    e.runs.delete(author);
    this.mark?.taken.push({ run, followees });
    return { followees, undo: () => this.restore(run, followees) };
  }

  private restore(run: Run, followees: number[]): void {
    const e = this.edges(run.kind);
    // a run past the end was spooled by the transaction being taken back: it is gone with it
    if (run.start + run.len > e.len) return;
    for (let i = 0; i < run.len; i++) {
      e.words[2 * (run.start + i)] = run.author;
      e.words[2 * (run.start + i) + 1] = followees[i]!;
    }
    e.runs.set(run.author, run);
  }

  /** the merge under way: per kind, its files and its sorted memory merged in key order, and which kind it is at */
  private merging: { kinds: Array<{ kind: number; merge: EdgeMerge | null }>; k: number } | null = null;

  /**
   * Writes held edges (the files' and the memory's) into the graph in key order, at most `limit`
   * and those of at most `countedPerPart` followees whose counters it writes,
   * inside the caller's write transaction, continuing where the last call stopped; `done` once
   * every edge is written. The spool itself is left as it is (a transaction may still not commit):
   * clear() once every part has committed, restartDrain() if one did not.
   */
  drain(dbs: Dbs, limit = Infinity, countedPerPart = COUNTED_PER_PART): { written: number; done: boolean } {
    if (!this.merging) {
      const kinds = new Set<number>([...this.kinds.keys(), ...this.files.map((f) => f.kind)]);
      this.merging = { kinds: [...kinds].sort((a, b) => a - b).map((kind) => ({ kind, merge: null })), k: 0 };
    }
    const m = this.merging;
    // otherwise a held edge's author had none in the graph
    const mayExist = this.refilled || this.restarted;
    const key = Buffer.allocUnsafe(10);
    const graph = dbs.graph.graph;
    let written = 0;
    // followees whose counters this call has written (countedPerPart)
    let countedHere = 0;
    while (m.k < m.kinds.length && written < limit && countedHere < countedPerPart) {
      const at = m.kinds[m.k]!;
      const { kind } = at;
      if (!at.merge) {
        const sources = this.files.filter((f) => f.kind === kind).map((f) => fileSource(f));
        const e = this.kinds.get(kind);
        if (e && e.len > 0) {
          const { words, len } = sortedLive(e);
          sources.push(memorySource(words, len, this.spills));
        }
        at.merge = new EdgeMerge(sources);
      }
      const merge = at.merge;
      const dead = this.deadBefore.get(kind);
      key.writeUInt16BE(kind, 0);
      // The edges are counted here, a followee's new followers at once (graph.ts noted none of
      // them): their registers gathered from the followers' pubkey bytes, then added to the
      // followee's counter in one write.
      const counted = isCountedPair('p', kind);
      const pks = this.authors.pubkeys;
      const slotOf = this.authors.slotOf;
      let followee = -1;
      let counterOf: Buffer | null = null;
      let offset = 0;
      let followers = 0;
      const count = () => {
        if (counterOf && followers > 0) addRegistersToCounter(dbs.tagcount, counterOf, mergeRegisters, followers);
        followers = 0;
      };
      const start = (f: number) => {
        followee = f;
        if (!counted) return;
        const pk = idPubkey(dbs, f);
        counterOf = pk === undefined ? null : Buffer.from(counterKey(pk, kind));
        if (counterOf) offset = counterOffset(counterOf);
        mergeRegisters.fill(0);
      };
      for (let top = merge.top; top && written < limit; merge.pop(), top = merge.top) {
        const f = top.followee;
        const follower = top.follower;
        // a list replaced or deleted while its edges were in this file
        if (dead !== undefined && dead.size > 0 && (dead.get(follower) ?? -1) > top.seq) continue;
        if (f !== followee) {
          // the part ends at a followee's first edge: its counter is written in the next
          if (counted && countedHere >= countedPerPart) break;
          count();
          start(f);
          if (counted) countedHere++;
        }
        key.writeUInt32BE(f, 2);
        key.writeUInt32BE(follower, 6);
        // an edge that may be there already (mayExist) is looked up, so that it is not counted twice
        if (counted && mayExist && graph.doesExist(key)) continue;
        graph.putSync(key, EMPTY);
        if (counterOf) {
          const slot = slotOf[follower]! - 1;
          hllAdd(mergeRegisters, pks.chunk(slot), pks.offset(slot), offset);
          followers++;
        }
        written++;
      }
      count();
      if (!merge.top) m.k++;
    }
    return { written, done: m.k >= m.kinds.length };
  }

  /** A part of the merge did not commit: the next drain() starts over (writing an edge twice is harmless, counting it twice is not). */
  restartDrain(): void {
    for (const k of this.merging?.kinds ?? []) k.merge?.close();
    this.merging = null;
    this.restarted = true;
  }

  /** Empties the spool (its edges are in the graph: drain() committed). */
  clear(): void {
    for (const k of this.merging?.kinds ?? []) k.merge?.close();
    this.merging = null;
    // the directory holds only this spool's files (an open removes what a killed import left)
    if (this.files.length > 0) removeEdgeFiles(this.spillDir!);
    this.files = [];
    this.inFiles.clear();
    this.deadBefore.clear();
    this.restarted = false;
    for (const e of this.kinds.values()) {
      e.len = 0;
      e.runs.clear();
    }
    this.authors.clear();
    this.from = 0;
    this.mark = null;
  }
}

