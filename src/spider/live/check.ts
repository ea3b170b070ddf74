// What a live remote may send on its subscription, checked before anything else sees the event:
// the shape of a Nostr event, the filter we asked for (kinds and since), and a date no further
// ahead than maxFuture. A remote that breaks any of these is lying about what it serves and is
// cut off (remote.ts); its id and signature are left to the one ingest path, which refuses a
// forgery with an `invalid:` status that also cuts the remote off. Pure: no I/O.
import { structureError, type NostrEvent } from '../../nostr/event.js';
import { matchFilter, type Filter } from '../../nostr/filter.js';

export type LiveFault = 'oversized' | 'shape' | 'mismatch' | 'future';

export interface LiveCheck {
  ev?: NostrEvent;
  fault?: LiveFault;
  detail?: string;
}

export function checkLiveEvent(raw: unknown, bytes: number, filter: Filter, nowSec: number, maxFutureSec: number, maxEventBytes: number): LiveCheck {
  // the client drops a frame above its budget unparsed and hands us undefined
  if (raw === undefined || bytes > maxEventBytes + 200) return { fault: 'oversized', detail: `a frame of ${bytes} bytes` };
  const shape = structureError(raw);
  if (shape) return { fault: 'shape', detail: shape };
  const ev = raw as NostrEvent;
  if (!matchFilter(filter, ev)) return { fault: 'mismatch', detail: `kind ${ev.kind} at ${ev.created_at} does not match the subscription` };
  if (ev.created_at > nowSec + maxFutureSec) return { fault: 'future', detail: `created_at ${ev.created_at} is ${ev.created_at - nowSec} s ahead` };
  return { ev };
}

/**
 * Events per minute without a per-event record: the count of the current minute and of the one
 * before, the rate read as the previous minute's count (or the current one's in the first minute).
 */
export class MinuteRate {
  private minute = -1;
  private current = 0;
  private previous = 0;

  add(nowMs: number): void {
    this.roll(nowMs);
    this.current++;
  }

  perMinute(nowMs: number): number {
    this.roll(nowMs);
    // a rough sliding window: the part of the previous minute still inside the last 60 s, plus this one
    const into = (nowMs % 60_000) / 60_000;
    return Math.round(this.previous * (1 - into) + this.current);
  }

  private roll(nowMs: number): void {
    const m = Math.floor(nowMs / 60_000);
    if (m === this.minute) return;
    this.previous = m === this.minute + 1 ? this.current : 0;
    this.current = 0;
    this.minute = m;
  }
}
