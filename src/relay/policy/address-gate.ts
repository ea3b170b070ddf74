// What one address may open: the NIP-86 allow and block lists decide first, then
// rateLimits.maxConnectionsPerIp counts its WebSocket connections and the HTTP requests being
// answered together (uWS gives no open/close event for an HTTP connection), and HTTP requests are
// also held to rateLimits.httpRequestsPerIp. Addresses are address keys (an IPv4 address or an
// IPv6 /64: policy/cidr.ts addressKey).
import type { Config } from '../../config.js';
import { KeyedBuckets } from '../../lib/token-bucket.js';
import type { AccessLists } from '../../policy/lists.js';
import { addressKey } from '../../policy/cidr.js';

export type HttpAdmission = { release: () => void } | { refused: string; retryAfter: number };

export class AddressGate {
  /** HTTP requests refused with 429 */
  httpRefused = 0;
  /** open connections and HTTP requests being answered, per address key */
  private readonly open = new Map<string, number>();
  private readonly httpRequests: KeyedBuckets<string>;

  constructor(private readonly rateLimits: Config['rateLimits'], private readonly lists: AccessLists) {
    const rate = rateLimits.httpRequestsPerIp;
    this.httpRequests = new KeyedBuckets(rate, Math.max(1, rate * rateLimits.burstSeconds));
  }

  /** addresses with something open */
  get size(): number {
    return this.open.size;
  }

  /** The refusal of a WebSocket connection from `ip` (ingest's rejectConnection hook), or null. */
  connectionRefusal(ip: string): string | null {
    if (!this.lists.ipAllowedToConnect(ip)) return 'blocked: your IP address is not on this relay\'s allow list';
    if (this.lists.ipBlockedNow(ip)) return 'blocked: your IP address is blocked on this relay';
    const cap = this.rateLimits.maxConnectionsPerIp;
    if (cap > 0 && (this.open.get(addressKey(ip)) ?? 0) >= cap) return `rate-limited: more than ${cap} connections from your IP address`;
    return null;
  }

  opened(key: string): void {
    this.open.set(key, (this.open.get(key) ?? 0) + 1);
  }

  closed(key: string): void {
    const n = (this.open.get(key) ?? 1) - 1;
    if (n <= 0) this.open.delete(key);
    else this.open.set(key, n);
  }

  /**
   * Admits an HTTP request from `ip`, counted in the address's connection cap while it is being
   * answered: call the returned release when it is. A refusal (told to `refused`) says when to come
   * back (Retry-After, seconds).
   */
  httpRequest(ip: string, refused: (why: string) => void): HttpAdmission {
    const key = addressKey(ip);
    const cap = this.rateLimits.maxConnectionsPerIp;
    const rate = this.rateLimits.httpRequestsPerIp;
    let why: string | null = null;
    if (cap > 0 && (this.open.get(key) ?? 0) >= cap) why = `rate-limited: more than ${cap} connections and requests from your IP address`;
    else if (!this.httpRequests.take(key, Date.now())) why = `rate-limited: more than ${rate} HTTP requests per second from your IP address`;
    if (why) {
      this.httpRefused++;
      refused(why);
      return { refused: why, retryAfter: Math.max(1, Math.ceil(1 / Math.max(rate, 1))) };
    }
    this.opened(key);
    let done = false;
    return {
      release: () => {
        if (done) return;
        done = true;
        this.closed(key);
      },
    };
  }
}
