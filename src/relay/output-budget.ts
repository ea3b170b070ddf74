// Unsent output is bounded per connection (limits.maxBufferedBytes) and per address key
// (limits.maxBufferedBytesPerIp: an IPv4 address or IPv6 /64), so a hundred connections that never
// read cannot each hold a connection's worth: past the address cap the connection of that address
// holding the most is closed as a slow reader, whichever of them was being written to.
//
// A connection's figure is what it holds queued for this turn plus what uWS still buffers; it is
// read again on every send, after every flush and on drain, so it is never older than the last
// time the connection was written to or drained.
//
// A REQ's stored events are read in pieces of at most read.answerPieceBytes, each reserved against
// its address's cap before it is read (reserve, room) and read only once the connection has room
// for it (handlers/answer-pieces.ts): an answer of any size reaches a client that reads, at the
// pace it reads, and what one address's answers hold stays under its cap. A piece is let past the
// connection's cap while it drains (Connection.sendAnswer: a piece larger than the cap, when the
// operator sets it so); the address cap counts every byte, so a client that asks and never reads
// is still bounded.
import { Tally } from './policy/budgets.js';

export interface OutputHolder {
  /** address key (policy/cidr.ts addressKey) */
  readonly key: string;
  /** bytes last accounted for this connection */
  accounted: number;
}

export type SlowReason = 'connection' | 'address';

export class OutputBudget {
  private readonly ipBytes = new Tally<string>();
  /** bytes reserved per address by answer pieces being read (charged before they are read) */
  private readonly reserved = new Tally<string>();
  private readonly byIp = new Map<string, Set<OutputHolder>>();
  private all = 0;
  /** the most unsent output held at once since start */
  peak = 0;

  constructor(readonly perConnection: number, readonly perIp: number) {}

  add(c: OutputHolder): void {
    let set = this.byIp.get(c.key);
    if (!set) this.byIp.set(c.key, (set = new Set()));
    set.add(c);
  }

  remove(c: OutputHolder): void {
    this.ipBytes.add(c.key, -c.accounted);
    this.all -= c.accounted;
    c.accounted = 0;
    const set = this.byIp.get(c.key);
    if (!set) return;
    set.delete(c);
    if (set.size === 0) this.byIp.delete(c.key);
  }

  /**
   * Records that `c` now holds `bytes` unsent. Returns the connection to close as a slow reader and
   * why, or null when every cap holds. `credit`: bytes of REQ answers the connection's cap lets
   * through while they drain (Connection.sendAnswer); the address cap counts every byte.
   */
  account(c: OutputHolder, bytes: number, credit = 0): { close: OutputHolder; why: SlowReason } | null {
    this.ipBytes.add(c.key, bytes - c.accounted);
    this.all += bytes - c.accounted;
    if (this.all > this.peak) this.peak = this.all;
    c.accounted = bytes;
    if (bytes - credit > this.perConnection) return { close: c, why: 'connection' };
    if (this.ipBytes.get(c.key) <= this.perIp) return null;
    let largest = c;
    for (const o of this.byIp.get(c.key) ?? []) if (o.accounted > largest.accounted) largest = o;
    return { close: largest, why: 'address' };
  }

  /** unsent bytes over all connections */
  total(): number { return this.all; }

  /** What an address may still have read for it: its cap, less its unsent output and the pieces being read. */
  room(key: string): number {
    return this.perIp - this.ipBytes.get(key) - this.reserved.get(key);
  }

  /** Reserves `bytes` of an address's room for a piece being read; the function gives them back (once). */
  reserve(key: string, bytes: number): () => void {
    this.reserved.add(key, bytes);
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.reserved.add(key, -bytes);
    };
  }
}
