// The first gate of every WebSocket message: rateLimits.messagesPerIp and bytesPerIp, per address,
// before it is decoded or parsed, so a flood costs little more than its reading. A message over
// them is dropped; the connection is told so at most once a second.
import type { Config } from '../../config.js';
import { noticeMessage } from '../../nostr/messages.js';
import { KeyedBuckets } from '../../lib/token-bucket.js';

/** What the gate needs of a connection. */
export interface GatedConn {
  /** address key (policy/cidr.ts addressKey) */
  key: string;
  ip: string;
  send(text: string): boolean;
}

export const INPUT_REFUSAL = 'rate-limited: too many messages or bytes from your IP address; messages are being dropped unread, slow down';

export class InputGate {
  /** messages dropped unread since start */
  dropped = 0;
  private readonly messages: KeyedBuckets<string>;
  private readonly bytes: KeyedBuckets<string>;
  private readonly lastNotice = new WeakMap<GatedConn, number>();

  constructor(rateLimits: Config['rateLimits'], maxMessageLength: number) {
    const { messagesPerIp, bytesPerIp, burstSeconds } = rateLimits;
    this.messages = new KeyedBuckets(messagesPerIp, Math.max(1, messagesPerIp * burstSeconds));
    this.bytes = new KeyedBuckets(bytesPerIp, Math.max(maxMessageLength, bytesPerIp * burstSeconds));
  }

  /** Whether a message of `bytes` from `conn` may be read; `refused` is told when the connection is told (at most once a second). */
  admit(conn: GatedConn, bytes: number, refused: (why: string) => void): boolean {
    const now = performance.now();
    if (this.messages.take(conn.key, now) && this.bytes.take(conn.key, now, bytes)) return true;
    this.dropped++;
    if (now - (this.lastNotice.get(conn) ?? -Infinity) >= 1000) {
      this.lastNotice.set(conn, now);
      refused(INPUT_REFUSAL);
      conn.send(noticeMessage(INPUT_REFUSAL));
    }
    return false;
  }
}
