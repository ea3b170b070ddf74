// Maintained counts and NIP-45 HyperLogLog registers for the (tag, kind) pairs that NIP-45 names
// as common queries (follower, reaction, repost, reply, quote and comment counts), so that
// `COUNT {"kinds":[3],"#p":[pk]}` is one read instead of a scan of every follow list.
//
// One entry per (tag name, 64-hex value, kind) in ev.tagcount, keyed by the tag+kind prefix:
//   flags (1) | count (4) | version (4) | registers
// registers are dense (256 bytes, flag DENSE) or sparse (index, value) byte pairs sorted by index
// while fewer than 128 registers are set: most values have a handful of events.
//
// Counts are exact: the indexer notes +1/-1 for every entry it writes or removes (the same code for
// both, so they cannot drift), and the notes of a write transaction are applied at its end.
// Registers can only grow: when an author's last counted event for a value goes (an unfollow, a
// deletion), the entry is marked STALE and its registers may still include that author. A stale
// entry's registers are recomputed from the index when asked (query.ts) and written back if the
// entry has not changed since (its version): refreshHll().
import { nibble } from '../nostr/hex.js';
import { hllAddHex, hllMerge, hllPointCode, HLL_REGISTERS } from '../nostr/nip45.js';
import { MAX_TAG_PREFIX, TYPE_HEX, tagTypeAt, writeTagPrefix } from './keys.js';
import type { BinDb } from './schema.js';

const F_DENSE = 1;
const F_STALE = 2;
/** flags (1) | count (4) | version (4): the fixed part of a counter's value */
export const COUNTER_HEADER = 9;
/** sparse pairs beyond this take more room than the dense form */
const SPARSE_MAX = HLL_REGISTERS / 2;

/** Tag names and the kinds counted with them: NIP-45's "common filters". */
const COUNTED: ReadonlyMap<string, ReadonlySet<number>> = new Map([
  ['p', new Set([3])],
  ['e', new Set([1, 6, 7])],
  ['q', new Set([1, 1111])],
  ['E', new Set([1111])],
]);

/** Whether entries of this tag name with this kind are counted (value permitting: 64-hex only). */
export const isCountedPair = (name: string, kind: number): boolean => COUNTED.get(name)?.has(kind) ?? false;

/** Whether a tag prefix holds a 64-hex value (keys.ts TYPE_HEX), the only values counted. */
export const isHexPrefix = (tagPrefix: Uint8Array): boolean => tagPrefix[tagTypeAt(tagPrefix)] === TYPE_HEX;

/** NIP-45 offset of a counter key: 8 + the hex digit at position 32 of the value = high nibble of value byte 16. */
export const counterOffset = (key: Uint8Array): number => 8 + (key[tagTypeAt(key) + 1 + 16]! >> 4);

export interface Counter {
  count: number;
  version: number;
  /** registers may include authors whose events are gone */
  stale: boolean;
  /** dense registers (256) */
  registers: Uint8Array;
}

/** `into`: registers to decode into (zeroed here), e.g. a scratch array the caller does not keep. */
export function decodeCounter(v: Uint8Array, into?: Uint8Array): Counter {
  const flags = v[0]!;
  const registers = into ? into.fill(0) : new Uint8Array(HLL_REGISTERS);
  if (flags & F_DENSE) registers.set(v.subarray(COUNTER_HEADER, COUNTER_HEADER + HLL_REGISTERS));
  else for (let i = COUNTER_HEADER; i + 1 < v.length; i += 2) registers[v[i]!] = v[i + 1]!;
  const u32 = (o: number): number => ((v[o]! << 24) | (v[o + 1]! << 16) | (v[o + 2]! << 8) | v[o + 3]!) >>> 0;
  return { count: u32(1), version: u32(5), stale: (flags & F_STALE) !== 0, registers };
}

/**
 * `into`: a buffer of at least COUNTER_HEADER + HLL_REGISTERS bytes to encode into (the value is a
 * subarray of it, valid until it is written again); absent: a new buffer.
 */
export function encodeCounter(c: Counter, into?: Buffer): Buffer {
  let set = 0;
  for (let i = 0; i < HLL_REGISTERS; i++) if (c.registers[i] !== 0) set++;
  const dense = set > SPARSE_MAX;
  const size = COUNTER_HEADER + (dense ? HLL_REGISTERS : 2 * set);
  const b = into ? into.subarray(0, size) : Buffer.allocUnsafe(size);
  b[0] = (dense ? F_DENSE : 0) | (c.stale ? F_STALE : 0);
  b.writeUInt32BE(c.count, 1);
  b.writeUInt32BE(c.version >>> 0, 5);
  if (dense) b.set(c.registers, COUNTER_HEADER);
  else {
    let o = COUNTER_HEADER;
    for (let i = 0; i < HLL_REGISTERS; i++) {
      if (c.registers[i] === 0) continue;
      b[o++] = i;
      b[o++] = c.registers[i]!;
    }
  }
  return b;
}

const empty = (registers = new Uint8Array(HLL_REGISTERS)): Counter => ({ count: 0, version: 0, stale: false, registers });

/** The counter of one tag+kind prefix, or undefined when no counted event has it. */
export function readCounter(db: BinDb, key: Uint8Array): Counter | undefined {
  const v = db.getBinaryFast(key as Buffer);
  return v && v.length >= COUNTER_HEADER ? decodeCounter(v) : undefined;
}

/**
 * The notes of one write transaction: per counter key, per author, the net change of that author's
 * counted events. Applied once at the end of the transaction (a popular key in many events of a
 * batch is read and written once). Net per author, not per event, because a replaceable event that
 * replaces an older version removes and re-adds the same author: that author stays counted, so the
 * registers stay exact.
 */
interface Pending {
  key: Buffer;
  /** the first author noted and its net change: most keys of a batch have one author */
  first: string;
  firstNet: number;
  /**
   * every other note, in order (an author may appear several times); netted per author in apply()
   * only when one of them is negative. Arrays, not a Map per key: a popular key gets hundreds of
   * notes per batch, and a Map update per follow showed in the writer's profile.
   */
  authors: string[] | null;
  deltas: number[] | null;
  negative: boolean;
}

/** CounterBatch.followLog before the first follow is noted */
const NO_LOG = new Int32Array(0);

/** The pending-map slot of a (tag name, kind) pair: one Map of values per pair, so a note looks its value up as it is (no key string built per follow). */
const pairSlot = (name: string, kind: number): number => name.charCodeAt(0) * 0x10000 + kind;

export class CounterBatch {
  /** per (name, kind) pair, per tag value (64 lowercase hex) */
  private readonly pending = new Map<number, Map<string, Pending>>();
  private count = 0;
  /** the notes since mark(), so rollback() can take them back (an operation that threw); parallel arrays, no object per note */
  private readonly logP: Pending[] = [];
  private readonly logPubkey: string[] = [];
  private readonly logDelta: number[] = [];

  // noteFollows(): the follow graph's notes, kept apart from note()'s. A batch of follow lists notes
  // hundreds of thousands of follows; as note()s, each was a Map lookup by a 64-character string and
  // an author string pushed onto the followee's arrays, all held until the commit (the largest
  // share of what the writer thread's scavenges copied). Here a follow is two numbers in a typed
  // array, found by its followee's id.
  /** per (kind, followee id), its slot */
  private readonly followSlots = new Map<number, number>();
  /** per slot: the followee's pubkey (hex) and the list kind */
  private readonly slotPubkey: string[] = [];
  private readonly slotKind: number[] = [];
  /** the follows noted, two numbers each: the slot, and ±(the author's HLL point code + 1): + added, - removed */
  private followLog = NO_LOG; // made on the first noteFollows(): a transaction of notes and reactions has none
  private followLen = 0;
  /** followLen at mark(): rollback() cuts the log back to it */
  private followMark = 0;
  /** the author's point code at each NIP-45 offset 8-23 (noteFollows) */
  private readonly points = new Uint16Array(16);

  /**
   * Notes one counted entry written (+1) or removed (-1): `prefix` is its tag+kind prefix (may be a
   * scratch buffer: it is copied when kept), `name`, `value` and `kind` what it was made of.
   */
  note(prefix: Buffer, name: string, value: string, kind: number, pubkey: string, delta: 1 | -1): void {
    const p = this.pendingOf(this.pairValues(name, kind), prefix, value, kind, pubkey);
    this.add(p, pubkey, delta);
    this.logP.push(p);
    this.logPubkey.push(pubkey);
    this.logDelta.push(delta);
  }

  /** The pending notes of one (name, kind) pair in this batch, made on its first note. */
  private pairValues(name: string, kind: number): Map<string, Pending> {
    const slot = pairSlot(name, kind);
    let values = this.pending.get(slot);
    if (!values) this.pending.set(slot, (values = new Map()));
    return values;
  }

  /** The pending note of a value, made on the value's first note in this batch (its key built and copied then only). */
  private pendingOf(values: Map<string, Pending>, prefix: Buffer, value: string, kind: number, pubkey: string): Pending {
    let p = values.get(value);
    if (!p) {
      values.set(value, (p = { key: Buffer.from(prefix), first: pubkey, firstNet: 0, authors: null, deltas: null, negative: false }));
      this.count++;
    }
    return p;
  }

  /**
   * The follows of one list (kind, author) added (+1) or removed (-1): `followees` their ids and
   * `pubkeys` their pubkeys (hex), index for index. Counted like note()'s, but logged as numbers
   * (above): the author's HyperLogLog point at each of the sixteen offsets is worked out once per
   * list, and a follow takes the one its followee's offset names.
   */
  noteFollows(kind: number, author: string, followees: readonly number[], pubkeys: readonly string[], delta: 1 | -1): void {
    if (followees.length === 0) return;
    authorPoints(author, this.points);
    if (this.followLen + 2 * followees.length > this.followLog.length) {
      const log = new Int32Array(Math.max(2 * this.followLog.length, this.followLen + 2 * followees.length, 4096));
      log.set(this.followLog.subarray(0, this.followLen));
      this.followLog = log;
    }
    const log = this.followLog;
    let n = this.followLen;
    for (let i = 0; i < followees.length; i++) {
      const k = kind * 0x1_0000_0000 + followees[i]!;
      let slot = this.followSlots.get(k);
      if (slot === undefined) {
        slot = this.slotPubkey.length;
        this.followSlots.set(k, slot);
        this.slotPubkey.push(pubkeys[i]!);
        this.slotKind.push(kind);
      }
      log[n++] = slot;
      // the NIP-45 offset of a followee: 8 + its hex digit at position 32
      log[n++] = delta * (this.points[nibble(pubkeys[i]!.charCodeAt(32))]! + 1);
    }
    this.followLen = n;
  }

  private add(p: Pending, pubkey: string, delta: number): void {
    if (p.first === pubkey) p.firstNet += delta;
    else {
      if (!p.authors) {
        p.authors = [];
        p.deltas = [];
      }
      p.authors.push(pubkey);
      p.deltas!.push(delta);
      if (delta < 0) p.negative = true;
    }
  }

  /** Starts a new operation: rollback() takes back only the notes made after this. */
  mark(): void {
    this.logP.length = this.logPubkey.length = this.logDelta.length = 0;
    this.followMark = this.followLen;
  }

  /** Takes back the notes made since mark(). */
  rollback(): void {
    for (let i = this.logP.length - 1; i >= 0; i--) this.add(this.logP[i]!, this.logPubkey[i]!, -this.logDelta[i]!);
    // a slot made since mark() stays, with no notes: apply() skips it
    this.followLen = this.followMark;
    this.mark();
  }

  /** counter keys noted (each is written once in apply) */
  get size(): number {
    return this.count + this.slotPubkey.length;
  }

  /**
   * Writes the counters. `undo` gets, per counter written, its key and its previous value (undefined:
   * it did not exist), so a transaction can put them back if something after this throws.
   */
  apply(db: BinDb, undo?: CounterUndo): void {
    this.mark();
    for (const values of this.pending.values()) {
      for (const p of values.values()) this.write(db, p, undo);
    }
    this.pending.clear();
    this.count = 0;
    this.writeFollows(db, undo);
  }

  /** noteFollows()'s counters: the log grouped by slot (a counting sort), then each counter read, changed and written once. */
  private writeFollows(db: BinDb, undo?: CounterUndo): void {
    const slots = this.slotPubkey.length;
    const log = this.followLog;
    const end = this.followLen;
    if (end > 0) {
      const start = new Int32Array(slots + 1);
      for (let i = 0; i < end; i += 2) start[log[i]! + 1]!++;
      for (let s = 0; s < slots; s++) start[s + 1]! += start[s]!;
      const fill = start.slice(0, slots);
      const codes = new Int32Array(end / 2);
      for (let i = 0; i < end; i += 2) codes[fill[log[i]!]!++] = log[i + 1]!;
      for (let s = 0; s < slots; s++) {
        if (start[s] === start[s + 1]) continue; // its notes were taken back
        const key = counterKey(this.slotPubkey[s]!, this.slotKind[s]!);
        const cur = db.getBinaryFast(key);
        const c = toChange(cur);
        let delta = 0;
        for (let j = start[s]!; j < start[s + 1]!; j++) {
          const code = codes[j]!;
          if (code < 0) {
            delta--;
            c.stale = true; // the author's register stays: registers only grow (top of file)
            continue;
          }
          delta++;
          const r = (code - 1) >> 8;
          const v = (code - 1) & 0xff;
          if (v > c.registers[r]!) c.registers[r] = v;
        }
        storeChanged(db, key, cur, c, delta, undo);
      }
    }
    this.followSlots.clear();
    this.slotPubkey.length = this.slotKind.length = 0;
    this.followLen = this.followMark = 0;
  }

  private write(db: BinDb, p: Pending, undo?: CounterUndo): void {
    if (p.firstNet === 0 && !p.authors) return; // removed and re-added (a replaced follow list): no change, no read
    const cur = db.getBinaryFast(p.key);
    const c = toChange(cur);
    const offset = counterOffset(p.key);
    let delta = 0;
    let changed = false;
    const one = (pubkey: string, net: number): void => {
      if (net === 0) return; // added and removed again, or removed and re-added: no change
      changed = true;
      delta += net;
      if (net > 0) hllAddHex(c.registers, pubkey, offset);
      else c.stale = true;
    };
    one(p.first, p.firstNet);
    if (p.authors && !p.negative) {
      // only additions: each is +1 for its author (an author noted twice, e.g. two reactions, adds twice to the count; registers are idempotent)
      for (const pubkey of p.authors) one(pubkey, 1);
    } else if (p.authors) {
      const net = new Map<string, number>();
      for (let i = 0; i < p.authors.length; i++) net.set(p.authors[i]!, (net.get(p.authors[i]!) ?? 0) + p.deltas![i]!);
      for (const [pubkey, n] of net) one(pubkey, n);
    }
    if (changed) storeChanged(db, p.key, cur, c, delta, undo);
  }
}

/**
 * The scratch of a counter being changed: its registers, and its encoded value. Decoded and encoded
 * here, not in new arrays: a transaction of follow lists writes thousands of counters, and two
 * allocations each were a share of the writer's garbage collection.
 */
const scratchRegisters = new Uint8Array(HLL_REGISTERS);
const scratchValue = Buffer.allocUnsafe(COUNTER_HEADER + HLL_REGISTERS);

/** A counter's value as read, decoded for a change into the scratch registers (a new counter when it has none). */
const toChange = (cur: Uint8Array | undefined | null): Counter => (cur && cur.length >= COUNTER_HEADER ? decodeCounter(cur, scratchRegisters) : empty(scratchRegisters.fill(0)));

/**
 * Writes a changed counter: `delta` added to its count, its version bumped, removed when it counts
 * none. `cur` is its value as read (getBinaryFast: no read may come between), copied for `undo`.
 */
function storeChanged(db: BinDb, key: Buffer, cur: Buffer | undefined, c: Counter, delta: number, undo?: CounterUndo): void {
  c.count = Math.max(0, c.count + delta);
  c.version = (c.version + 1) >>> 0;
  undo?.add(key, cur);
  if (c.count === 0) db.removeSync(key);
  else db.putSync(key, encodeCounter(c, scratchValue)); // putSync in a write transaction copies it before it returns
}

const counterScratch = Buffer.allocUnsafe(MAX_TAG_PREFIX + 2);
/**
 * The follower counter's key of a pubkey (the tag+kind prefix of ('p', pubkey, kind)), in a scratch
 * buffer valid until the next call (whoever keeps it copies it).
 */
export function counterKey(pubkeyHex: string, kind: number): Buffer {
  const end = Math.abs(writeTagPrefix(counterScratch, 0, 'p', pubkeyHex));
  counterScratch.writeUInt16BE(kind, end);
  return counterScratch.subarray(0, end + 2);
}

const authorBytes = Buffer.allocUnsafe(32);
/** An author's HyperLogLog point code (nip45.ts hllPointCode) at each offset 8-23, into `into`. */
function authorPoints(pubkeyHex: string, into: Uint16Array): void {
  authorBytes.write(pubkeyHex, 0, 32, 'hex');
  for (let i = 0; i < 16; i++) into[i] = hllPointCode(authorBytes, 0, 8 + i);
}

/**
 * What a transaction's counter writes overwrote, to put back if the transaction is taken back
 * (txn.ts): the keys and previous values copied into one growing buffer, not a pair of buffers per
 * counter (a batch of follow lists writes tens of thousands, all held until the commit).
 */
export class CounterUndo {
  private bytes = Buffer.alloc(0); // grown on the first add(): most transactions of notes write few counters
  private used = 0;
  /** per write: its key's length, and its previous value's (-1: there was none) */
  private readonly lengths: number[] = [];

  add(key: Uint8Array, prev: Uint8Array | undefined): void {
    // a view of the value's own bytes: getBinaryFast's reused buffer only says its size in `length`
    // (codec.ts jsonOf), and set() copies the whole typed array
    if (prev) prev = prev.subarray(0, prev.length);
    const need = this.used + key.length + (prev?.length ?? 0);
    if (need > this.bytes.length) {
      const bytes = Buffer.allocUnsafe(Math.max(2 * this.bytes.length, need, 4096));
      this.bytes.copy(bytes, 0, 0, this.used);
      this.bytes = bytes;
    }
    this.bytes.set(key, this.used);
    this.used += key.length;
    if (prev) {
      this.bytes.set(prev, this.used);
      this.used += prev.length;
    }
    this.lengths.push(key.length, prev ? prev.length : -1);
  }

  /** Each write, newest first: its key, and its previous value (undefined: there was none). */
  back(fn: (key: Buffer, prev: Buffer | undefined) => void): void {
    let end = this.used;
    for (let i = this.lengths.length - 2; i >= 0; i -= 2) {
      const kl = this.lengths[i]!;
      const vl = this.lengths[i + 1]!;
      const v = vl < 0 ? undefined : this.bytes.subarray(end - vl, end);
      end -= Math.max(0, vl);
      fn(this.bytes.subarray(end - kl, end), v);
      end -= kl;
    }
  }

  clear(): void {
    this.used = 0;
    this.lengths.length = 0;
  }
}

/**
 * Adds `n` authors to the counter of `key` at once, their HyperLogLog registers already gathered
 * (`registers`, at the counter's offset): an import's merge (graph-spool.ts), where a transaction
 * that wrote a popular person's follower counter once per transaction now writes it once per merge.
 */
export function addRegistersToCounter(db: BinDb, key: Buffer, registers: Uint8Array, n: number): void {
  if (n === 0) return;
  const cur = db.getBinaryFast(key);
  const c = toChange(cur);
  hllMerge(c.registers, registers);
  storeChanged(db, key, cur, c, n);
}

/** Writes recomputed registers of a stale counter, unless it changed since they were computed. */
export function refreshHll(db: BinDb, key: Buffer, version: number, registers: Uint8Array): boolean {
  const cur = db.getBinary(key);
  if (!cur || cur.length < COUNTER_HEADER) return false;
  const c = decodeCounter(cur);
  if (c.version !== version || !c.stale) return false;
  db.putSync(key, encodeCounter({ count: c.count, version: (c.version + 1) >>> 0, stale: false, registers }));
  return true;
}
