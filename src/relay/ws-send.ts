// Sends one text message on a uWS socket, working around a bug of the uWebSockets.js build that
// runs on Node 20 (@trufflesuite/uws-js-unofficial 20.30): a message of 16 KiB or more sent while
// nothing is buffered goes out in one writev of header and payload, and when the kernel takes less
// than the header, that build buffers the rest of the header and drops the payload. The byte
// stream is then broken: the client reads the next frame's bytes as this one's payload and fails
// ("Invalid WebSocket frame: RSV2 and RSV3 must be clear"). uWebSockets fixed it upstream in 2023
// (the newer build used on Node 22 and 24 has the fix). Measured: the directory benchmark's
// followers shape at 600,000 events (500 follow lists of up to 55 KB per answer, 8 readers) broke
// 2-7 connections in 20 s on Node 20, none with a workaround or on Node 24 (bench/RESULTS.md).
//
// uWS takes that direct write only for a message it is not asked to compress. So on that build a
// large message is sent with the compress hint: uWS then writes it through its ordinary buffered
// path, and on a connection that did not negotiate permessage-deflate it drops the hint and sends
// the frame as it is ('hinted'). A connection that did negotiate it would get the message
// compressed instead, so there the message goes out fragmented (RFC 6455 5.4: a first frame and
// continuation frames under 16 KiB, which every WebSocket client reassembles; 'fragments').
// Fragments cost both ends: each is a send here, and the client copies them together again
// (the followers shape, alternated: 209-219 q/s with whole frames, 186-209 with fragments, and the
// p99 time to EOSE 65 ms against 112-121 ms).
import type { WebSocket } from '@trufflesuite/uws-js-unofficial';
import { frameAt, lentFrame, type EventFrames } from '../nostr/frames.js';

/** uWS's threshold for the direct write (WebSocket::send), in payload bytes */
const DIRECT_WRITE_BYTES = 16 * 1024;
/** fragment size: UTF-8 bytes of a Uint8Array message */
const FRAGMENT_BYTES = 15 * 1024;
/** fragment size of a string message in UTF-16 units: at most 3 UTF-8 bytes each, so under 16 KiB */
const FRAGMENT_UNITS = 5 * 1024;

type Socket = Pick<WebSocket<unknown>, 'send' | 'sendFirstFragment' | 'sendFragment' | 'sendLastFragment'>;

/** How a message of 16 KiB or more goes out on one connection (above). */
export type LargeSend = 'frame' | 'hinted' | 'fragments';

/**
 * The way for a connection: whole frames on a fixed build; on the affected one, hinted unless the
 * client offered permessage-deflate (its Sec-WebSocket-Extensions header), which uWS then accepts.
 */
export function largeSendFor(affectedBuild: boolean, extensions: string): LargeSend {
  if (!affectedBuild) return 'frame';
  return /permessage-deflate/i.test(extensions) ? 'fragments' : 'hinted';
}

/** Sends `text` as one text message, a large one the connection's way (above). */
export function sendText(ws: Socket, text: string | Uint8Array, large: LargeSend): void {
  if (large === 'frame' || !isLarge(text)) {
    ws.send(text, false, false);
    return;
  }
  if (large === 'hinted') {
    ws.send(text, false, true);
    return;
  }
  const parts = typeof text === 'string' ? stringParts(text) : byteParts(text);
  ws.sendFirstFragment(parts[0]!, false, false);
  for (let i = 1; i < parts.length - 1; i++) ws.sendFragment(parts[i]!, false);
  ws.sendLastFragment(parts[parts.length - 1]!, false);
}

function isLarge(text: string | Uint8Array): boolean {
  if (typeof text !== 'string') return text.byteLength >= DIRECT_WRITE_BYTES;
  // under 16 KiB / 3 units no string can reach 16 KiB of UTF-8
  return text.length * 3 >= DIRECT_WRITE_BYTES && Buffer.byteLength(text) >= DIRECT_WRITE_BYTES;
}

function byteParts(b: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let o = 0; o < b.byteLength; o += FRAGMENT_BYTES) out.push(b.subarray(o, Math.min(b.byteLength, o + FRAGMENT_BYTES)));
  return out;
}

/** Splits at most every FRAGMENT_UNITS units, never between the two halves of a surrogate pair. */
function stringParts(s: string): string[] {
  const out: string[] = [];
  let o = 0;
  while (o < s.length) {
    let end = Math.min(s.length, o + FRAGMENT_UNITS);
    const last = s.charCodeAt(end - 1);
    if (end < s.length && last >= 0xd800 && last <= 0xdbff) end--; // a high surrogate: keep it with its low half
    out.push(s.slice(o, end));
    o = end;
  }
  return out;
}

/**
 * Sends a REQ answer's frames but those `skip` marks, each as its own message. Lent frames (a
 * kept answer, EventFrames.lent) get `prefix` written into their slot right before uWS copies
 * them, so one answer lent to many REQs at once carries each REQ's subscription id.
 */
export function sendAnswerFrames(ws: Socket, frames: EventFrames, prefix: Uint8Array, skip: Uint8Array | null, large: LargeSend): void {
  const n = frames.ends.length;
  const lent = frames.lent !== undefined;
  for (let i = 0; i < n; i++) {
    if (skip && skip[i]) continue;
    sendText(ws, lent ? lentFrame(frames, i, prefix) : frameAt(frames, i), large);
  }
}
