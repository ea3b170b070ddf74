// Whose event each frame of a query's answer is, and when it was made, read from the frame's bytes
// without JSON.parse: the lookup on a miss (nostr/lookup-miss.ts) needs only pubkey, kind and
// created_at of the answer, and an answer of 1,500 follow lists is tens of megabytes.
//
// Stored JSON is the ingest path's canonical form ({"id":…,"pubkey":…,"created_at":…,…}: key order
// fixed, no whitespace), so the first `"pubkey":"` and `"created_at":` of a frame are its keys: a
// string value cannot hold an unescaped quote, and pubkey and created_at come before tags and content.
import { frameCount, frameJsonEnd, frameJsonStart, type EventFrames } from './frames.js';
import type { HeldEvent } from './lookup-miss.js';

const PUBKEY = Buffer.from('"pubkey":"');
const CREATED = Buffer.from('"created_at":');

/** pubkey, kind and created_at of the frames whose kind is in `kinds`. */
export function frameHeads(f: EventFrames, kinds: ReadonlySet<number>): HeldEvent[] {
  const out: HeldEvent[] = [];
  const n = frameCount(f);
  const buf = Buffer.from(f.buf.buffer, f.buf.byteOffset, f.buf.byteLength);
  for (let i = 0; i < n; i++) {
    const kind = f.kinds[i]!;
    if (!kinds.has(kind)) continue;
    const start = frameJsonStart(f, i);
    const end = frameJsonEnd(f, i);
    const p = buf.indexOf(PUBKEY, start);
    const c = buf.indexOf(CREATED, start);
    if (p < 0 || c < 0 || p + PUBKEY.length + 64 > end || c >= end) continue;
    const pubkey = buf.toString('latin1', p + PUBKEY.length, p + PUBKEY.length + 64);
    let created = 0;
    for (let j = c + CREATED.length; j < end; j++) {
      const d = buf[j]! - 48;
      if (d < 0 || d > 9) break;
      created = created * 10 + d;
    }
    out.push({ pubkey, kind, created_at: created });
  }
  return out;
}

const ID = '{"id":"'.length;

/** The id of frame i's event: the canonical JSON's first key (above). */
export function frameId(f: EventFrames, i: number): string {
  const at = frameJsonStart(f, i) + ID;
  return Buffer.from(f.buf.buffer, f.buf.byteOffset + at, 64).toString('latin1');
}
