// Rate limits per client IP (IPv6: per /64, see addressKey), per connection and per authenticated
// pubkey, separately for EVENT, REQ, COUNT and AUTH. A message must get a token from every bucket that applies; if one says no, the
// tokens already taken are given back, so a refused message costs nothing. Loopback is not special.
import type { Config } from '../../config.js';
import { KeyedBuckets } from '../../lib/token-bucket.js';

export type Verb = 'EVENT' | 'REQ' | 'COUNT' | 'AUTH';
const VERBS: Verb[] = ['EVENT', 'REQ', 'COUNT', 'AUTH'];
const key = (v: Verb) => v.toLowerCase() as 'event' | 'req' | 'count' | 'auth';

export interface LimitSubject {
  /** the client's address key (policy/cidr.ts addressKey: IPv4 address or IPv6 /64) */
  ip: string;
  /** any object that lives as long as the connection */
  conn: object;
  authed: ReadonlySet<string>;
}

export class RateLimiter {
  private perIp = new Map<Verb, KeyedBuckets<string>>();
  private perConn = new Map<Verb, KeyedBuckets<object>>();
  private perPubkey = new Map<Verb, KeyedBuckets<string>>();
  refused = 0;

  constructor(cfg: Config['rateLimits'], private clock: () => number = () => performance.now()) {
    const cap = (rate: number) => Math.max(1, rate * cfg.burstSeconds);
    for (const v of VERBS) {
      const k = key(v);
      this.perIp.set(v, new KeyedBuckets(cfg.perIp[k], cap(cfg.perIp[k])));
      this.perConn.set(v, new KeyedBuckets(cfg.perConnection[k], cap(cfg.perConnection[k])));
      this.perPubkey.set(v, new KeyedBuckets(cfg.perPubkey[k], cap(cfg.perPubkey[k])));
    }
  }

  /** null when the message may go ahead, else the `rate-limited:` refusal. */
  check(verb: Verb, s: LimitSubject): string | null {
    const now = this.clock();
    const ip = this.perIp.get(verb)!;
    if (!ip.take(s.ip, now)) return this.no(verb, 'your IP address');
    const conn = this.perConn.get(verb)!;
    if (!conn.take(s.conn, now)) {
      ip.give(s.ip);
      return this.no(verb, 'this connection');
    }
    const pk = this.perPubkey.get(verb)!;
    const taken: string[] = [];
    for (const p of s.authed) {
      if (!pk.take(p, now)) {
        ip.give(s.ip);
        conn.give(s.conn);
        for (const t of taken) pk.give(t);
        return this.no(verb, 'your pubkey');
      }
      taken.push(p);
    }
    return null;
  }

  /** drops a closed connection's buckets */
  forget(conn: object): void {
    for (const b of this.perConn.values()) b.delete(conn);
  }

  private no(verb: Verb, who: string): string {
    this.refused++;
    return `rate-limited: too many ${verb} messages from ${who}; slow down`;
  }

  /** buckets currently held (for the dashboard) */
  size(): number {
    let n = 0;
    for (const m of [this.perIp, this.perPubkey]) for (const b of m.values()) n += b.size;
    return n;
  }
}
