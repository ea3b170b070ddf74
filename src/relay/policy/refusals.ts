// Every refusal the relay sends a client, counted once, by its NIP-01 reason word (the prefix of the
// message: invalid, blocked, rate-limited, auth-required, restricted, pow, error) and by what the
// client sent (EVENT, REQ, COUNT, AUTH, CONNECT, MESSAGE for input that is not a message). The
// status page's "refused" figures, its chart and its table all read these counts, so one word
// means one number. The last few refusals are kept with their message and client IP (no content).
// The status page is public, so its snapshot carries no client address, only how many addresses
// the recent refusals came from; the addresses go to the operator alone (NIP-86 `listrefusals`).
import { addressKey } from '../../policy/cidr.js';

/** A recent refusal as anyone may see it (the status page, /status.json): no client address. */
export interface Refusal { at: number; verb: string; reason: string; message: string }
/** A recent refusal with the client's IP address: for the operator only (NIP-86 `listrefusals`). */
export interface AddressedRefusal extends Refusal { ip: string }

export interface RefusalCounts {
  total: number;
  /** verbs seen so far, in a fixed order */
  verbs: string[];
  byReason: Array<{ reason: string; total: number; byVerb: Record<string, number> }>;
  recent: Refusal[];
  /** distinct clients (an IPv4 address, an IPv6 /64) the refusals in `recent` were sent to */
  recentAddresses: number;
}

const VERB_ORDER = ['EVENT', 'REQ', 'COUNT', 'AUTH', 'CONNECT', 'MESSAGE'];

export class RefusalLog {
  private counts = new Map<string, Map<string, number>>();
  private perVerb = new Map<string, number>();
  private recent: AddressedRefusal[] = [];
  total = 0;
  constructor(private keep = 50) {}

  add(verb: string, message: string, ip = ''): void {
    const i = message.indexOf(':');
    const reason = i > 0 && /^[a-z-]+$/.test(message.slice(0, i)) ? message.slice(0, i) : 'error';
    let m = this.counts.get(reason);
    if (!m) this.counts.set(reason, (m = new Map()));
    m.set(verb, (m.get(verb) ?? 0) + 1);
    this.perVerb.set(verb, (this.perVerb.get(verb) ?? 0) + 1);
    this.total++;
    this.recent.push({ at: Date.now(), verb, reason, message: message.slice(0, 200), ip });
    if (this.recent.length > this.keep * 2) this.recent = this.recent.slice(-this.keep);
  }

  /** Refusals of one verb (e.g. EVENT: the events refused) since start. */
  count(verb: string): number {
    return this.perVerb.get(verb) ?? 0;
  }

  /** The latest refusals, newest first, with the client IP each was sent to: the operator's view. */
  addressed(): AddressedRefusal[] {
    return this.recent.slice(-this.keep).reverse().map((r) => ({ ...r }));
  }

  /** Counts and the latest refusals without their addresses: what the public status page shows. */
  snapshot(): RefusalCounts {
    const verbs = [...VERB_ORDER.filter((v) => this.perVerb.has(v)), ...[...this.perVerb.keys()].filter((v) => !VERB_ORDER.includes(v)).sort()];
    const byReason = [...this.counts].map(([reason, m]) => ({ reason, total: [...m.values()].reduce((a, b) => a + b, 0), byVerb: Object.fromEntries(m) }))
      .sort((a, b) => b.total - a.total || (a.reason < b.reason ? -1 : 1));
    const latest = this.recent.slice(-this.keep);
    return {
      total: this.total, verbs, byReason,
      recent: latest.reverse().map(({ at, verb, reason, message }) => ({ at, verb, reason, message })),
      recentAddresses: new Set(latest.filter((r) => r.ip).map((r) => addressKey(r.ip))).size,
    };
  }
}
