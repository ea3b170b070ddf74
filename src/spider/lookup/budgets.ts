// What the lookup on a miss costs other relays, charged before it happens. A client's REQ decides
// where this relay connects (the relay lists it names), so every connection attempt, REQ and byte a
// lookup will cause is charged to the client address that started it (an IPv4 address or an IPv6
// /64: policy/cidr.ts addressKey), beside the count of authors it may look up (lookup.ts):
//   - connection attempts per (address, target host) and per address;
//   - REQs and the bytes the answers may bring (each (author, kind) asked costs `bytesPerList`) per
//     address;
// and, all addresses together, per target host (host and port, whatever the path: three paths on
// one host are one host, whatever the spider later learns about which URLs are one relay):
//   - connection attempts and REQs.
// A charge is all or nothing: refused by any budget, nothing is taken. Connection attempts are
// counted in sliding windows (never more than the figure in any minute, lib/sliding-window.ts); REQs
// and bytes in token buckets refilled per minute with a burst of one minute's worth. 0 turns a
// budget off.
import { KeyedBuckets } from '../../lib/token-bucket.js';
import { SlidingWindows } from '../../lib/sliding-window.js';

export interface CostBudgets {
  /** connection attempts per minute from one address's lookups to one host */
  connectsPerHost: number;
  /** connection attempts per minute from one address's lookups in all */
  connectsPerAddress: number;
  /** REQs per minute to remotes from one address's lookups */
  reqsPerAddress: number;
  /** bytes per minute the answers to one address's lookups may bring */
  bytesPerAddress: number;
  /** connection attempts per minute to one host, all addresses together */
  hostConnectsPerMinute: number;
  /** REQs per minute to one host, all addresses together */
  hostReqsPerMinute: number;
}

/** Which budget refused a charge (the status page and /metrics count each). */
export type CostRefusal = 'connects_host' | 'connects_address' | 'reqs_address' | 'bytes_address' | 'host_connects' | 'host_reqs';

/** What one ask will cause: a new connection, a new REQ, and the bytes its answer may bring. */
export interface Cost { connect: boolean; req: boolean; bytes: number }

const MINUTE = 60_000;
const perMinute = <K>(n: number) => new KeyedBuckets<K>(n / 60, n);

/** One budget a charge may take from, and how to undo it. */
interface Taker { take(key: string, now: number, n: number): boolean; give(key: string, n: number): void; readonly unlimited: boolean }

const windowTaker = (w: SlidingWindows<string>): Taker => ({ take: (k, now) => w.take(k, now), give: (k) => w.give(k), get unlimited() { return w.unlimited; } });
const bucketTaker = (b: KeyedBuckets<string>): Taker => ({ take: (k, now, n) => b.take(k, now, n), give: (k, n) => b.give(k, n), get unlimited() { return b.unlimited; } });

export class LookupBudgets {
  private readonly connectsHost: Taker;
  private readonly connectsAddress: Taker;
  private readonly reqsAddress: Taker;
  private readonly bytesAddress: Taker;
  private readonly hostConnects: Taker;
  private readonly hostReqs: Taker;
  private readonly bytesBurst: number;

  constructor(b: CostBudgets) {
    this.connectsHost = windowTaker(new SlidingWindows(b.connectsPerHost, MINUTE));
    this.connectsAddress = windowTaker(new SlidingWindows(b.connectsPerAddress, MINUTE));
    this.hostConnects = windowTaker(new SlidingWindows(b.hostConnectsPerMinute, MINUTE));
    this.reqsAddress = bucketTaker(perMinute(b.reqsPerAddress));
    this.bytesAddress = bucketTaker(perMinute(b.bytesPerAddress));
    this.hostReqs = bucketTaker(perMinute(b.hostReqsPerMinute));
    this.bytesBurst = b.bytesPerAddress;
  }

  /** Charges `cost` to `address` and `host`; null when every budget allowed it, else the first that refused (nothing taken). */
  charge(address: string, host: string, cost: Cost, now = Date.now()): CostRefusal | null {
    const taken: Array<[Taker, string, number]> = [];
    const take = (t: Taker, key: string, n: number): boolean => {
      if (n <= 0 || t.unlimited) return true;
      if (!t.take(key, now, n)) return false;
      taken.push([t, key, n]);
      return true;
    };
    // a charge bigger than a minute's whole burst could never pass: it is charged as a full burst
    const bytes = Math.min(cost.bytes, this.bytesBurst);
    let refused: CostRefusal | null = null;
    if (cost.connect && !take(this.connectsHost, `${address} ${host}`, 1)) refused = 'connects_host';
    else if (cost.connect && !take(this.connectsAddress, address, 1)) refused = 'connects_address';
    else if (cost.req && !take(this.reqsAddress, address, 1)) refused = 'reqs_address';
    else if (!take(this.bytesAddress, address, bytes)) refused = 'bytes_address';
    else if (cost.connect && !take(this.hostConnects, host, 1)) refused = 'host_connects';
    else if (cost.req && !take(this.hostReqs, host, 1)) refused = 'host_reqs';
    if (refused) for (const [t, key, n] of taken) t.give(key, n);
    return refused;
  }
}
