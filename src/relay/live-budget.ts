// Live fan-out charged to the address that holds the subscriptions. Every stored event is matched
// against the open subscriptions on the main thread and sent to each that matches; one address
// holding 2,000 live NIP-50 searches for the words of the profiles it publishes itself made each of
// its publications cost 2,000 sends, and another client's publish waited p50 ~600 ms, up to 1.2 s
// (bench/RESULTS.md, live-search). So the live events one address's subscriptions receive are budgeted per second like
// its messages (a token bucket per address, IPv6 by /64): a subscription that would receive one
// more than its address has left is closed with CLOSED rate-limited:, which stops its cost, and
// says why; the client may subscribe again (under the REQ rate limits) with fewer or narrower ones.
import { KeyedBuckets } from '../lib/token-bucket.js';
import { addressKey } from '../policy/cidr.js';

export class LiveBudget {
  private readonly buckets: KeyedBuckets<string>;
  /** the CLOSED message of a subscription closed over the budget */
  readonly refusal: string;

  /** perIp <= 0: unlimited */
  constructor(perIp: number, burstSeconds: number) {
    this.buckets = new KeyedBuckets(perIp, perIp * burstSeconds);
    this.refusal = `rate-limited: the live events for this address's subscriptions exceeded ${perIp.toLocaleString('en-US')} a second; this subscription was closed: subscribe again with fewer or narrower filters`;
  }

  /** Takes one live event for a subscription of `ip`; false when its address has none left. */
  admit(ip: string, now: number): boolean {
    return this.buckets.unlimited || this.buckets.take(addressKey(ip), now);
  }
}
