// The stored value of one event: a packed binary header followed by the event's JSON bytes
// (strfry's PackedEvent idea). Queries read id/pubkey/created_at/kind/expiration from fixed
// offsets without JSON.parse, and send the JSON bytes exactly as they were received.
//
// Layout (all integers big-endian):
//   0      flags      bit 0: an expiration field follows the fixed part
//   1..32  id         32 bytes
//   33..64 pubkey     32 bytes
//   65..68 created_at uint32
//   69..70 kind       uint16
//   71..76 expiration uint48 (only when flags & 1)
//   ...    the event's JSON text, UTF-8
import type { NostrEvent } from '../nostr/event.js';

export const FLAG_EXPIRATION = 1;
export const OFF_ID = 1;
export const OFF_PUBKEY = 33;
export const OFF_CREATED = 65;
export const OFF_KIND = 69;
export const FIXED_HEADER = 71;
const EXP_BYTES = 6;

/** created_at is stored in 4 bytes (keys stay short); later timestamps (after 2106) are refused. */
export const MAX_CREATED_AT = 0xffffffff;
/** Expirations beyond 48 bits are clamped: they never come. */
const MAX_EXPIRATION = 2 ** 48 - 1;

export interface Header {
  /** lowercase hex */
  id: string;
  /** lowercase hex */
  pubkey: string;
  created_at: number;
  kind: number;
  /** NIP-40 expiration, or null */
  expiration: number | null;
  /** offset where the JSON bytes start */
  jsonStart: number;
}

/** Packs header + JSON. `expiration` is the event's parsed NIP-40 expiration (or null). */
export function encodeValue(ev: NostrEvent, json: string, expiration: number | null): Buffer {
  const hasExp = expiration !== null;
  const headerLen = FIXED_HEADER + (hasExp ? EXP_BYTES : 0);
  const jsonLen = Buffer.byteLength(json, 'utf8');
  const buf = Buffer.allocUnsafe(headerLen + jsonLen);
  buf[0] = hasExp ? FLAG_EXPIRATION : 0;
  buf.write(ev.id, OFF_ID, 32, 'hex');
  buf.write(ev.pubkey, OFF_PUBKEY, 32, 'hex');
  buf.writeUInt32BE(ev.created_at, OFF_CREATED);
  buf.writeUInt16BE(ev.kind, OFF_KIND);
  if (hasExp) buf.writeUIntBE(Math.min(expiration, MAX_EXPIRATION), FIXED_HEADER, EXP_BYTES);
  buf.write(json, headerLen, jsonLen, 'utf8');
  return buf;
}

export const headerLength = (buf: Uint8Array): number => (buf[0] & FLAG_EXPIRATION ? FIXED_HEADER + EXP_BYTES : FIXED_HEADER);

export const createdAtOf = (buf: Buffer): number => buf.readUInt32BE(OFF_CREATED);
export const kindOf = (buf: Buffer): number => buf.readUInt16BE(OFF_KIND);
export const expirationOfValue = (buf: Buffer): number | null =>
  buf[0] & FLAG_EXPIRATION ? buf.readUIntBE(FIXED_HEADER, EXP_BYTES) : null;
export const idHexOf = (buf: Buffer): string => buf.toString('hex', OFF_ID, OFF_ID + 32);
export const pubkeyHexOf = (buf: Buffer): string => buf.toString('hex', OFF_PUBKEY, OFF_PUBKEY + 32);
// The end is explicit: lmdb's getBinaryFast hands out one reused buffer whose `length` property is
// set to the value's size, and Node 24's Buffer methods read to the real end of the memory when no
// end is given (Node 20 and 22 stop at `length`).
export const jsonOf = (buf: Buffer): string => buf.toString('utf8', headerLength(buf), buf.length);

/** The whole header decoded (for tests and the write rules; scans read single fields). */
export function decodeHeader(buf: Buffer): Header {
  return {
    id: idHexOf(buf),
    pubkey: pubkeyHexOf(buf),
    created_at: createdAtOf(buf),
    kind: kindOf(buf),
    expiration: expirationOfValue(buf),
    jsonStart: headerLength(buf),
  };
}

/** The stored event, parsed from its JSON bytes. */
export function decodeEvent(buf: Buffer): NostrEvent {
  return JSON.parse(jsonOf(buf)) as NostrEvent;
}
