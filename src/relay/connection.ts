// Per-connection state and the one way to send to a client, which enforces the output buffer caps
// (per connection and per address, output-budget.ts): a reader that falls too far behind is told
// why and disconnected, so memory stays bounded.
import type { WebSocket } from '@trufflesuite/uws-js-unofficial';
import { sendAnswerFrames, sendText, type LargeSend } from './ws-send.js';
import { framesSentBytes, type EventFrames } from '../nostr/frames.js';
import type { Filter } from '../nostr/filter.js';
import { noticeMessage } from '../nostr/messages.js';
import type { LiveSub } from './live-index.js';
import type { SeenSerials } from '../store/types.js';
import { addressKey } from '../policy/cidr.js';
import type { OutputBudget, OutputHolder, SlowReason } from './output-budget.js';
import type { Release } from './policy/budgets.js';

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
  /** the ids a stored answer in several pieces sent (handlers/req.ts), else null: a live event among them is not sent again */
  sent: Set<string> | null;
  filters: Filter[];
  /** gives back what the subscription's filters were charged (policy/budgets.ts) */
  release: Release;
}

let nextId = 1;

/** A REQ answer's frames in the outbox (Connection.sendAnswer). */
interface Answer {
  frames: EventFrames;
  prefix: Uint8Array;
  skip: Uint8Array | null;
}

// Output is queued per connection and written once per turn of the event loop, inside one cork:
// the OKs of a committed write batch, a REQ's results and live events then leave in one syscall
// per connection instead of one each (per-message corking was ~9% of the main thread in ingest).
const dirty = new Set<Connection>();
let flushScheduled = false;
function flushAll(): void {
  flushScheduled = false;
  for (const c of dirty) c.flush();
  dirty.clear();
}

export class Connection implements OutputHolder {
  readonly id = nextId++;
  readonly subs = new Map<string, Subscription>();
  readonly authed = new Set<string>();
  /** the NIP-42 challenge went out (on connect, or with the first auth-required: answer) */
  challengeSent = false;
  /** what per-client limits count by: the IPv4 address or the IPv6 /64 */
  readonly key: string;
  ws: WebSocket<{ conn: Connection }> | null = null;
  closed = false;
  /** requests whose answer is still being computed (REQ scans, COUNTs) */
  busy = 0;
  /** unsent bytes last accounted to the output budget */
  accounted = 0;

  /** `large`: how messages of 16 KiB or more go out on this connection's uWS build (ws-send.ts) */
  constructor(readonly ip: string, readonly challenge: string, private output: OutputBudget, private onSlow: (c: Connection, why: SlowReason) => void, private readonly large: LargeSend = 'frame') {
    this.key = addressKey(ip);
  }

  private outbox: Array<string | Uint8Array | Answer> = [];
  private outboxBytes = 0;
  /** bytes of REQ answers let past the connection's cap while they drain (output-budget.ts) */
  private answerCredit = 0;

  /** The socket is open: from now on this connection's output counts toward its address. */
  attach(ws: WebSocket<{ conn: Connection }>): void {
    this.ws = ws;
    this.output.add(this);
  }

  /**
   * Queues a text message for this turn's flush: a string, or its UTF-8 bytes (a ready frame from a
   * query, sent without making a string). Returns false when the connection is gone, or was just
   * closed because its unsent output (in uWS and queued here) passed a cap: a slow reader.
   */
  send(text: string | Uint8Array): boolean {
    return this.queue(text, typeof text === 'string' ? text.length : text.byteLength);
  }

  /**
   * Queues a REQ answer's frames (a query's, or a kept answer lent to this REQ: ws-send.ts
   * sendAnswerFrames), `prefix` being the REQ's `["EVENT","<subid>",` and `skip` the frames this
   * reader may not see. The connection's cap lets the answer through while it drains (the credit
   * shrinks with what is still unsent, refreshOutput); the address cap does not. The caller
   * flushes before it releases the frames. False as send().
   */
  sendAnswer(frames: EventFrames, prefix: Uint8Array, skip: Uint8Array | null): boolean {
    const bytes = framesSentBytes(frames, prefix);
    this.answerCredit += bytes;
    return this.queue({ frames, prefix, skip }, bytes);
  }

  private queue(item: string | Uint8Array | Answer, bytes: number): boolean {
    const ws = this.ws;
    if (this.closed || !ws) return false;
    this.outbox.push(item);
    this.outboxBytes += bytes;
    const over = this.output.account(this, this.outboxBytes + ws.getBufferedAmount(), this.answerCredit);
    if (over) {
      (over.close as Connection).closeSlow(over.why);
      if (over.close === this) return false;
    }
    if (this.outbox.length === 1) {
      dirty.add(this);
      if (!flushScheduled) {
        flushScheduled = true;
        setImmediate(flushAll);
      }
    }
    return true;
  }

  /** Writes the queued output in one corked burst. */
  flush(): void {
    const ws = this.ws;
    const out = this.outbox;
    if (out.length === 0 || !ws) return;
    this.outbox = [];
    this.outboxBytes = 0;
    try {
      ws.cork(() => {
        for (const item of out) {
          if (typeof item === 'string' || item instanceof Uint8Array) sendText(ws, item, this.large);
          else sendAnswerFrames(ws, item.frames, item.prefix, item.skip, this.large);
        }
      });
    } catch {
      /* the socket closed under us: nothing left to deliver */
    }
    this.refreshOutput();
  }

  /** Re-reads what uWS still holds for this connection (after a flush, on drain). */
  refreshOutput(): void {
    if (this.closed || !this.ws) return;
    try {
      const unsent = this.outboxBytes + this.ws.getBufferedAmount();
      this.answerCredit = Math.min(this.answerCredit, unsent);
      this.output.account(this, unsent, this.answerCredit);
      this.wakeDrained(unsent);
    } catch {
      /* closed under us */
    }
  }

  /** The most unsent output this connection may hold (limits.maxBufferedBytes). */
  get outputCap(): number {
    return this.output.perConnection;
  }

  /** What this connection's address may still have read for it (OutputBudget.room). */
  addressRoom(): number {
    return this.output.room(this.key);
  }

  /**
   * Reserves `bytes` of the address's room for an answer piece being read; the function gives them
   * back (once the piece is queued, where they count as unsent).
   */
  reserveOutput(bytes: number): () => void {
    return this.output.reserve(this.key, bytes);
  }

  /** Output not yet written to the socket: queued for this turn's flush and buffered in uWS. */
  unsent(): number {
    if (this.closed || !this.ws) return 0;
    try { return this.outboxBytes + this.ws.getBufferedAmount(); } catch { return 0; }
  }

  /** Answer pieces waiting for the client to read (handlers/answer-pieces.ts). */
  private drainWaiters: Array<{ bytes: number; done(open: boolean): void }> = [];

  /**
   * Resolves true once at most `bytes` are unsent (read again on every drain and flush, and each
   * second in case uWS reports no drain), false when the connection closes first.
   */
  drained(bytes: number): Promise<boolean> {
    if (this.closed) return Promise.resolve(false);
    if (this.unsent() <= bytes) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setInterval(() => this.wakeDrained(this.unsent()), 1000);
      timer.unref();
      this.drainWaiters.push({ bytes, done: (open) => { clearInterval(timer); resolve(open); } });
    });
  }

  private wakeDrained(unsent: number): void {
    if (this.drainWaiters.length === 0) return;
    const open = !this.closed;
    this.drainWaiters = this.drainWaiters.filter((w) => {
      if (open && unsent > w.bytes) return true;
      w.done(open);
      return false;
    });
  }

  /** Tells the client why and closes it: its unsent output passed a cap. */
  closeSlow(why: SlowReason): void {
    if (this.closed) return;
    this.onSlow(this, why);
    this.outbox = [noticeMessage(why === 'connection'
      ? 'error: connection closed: too much unsent output (slow reader)'
      : 'error: connection closed: too much unsent output on the connections of your IP address (slow reader)')];
    this.outboxBytes = 0;
    this.close(1008, 'slow reader');
  }

  close(code = 1000, reason = ''): void {
    if (this.closed) return;
    const ws = this.ws;
    this.flush(); // what was queued before the close (a NOTICE, CLOSED messages) still goes out
    this.markClosed();
    try { ws?.end(code, reason); } catch { /* already closed */ }
  }

  /** Called once the socket is gone: stop every running scan. */
  markClosed(): void {
    this.closed = true;
    this.outbox = []; // the socket is gone (or its close was flushed): nothing more to write
    this.outboxBytes = 0;
    this.output.remove(this);
    for (const s of this.subs.values()) s.abort.aborted = true;
    this.wakeDrained(0);
  }
}
