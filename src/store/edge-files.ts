// Sorted runs of held follow edges on disk, and their merge in key order (graph-spool.ts).
//
// A merge of held edges into the graph dirties nearly every leaf page of the graph, so its cost
// grows with the graph, and an import that merged every 4,000,000 edges paid the graph's size again
// and again (quadratic in the import; docs/storage.md, "What a merge costs"). So a full spool is
// sorted and written to a file instead, and the files are merged with the graph once, when the
// import ends (docs/storage.md, "One merge at the end"): each edge's page is written once.
//
// A file holds one kind's edges as the spool sorts them: pairs of 32-bit little-endian words,
// follower then followee (as 64-bit keys they sort by followee, then follower). The files belong
// to the running import only: a store opened after a kill derives its held edges again from the
// events (spool.ts recoverSpool) and deletes them.
import { closeSync, mkdirSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/** the directory of a store's files of held edges, in its data directory */
export const SPILL_DIR = 'import-spill';

/** one file of sorted edges of one kind */
export interface EdgeFile {
  kind: number;
  path: string;
  /** edges in it */
  len: number;
  /** the spill that wrote it (the dead marks count spills) */
  seq: number;
}

/** Writes the first `len` sorted edges of `words` to a new file in `dir`. */
export function writeEdgeFile(dir: string, seq: number, kind: number, words: Uint32Array, len: number): EdgeFile {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `edges-${seq}-${kind}.bin`);
  const fd = openSync(path, 'w');
  try {
    const bytes = new Uint8Array(words.buffer, words.byteOffset, 8 * len);
    for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at, Math.min(bytes.length - at, 1 << 24));
  } finally {
    closeSync(fd);
  }
  return { kind, path, len, seq };
}

/** Removes a store's spill directory and everything in it (after a merge of its files, or files a killed import left). */
export function removeEdgeFiles(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/** Edges read in order from a file (through a buffer) or from memory. */
export interface EdgeSource {
  /** the current edge's followee and follower (valid while !done) */
  followee: number;
  follower: number;
  done: boolean;
  /** the file's index among the import's files (the memory's: their count), for the dead marks */
  readonly seq: number;
  next(): void;
  close(): void;
}

/**
 * Edges read from a file at a time: 256 KiB of buffer per file. The final merge of a 5,000,000-event
 * import reads ~80 files (41 spills of two kinds) at once, and at 1 MiB each their buffers were
 * ~80 MB of the import's peak memory (the edges are read in order: the kernel's read-ahead serves
 * the next chunk either way).
 */
const CHUNK_EDGES = 1 << 15;

class FileSource implements EdgeSource {
  followee = 0;
  follower = 0;
  done = false;
  private readonly fd: number;
  /** emptied once the file is read: a merge keeps its sources until it ends */
  private buf = new Uint32Array(2 * CHUNK_EDGES);
  private n = 0;
  private i = 0;
  private read = 0;

  constructor(private readonly file: EdgeFile, readonly seq: number) {
    this.fd = openSync(file.path, 'r');
    this.next();
  }

  next(): void {
    if (this.i >= this.n) {
      if (this.read >= this.file.len) {
        this.done = true;
        this.close();
        return;
      }
      const want = Math.min(CHUNK_EDGES, this.file.len - this.read);
      const bytes = new Uint8Array(this.buf.buffer, 0, 8 * want);
      let got = 0;
      while (got < bytes.length) {
        const r = readSync(this.fd, bytes, got, bytes.length - got, 8 * this.read + got);
        if (r === 0) throw new Error(`${this.file.path}: ended after ${this.read * 8 + got} of ${this.file.len * 8} bytes`);
        got += r;
      }
      this.n = want;
      this.i = 0;
      this.read += want;
    }
    this.follower = this.buf[2 * this.i]!;
    this.followee = this.buf[2 * this.i + 1]!;
    this.i++;
  }

  private closed = false;
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.buf = new Uint32Array(0);
    closeSync(this.fd);
  }
}

class MemorySource implements EdgeSource {
  followee = 0;
  follower = 0;
  done = false;
  private i = 0;

  constructor(private readonly words: Uint32Array, private readonly len: number, readonly seq: number) {
    this.next();
  }

  next(): void {
    if (this.i >= this.len) {
      this.done = true;
      return;
    }
    this.follower = this.words[2 * this.i]!;
    this.followee = this.words[2 * this.i + 1]!;
    this.i++;
  }

  close(): void {}
}

const before = (a: EdgeSource, b: EdgeSource): boolean => a.followee < b.followee || (a.followee === b.followee && a.follower < b.follower);

/**
 * The edges of several sorted sources in key order (a binary heap of the sources): `top` is the
 * source holding the smallest edge, advanced with pop(). Equal edges (one list held twice is not
 * possible, but a file and the graph may share one after a restart) come one after the other.
 */
export class EdgeMerge {
  private heap: EdgeSource[];

  constructor(sources: EdgeSource[]) {
    this.heap = sources.filter((s) => !s.done);
    for (let i = (this.heap.length >> 1) - 1; i >= 0; i--) this.down(i);
  }

  get top(): EdgeSource | undefined {
    return this.heap[0];
  }

  /** Advances the top source and restores the order. */
  pop(): void {
    const h = this.heap;
    const s = h[0]!;
    s.next();
    if (s.done) {
      const last = h.pop()!;
      if (h.length === 0) return;
      h[0] = last;
    }
    this.down(0);
  }

  close(): void {
    for (const s of this.heap) s.close();
    this.heap = [];
  }

  private down(i: number): void {
    const h = this.heap;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= h.length) return;
      const c = l + 1 < h.length && before(h[l + 1]!, h[l]!) ? l + 1 : l;
      if (!before(h[c]!, h[i]!)) return;
      [h[i], h[c]] = [h[c]!, h[i]!];
      i = c;
    }
  }
}

export const fileSource = (file: EdgeFile): EdgeSource => new FileSource(file, file.seq);
export const memorySource = (words: Uint32Array, len: number, seq: number): EdgeSource => new MemorySource(words, len, seq);
