// Per-connection state and the one way to send to a client, which enforces the output buffer cap:
// a reader that falls too far behind is told why and disconnected, so memory stays bounded.
import type { WebSocket } from '@trufflesuite/uws-js-unofficial';
import type { Filter } from '../nostr/filter.js';
import { noticeMessage } from '../nostr/messages.js';
import type { LiveSub } from './live-index.js';
import type { SeenSerials } from '../store/types.js';

export interface Subscription extends LiveSub<Connection> {
  /** set when the subscription is replaced, closed or its connection goes */
  abort: { aborted: boolean };
  /** live events that arrived before EOSE; sent after it (null once EOSE is out) */
  pending: Array<{ id: string; json: string; serial?: number }> | null;
  /**
   * What the scan covered. A commit is visible to readers before its flush completes and fan-out
   * comes after the flush, so a new event can be both in the scan and fanned out: it is sent
   * live only when the scan did not cover it (see SeenSerials).
   */
  seen: SeenSerials | null;
  filters: Filter[];
}

let nextId = 1;

export class Connection {
  readonly id = nextId++;
  readonly subs = new Map<string, Subscription>();
  readonly authed = new Set<string>();
  ws: WebSocket<{ conn: Connection }> | null = null;
  closed = false;
  /** requests whose answer is still being computed (REQ scans, COUNTs) */
  busy = 0;

  constructor(readonly ip: string, readonly challenge: string, private maxBufferedBytes: number, private onSlow: (c: Connection) => void) {}

  /** Sends text; returns false when the connection is gone or was just closed for being slow. */
  send(text: string): boolean {
    const ws = this.ws;
    if (this.closed || !ws) return false;
    ws.send(text, false, false);
    if (ws.getBufferedAmount() > this.maxBufferedBytes) {
      this.onSlow(this);
      ws.send(noticeMessage('error: connection closed: too much unsent output (slow reader)'), false, false);
      this.close(1008, 'slow reader');
      return false;
    }
    return true;
  }

  /** Runs `fn` with the socket corked, so many sends leave in one syscall. */
  cork(fn: () => void): void {
    if (this.closed || !this.ws) return;
    this.ws.cork(fn);
  }

  close(code = 1000, reason = ''): void {
    if (this.closed) return;
    const ws = this.ws;
    this.markClosed();
    try { ws?.end(code, reason); } catch { /* already closed */ }
  }

  /** Called once the socket is gone: stop every running scan. */
  markClosed(): void {
    this.closed = true;
    for (const s of this.subs.values()) s.abort.aborted = true;
  }
}
