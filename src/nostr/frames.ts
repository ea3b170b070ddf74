// Query results as ready WebSocket messages in one buffer. A scan copies each matching event's JSON
// bytes once, straight from the LMDB value into a growing buffer, between the framing the caller
// asked for (`["EVENT","<subid>",` and `]`): no per-event string is made, and a query thread hands
// the whole answer to the main thread as one shared buffer instead of cloning 500 strings.
// The main thread sends each frame as a slice of it (measured on the followers shape of the
// directory benchmark, ~3.5 MB per answer: cloning and re-encoding strings was ~80% of the time).

import type { Filter } from './filter.js';

export interface Framing {
  prefix: Uint8Array;
  suffix: Uint8Array;
}

export const NO_FRAMING: Framing = { prefix: new Uint8Array(0), suffix: new Uint8Array(0) };

/**
 * Frames back to back in `buf`, newest first: frame i is buf[ends[i-1] (0 for i = 0) .. ends[i]),
 * its event's kind kinds[i]. Plain typed arrays so it crosses threads by transfer.
 */
export interface EventFrames {
  buf: Uint8Array;
  ends: Uint32Array;
  kinds: Uint16Array;
  prefixLen: number;
  suffixLen: number;
  /**
   * Set when the frames are a kept answer lent by the thread that keeps it (store/answer-cache.ts):
   * then each frame's first prefixLen bytes are a slot, and the sender writes its own prefix into
   * the slot's end right before it sends the frame (lentFrame). The buffer is the keeper's and is
   * shared by every REQ it is lent to, so nothing else in it may be written, and it goes back with
   * releaseFrames (or QueryRunner.release) by this number.
   */
  lent?: number;
  /**
   * Set when the answer stopped at QueryOptions.maxBytes: filters[filter] ended early and `rest`
   * is its continuation (its `until`/`after` past the last frame, the limit that is left); the
   * filters after it were not read. The answer is the rest of these filters, less what was sent.
   */
  cut?: { filter: number; rest: Filter };
  /**
   * Every filter this answer read to its end had fewer matches than its limit: nothing of them was
   * left out (NIP-67 `finish`). A cut filter is not counted (its rest decides), nor are the filters
   * after it; a NIP-50 search, whose reads are bounded by its postings, never sets it; an answer
   * stopped early (budget, deadline, abort) never does.
   */
  exhausted?: boolean;
  /**
   * The filters (indexes into the query's filters) whose limit left matches out: a match beyond the
   * limit was read (never a guess). The caller knows which limits were the relay's own (NIP-67 `more`).
   */
  limited?: number[];
}

export const frameCount = (f: EventFrames): number => f.ends.length;

export function frameAt(f: EventFrames, i: number): Uint8Array {
  return f.buf.subarray(i === 0 ? 0 : f.ends[i - 1]!, f.ends[i]!);
}

/** Where frame i's event JSON starts in `buf` (after its framing). */
export const frameJsonStart = (f: EventFrames, i: number): number => (i === 0 ? 0 : f.ends[i - 1]!) + f.prefixLen;
/** Where frame i's event JSON ends in `buf` (before its framing). */
export const frameJsonEnd = (f: EventFrames, i: number): number => f.ends[i]! - f.suffixLen;

/**
 * Frame i of lent frames (EventFrames.lent) as the caller's message: `prefix` is written into the
 * end of the frame's slot, and the frame begins there. Valid until the next lentFrame call on the
 * same frame: send it (uWS copies it) before anything else runs.
 */
export function lentFrame(f: EventFrames, i: number, prefix: Uint8Array): Uint8Array {
  const at = frameJsonStart(f, i) - prefix.length;
  f.buf.set(prefix, at);
  return f.buf.subarray(at, f.ends[i]!);
}

/** Bytes of the frames as sent with `prefix`: lent frames hold a slot of `prefixLen` bytes where the sent frame has its prefix. */
export function framesSentBytes(f: EventFrames, prefix: Uint8Array): number {
  const n = f.ends.length;
  if (n === 0) return 0;
  return f.lent === undefined ? f.ends[n - 1]! : f.ends[n - 1]! - n * (f.prefixLen - prefix.length);
}

/** Bytes of the events' JSON in the frames, their framing not counted. */
export function framesJsonBytes(f: EventFrames): number {
  const n = f.ends.length;
  return n === 0 ? 0 : f.ends[n - 1]! - n * (f.prefixLen + f.suffixLen);
}

/** The event JSON text inside frame i. */
export function frameJson(f: EventFrames, i: number): string {
  const start = frameJsonStart(f, i);
  return Buffer.from(f.buf.buffer, f.buf.byteOffset + start, frameJsonEnd(f, i) - start).toString('utf8');
}

/** Every event JSON text of the frames (the frames are released: their buffer is reused). */
export function framesToJson(f: EventFrames): string[] {
  const out = new Array<string>(f.ends.length);
  for (let i = 0; i < out.length; i++) out[i] = frameJson(f, i);
  releaseFrames(f);
  return out;
}

/**
 * The buffers a postMessage should transfer to hand `f` over without copying: the small index
 * arrays. The frames' buffer is shared memory (see below), which a postMessage passes by reference.
 */
export const framesTransfer = (f: EventFrames): ArrayBuffer[] => [f.ends.buffer as ArrayBuffer, f.kinds.buffer as ArrayBuffer];

// ---- answer buffers, recycled ----
// A fresh multi-megabyte buffer costs a page fault per 4 KB the first time it is written (measured:
// filling a new 3.5 MB buffer 5 ms, a reused one 0.7 ms), so answer buffers are kept per thread and
// handed back after their frames were sent (QueryRunner.release): a query thread's buffers travel
// to the main thread and back.
//
// They are SharedArrayBuffers, passed by reference. A transferred ArrayBuffer arrives as a new
// external allocation of its full size in the receiving isolate, and V8 schedules full GCs by
// external memory: at ~3.5 MB per followers answer the main thread ran a Mark-Compact about every
// 20 answers (38 in 7 s, ~20% of its time, and more on V8's helper threads). Shared memory is not
// counted per isolate. The hand-over is still by message (post, then release), so the thread that
// made a buffer writes it again only after the main thread is done with it.

/** Smallest buffer allocated (and worth keeping). */
const MIN_BUFFER = 64 * 1024;
/** Most bytes of idle buffers a thread keeps. */
const MAX_IDLE_BYTES = 64 * 1024 * 1024;

const idle: SharedArrayBuffer[] = [];
let idleBytes = 0;

/** A buffer of at least `min` bytes: the largest idle one when it is large enough (growth is then rare), else a new one. */
export function takeBuffer(min: number): Buffer {
  let best = -1;
  for (let i = 0; i < idle.length; i++) if (best < 0 || idle[i]!.byteLength > idle[best]!.byteLength) best = i;
  if (best >= 0 && idle[best]!.byteLength >= min) {
    const ab = idle[best]!;
    idle[best] = idle[idle.length - 1]!;
    idle.pop();
    idleBytes -= ab.byteLength;
    return Buffer.from(ab, 0, ab.byteLength);
  }
  return Buffer.from(new SharedArrayBuffer(Math.max(min, MIN_BUFFER)));
}

/** Gives a buffer back for reuse (it must no longer be read or written elsewhere). */
export function giveBuffer(ab: ArrayBufferLike): void {
  if (!(ab instanceof SharedArrayBuffer) || ab.byteLength < MIN_BUFFER || ab.byteLength > MAX_IDLE_BYTES / 4) return;
  idle.push(ab);
  idleBytes += ab.byteLength;
  // over the cap: drop the smallest (the large ones save the most page faults)
  while (idleBytes > MAX_IDLE_BYTES) {
    let s = 0;
    for (let i = 1; i < idle.length; i++) if (idle[i]!.byteLength < idle[s]!.byteLength) s = i;
    idleBytes -= idle[s]!.byteLength;
    idle[s] = idle[idle.length - 1]!;
    idle.pop();
  }
}

/**
 * Copies src[from..to) into dst at `at`. Not TypedArray#set (nor Buffer#copy, which uses it): into
 * shared memory V8 copies byte by byte with atomic stores unless both ends share their alignment,
 * 7-9x slower than memcpy for a 7 KB event (measured; it was 45% of a query thread on the
 * followers shape). Buffer#fill with a buffer value is a plain native memcpy.
 */
export function copyInto(dst: Buffer, at: number, src: Uint8Array, from: number, to: number): void {
  if (to > from) dst.fill(src.subarray(from, to), at, at + (to - from));
}

/** Where a scan writes framed event bytes. */
export class FrameArena {
  buf: Buffer;
  len = 0;

  /** `size`: the bytes the caller knows it will append (the buffer grows past it when needed) */
  constructor(readonly framing: Framing, size = MIN_BUFFER) {
    this.buf = takeBuffer(size);
  }

  /** Appends framing + src[from..to) + framing; returns the frame's start. */
  append(src: Uint8Array, from: number, to: number): number {
    const { prefix, suffix } = this.framing;
    const start = this.len;
    const need = start + prefix.length + (to - from) + suffix.length;
    if (need > this.buf.length) {
      const grown = takeBuffer(Math.max(need, 2 * this.buf.length));
      copyInto(grown, 0, this.buf, 0, start);
      giveBuffer(this.buf.buffer);
      this.buf = grown;
    }
    let o = start;
    if (prefix.length) {
      this.buf.set(prefix, o);
      o += prefix.length;
    }
    copyInto(this.buf, o, src, from, to);
    o += to - from;
    if (suffix.length) {
      this.buf.set(suffix, o);
      o += suffix.length;
    }
    this.len = o;
    return start;
  }

  reset(): void {
    this.len = 0;
  }
}

/** A frame in an arena: [start, end) and its event's kind. */
export interface Placed {
  start: number;
  end: number;
  kind: number;
}

/**
 * The frames of `items` in their order. When they already lie back to back from the arena's start
 * (one filter: the scan wrote them in final order) the arena buffer itself is used, else they are
 * copied into a buffer of their own.
 */
export function assemble(arena: FrameArena, items: Placed[]): EventFrames {
  const n = items.length;
  const ends = new Uint32Array(n);
  const kinds = new Uint16Array(n);
  let total = 0;
  let inPlace = true;
  for (let i = 0; i < n; i++) {
    const it = items[i]!;
    if (it.start !== total) inPlace = false;
    total += it.end - it.start;
    ends[i] = total;
    kinds[i] = it.kind;
  }
  const { prefix, suffix } = arena.framing;
  const shape = { ends, kinds, prefixLen: prefix.length, suffixLen: suffix.length };
  if (inPlace) return { buf: arena.buf.subarray(0, total), ...shape };
  const buf = takeBuffer(total);
  let o = 0;
  for (const it of items) {
    copyInto(buf, o, arena.buf, it.start, it.end);
    o += it.end - it.start;
  }
  giveBuffer(arena.buf.buffer);
  return { buf: buf.subarray(0, total), ...shape };
}

/** What gives lent frames back to their keeper on this thread (store/answer-cache.ts registers it). */
let returnLent: (id: number) => void = () => {};
export function onLentReturn(fn: (id: number) => void): void {
  returnLent = fn;
}

/** Gives lent frames back to their keeper on this thread, by their number (EventFrames.lent). */
export const giveBackLent = (id: number): void => returnLent(id);

/** Done with these frames (sent, or converted): their buffer may be reused by this thread, or goes back to its keeper. */
export function releaseFrames(f: EventFrames): void {
  if (f.lent !== undefined) returnLent(f.lent);
  else giveBuffer(f.buf.buffer);
}
