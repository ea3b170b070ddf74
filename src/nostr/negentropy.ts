// Negentropy set reconciliation, protocol version 1 (NIP-77 appendix; wire format of the reference
// implementations, hoytech/negentropy C++ and JS). Pure: no I/O.
//
// A message is the version byte 0x61 followed by ranges that together cover the whole
// (timestamp, id) space in ascending order. Each range is its exclusive upper bound (timestamp as
// a delta from the previous bound, plus the shortest id prefix that separates the items on either
// side), a mode and a payload: Skip (nothing to do), Fingerprint (16 bytes over the sender's items
// in the range) or IdList (every id the sender has there). The initiator opens with its whole set
// split into 16 fingerprinted buckets (or one id list below 32 items); each side answers a
// mismatching fingerprint by splitting that range again, and an id list from the responder lets
// the initiator see exactly which ids it has that the responder lacks and which it needs.
//
// One deliberate difference from the reference: when an answer would pass the frame size limit
// while splitting a range, the reference ends the message with a fingerprint of the items *after*
// that range, covering on the wire everything from the last bound it emitted; if the other side
// holds nothing in the dropped range and we do, the fingerprints then agree and our items there are
// never reported. Here the closing fingerprint covers exactly the span its bounds name (emitting the
// pending Skip first), so a cut message is always followed up. Messages stay byte-for-byte those of
// the reference whenever no frame limit is reached.
import {
  bytesToHex,
  FINGERPRINT_SIZE,
  ID_SIZE,
  NegentropyError,
  NegentropyStorage,
  writeVarint,
  type Bound,
} from './negentropy-storage.js';

export { NegentropyError, NegentropyStorage, type Bound } from './negentropy-storage.js';

export const PROTOCOL_VERSION = 0x61;
/** The reserved "infinity" timestamp (2^64-1 on the wire: encoded as 0). */
export const INFINITY_TIMESTAMP = Number.POSITIVE_INFINITY;
/** The smallest frame size limit the reference accepts. */
export const MIN_FRAME_SIZE_LIMIT = 4096;

const enum Mode {
  Skip = 0,
  Fingerprint = 1,
  IdList = 2,
}

/** Ranges of fewer items than this are sent as id lists; larger ones are split into BUCKETS fingerprints. */
const BUCKETS = 16;
/** room kept under the frame limit for the closing range (as the reference) */
const FRAME_MARGIN = 200;

const EMPTY = new Uint8Array(0);
const ZERO_BOUND: Bound = { timestamp: 0, id: EMPTY };
const INFINITY_BOUND: Bound = { timestamp: INFINITY_TIMESTAMP, id: EMPTY };

/** What one round taught the initiator: ids only it has, ids only the other side has. */
export interface InitiatorRound {
  /** the next message to send, or null: reconciliation is complete */
  next: Uint8Array | null;
  /** ids (hex) we have and the other side lacks */
  have: string[];
  /** ids (hex) the other side has and we lack */
  need: string[];
}

export class Negentropy {
  private initiator = false;
  private lastTimestampIn = 0;
  private lastTimestampOut = 0;

  /** `frameSizeLimit`: largest message this side produces, bytes (0 = no limit; else at least 4096). */
  constructor(
    private readonly storage: NegentropyStorage,
    private readonly frameSizeLimit = 0,
  ) {
    if (frameSizeLimit !== 0 && frameSizeLimit < MIN_FRAME_SIZE_LIMIT) throw new NegentropyError('frameSizeLimit too small');
  }

  get isInitiator(): boolean {
    return this.initiator;
  }

  /** The initiator's first message: the whole set, split. */
  initiate(): Uint8Array {
    if (this.initiator) throw new NegentropyError('already initiated');
    this.initiator = true;
    this.lastTimestampOut = 0;
    const out = new Writer();
    out.byte(PROTOCOL_VERSION);
    this.splitRange(0, this.storage.size, INFINITY_BOUND, out);
    return out.bytes();
  }

  /** Responder: the answer to one message from the initiator (never null: the responder always answers). */
  reconcile(query: Uint8Array): Uint8Array {
    if (this.initiator) throw new NegentropyError('initiator must use reconcileAsInitiator');
    return this.run(query, null);
  }

  /** Initiator: reads the responder's answer; returns what it learned and the next message (null when done). */
  reconcileAsInitiator(query: Uint8Array): InitiatorRound {
    if (!this.initiator) throw new NegentropyError('not the initiator: call initiate() first');
    const round: InitiatorRound = { next: null, have: [], need: [] };
    const out = this.run(query, round);
    round.next = out.length === 1 ? null : out;
    return round;
  }

  private run(query: Uint8Array, round: InitiatorRound | null): Uint8Array {
    this.lastTimestampIn = 0;
    this.lastTimestampOut = 0;
    const q = new Reader(query);
    const out = new Writer();
    out.byte(PROTOCOL_VERSION);

    const version = q.byte();
    if (version < 0x60 || version > 0x6f) throw new NegentropyError('invalid negentropy protocol version byte');
    if (version !== PROTOCOL_VERSION) {
      if (round) throw new NegentropyError(`unsupported negentropy protocol version requested: ${version - 0x60}`);
      return out.bytes(); // the responder names the version it speaks; the initiator may retry with it
    }

    const storage = this.storage;
    const size = storage.size;
    let prevBound = ZERO_BOUND;
    let prevIndex = 0;
    let skip = false;

    while (q.remaining > 0) {
      const outTsBefore = this.lastTimestampOut;
      const o = new Writer();
      const flushSkip = (w: Writer) => {
        if (!skip) return;
        skip = false;
        this.encodeBound(w, prevBound);
        w.varint(Mode.Skip);
      };

      const currBound = this.decodeBound(q);
      const mode = q.varint();
      const lower = prevIndex;
      let upper = storage.findLowerBound(prevIndex, size, currBound);

      if (mode === Mode.Skip) {
        skip = true;
      } else if (mode === Mode.Fingerprint) {
        const theirs = q.bytes(FINGERPRINT_SIZE);
        const ours = storage.fingerprint(lower, upper);
        if (!equalBytes(theirs, ours)) {
          const skipPending = skip;
          flushSkip(o);
          this.splitRange(lower, upper, currBound, o);
          if (this.exceeded(out.length + o.length)) {
            // Too big to add: drop this range's answer and close the message with one fingerprint
            // over everything from prevBound on. What was emitted so far ends at prevBound, or
            // at an earlier bound with a Skip pending up to prevBound: emit that Skip first.
            this.lastTimestampOut = outTsBefore;
            if (skipPending) {
              this.encodeBound(out, prevBound);
              out.varint(Mode.Skip);
            }
            this.closeWithFingerprint(out, lower);
            break;
          }
        } else {
          skip = true;
        }
      } else if (mode === Mode.IdList) {
        const n = q.varint();
        if (n * ID_SIZE > q.remaining) throw new NegentropyError('parse ends prematurely');
        if (round) {
          const theirs = new Map<string, true>();
          for (let i = 0; i < n; i++) theirs.set(bytesToHex(q.bytes(ID_SIZE)), true);
          skip = true;
          for (let i = lower; i < upper; i++) {
            const k = storage.idHex(i);
            if (!theirs.delete(k)) round.have.push(k);
          }
          for (const k of theirs.keys()) round.need.push(k);
        } else {
          q.skip(n * ID_SIZE); // the responder answers with its own list; the initiator compares
          flushSkip(o);
          const ids = new Writer();
          let count = 0;
          let endBound = currBound;
          for (let i = lower; i < upper; i++) {
            if (this.exceeded(out.length + o.length + ids.length)) {
              endBound = { timestamp: storage.timestamp(i), id: storage.id(i) };
              upper = i; // the closing fingerprint below starts here
              break;
            }
            ids.raw(storage.id(i));
            count++;
          }
          this.encodeBound(o, endBound);
          o.varint(Mode.IdList);
          o.varint(count);
          o.raw(ids.bytes());
        }
      } else {
        throw new NegentropyError('unexpected mode');
      }

      if (this.exceeded(out.length + o.length)) {
        // Only an id list can get here (a split range that does not fit is handled above): it was
        // cut at `upper`, or ends exactly at it; the rest of the set goes as one fingerprint.
        out.raw(o.bytes());
        this.closeWithFingerprint(out, upper);
        break;
      }
      out.raw(o.bytes());
      prevIndex = upper;
      prevBound = currBound;
    }
    return out.bytes();
  }

  /** Ends a message with [.., infinity) as one fingerprint over the items from `from` on. */
  private closeWithFingerprint(out: Writer, from: number): void {
    this.encodeBound(out, INFINITY_BOUND);
    out.varint(Mode.Fingerprint);
    out.raw(this.storage.fingerprint(from, this.storage.size));
  }

  private splitRange(lower: number, upper: number, upperBound: Bound, o: Writer): void {
    const storage = this.storage;
    const n = upper - lower;
    if (n < BUCKETS * 2) {
      this.encodeBound(o, upperBound);
      o.varint(Mode.IdList);
      o.varint(n);
      for (let i = lower; i < upper; i++) o.raw(storage.id(i));
      return;
    }
    const perBucket = Math.floor(n / BUCKETS);
    const withExtra = n % BUCKETS;
    let curr = lower;
    for (let b = 0; b < BUCKETS; b++) {
      const bucketSize = perBucket + (b < withExtra ? 1 : 0);
      const fp = storage.fingerprint(curr, curr + bucketSize);
      curr += bucketSize;
      const next = curr === upper ? upperBound : this.minimalBound(curr - 1, curr);
      this.encodeBound(o, next);
      o.varint(Mode.Fingerprint);
      o.raw(fp);
    }
  }

  /** The shortest bound above item `prev` and at or below item `curr` (adjacent items). */
  private minimalBound(prev: number, curr: number): Bound {
    const s = this.storage;
    const ts = s.timestamp(curr);
    if (ts !== s.timestamp(prev)) return { timestamp: ts, id: EMPTY };
    const a = s.id(prev);
    const b = s.id(curr);
    let shared = 0;
    while (shared < ID_SIZE && a[shared] === b[shared]) shared++;
    return { timestamp: ts, id: b.subarray(0, shared + 1) };
  }

  private exceeded(n: number): boolean {
    return this.frameSizeLimit !== 0 && n > this.frameSizeLimit - FRAME_MARGIN;
  }

  private decodeBound(q: Reader): Bound {
    let ts = q.varint();
    ts = ts === 0 ? INFINITY_TIMESTAMP : ts - 1;
    if (this.lastTimestampIn === INFINITY_TIMESTAMP || ts === INFINITY_TIMESTAMP) ts = INFINITY_TIMESTAMP;
    else ts += this.lastTimestampIn;
    this.lastTimestampIn = ts;
    const len = q.varint();
    if (len > ID_SIZE) throw new NegentropyError('bound key too long');
    return { timestamp: ts, id: q.bytes(len) };
  }

  private encodeBound(w: Writer, b: Bound): void {
    if (b.timestamp === INFINITY_TIMESTAMP) {
      this.lastTimestampOut = INFINITY_TIMESTAMP;
      w.varint(0);
    } else {
      const delta = b.timestamp - this.lastTimestampOut;
      // only a message whose bounds go backwards could ask for this; never write a broken varint
      if (!(delta >= 0)) throw new NegentropyError('bounds out of order');
      this.lastTimestampOut = b.timestamp;
      w.varint(delta + 1);
    }
    w.varint(b.id.length);
    w.raw(b.id);
  }
}

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Reads a message; every read checks the remaining length (untrusted input). */
class Reader {
  private pos = 0;
  constructor(private readonly buf: Uint8Array) {}

  get remaining(): number {
    return this.buf.length - this.pos;
  }

  byte(): number {
    if (this.pos >= this.buf.length) throw new NegentropyError('parse ends prematurely');
    return this.buf[this.pos++];
  }

  bytes(n: number): Uint8Array {
    if (n > this.remaining) throw new NegentropyError('parse ends prematurely');
    const b = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return b;
  }

  skip(n: number): void {
    this.bytes(n);
  }

  /** A varint of at most 10 digits (64 bits); larger values lose precision beyond 2^53, which only bounds beyond any stored timestamp can have. */
  varint(): number {
    let n = 0;
    for (let digits = 0; ; digits++) {
      if (digits >= 10) throw new NegentropyError('varint too long');
      const b = this.byte();
      n = n * 128 + (b & 0x7f);
      if ((b & 0x80) === 0) return n;
    }
  }
}

/** A growing byte buffer. */
class Writer {
  private buf = new Uint8Array(256);
  length = 0;

  private room(n: number): void {
    if (this.length + n <= this.buf.length) return;
    const next = new Uint8Array(Math.max(this.buf.length * 2, this.length + n));
    next.set(this.buf.subarray(0, this.length));
    this.buf = next;
  }

  byte(b: number): void {
    this.room(1);
    this.buf[this.length++] = b;
  }

  raw(b: Uint8Array): void {
    this.room(b.length);
    this.buf.set(b, this.length);
    this.length += b.length;
  }

  varint(n: number): void {
    this.room(10);
    this.length = writeVarint(this.buf, this.length, n);
  }

  bytes(): Uint8Array {
    return this.buf.subarray(0, this.length);
  }
}
