// Everything between a client and the relay's core that the operator controls: who may connect
// (IP lists, connections per IP, trusted proxy header), NIP-42 AUTH, rate limits, who may read
// what (auth to read, DMs), read-side protection (concurrent queries, scan budget) and the lists
// NIP-86 changes. server.ts creates one Access and the handlers call into it.
import type { HttpRequest, HttpResponse } from '@trufflesuite/uws-js-unofficial';
import type { Config } from '../../config.js';
import type { EventStore } from '../../store/types.js';
import type { NostrEvent } from '../../nostr/event.js';
import type { Filter } from '../../nostr/filter.js';
import { authMessage, okMessage } from '../../nostr/messages.js';
import { acceptedRelayUrls, checkAuthEvent, type SigChecker } from '../auth/nip42.js';
import { RateLimiter, type Verb } from '../ratelimit/limiter.js';
import { RefusalLog } from '../dashboard/refusals.js';
import { AccessLists } from './lists.js';
import { authToRead, ProtectedKinds } from './read.js';
import { writePolicies } from './write.js';
import { SpiderWorkers } from './workers.js';
import type { Policies } from '../../ingest/hooks.js';

/** What Access needs of a connection (src/relay/connection.ts). */
export interface ConnLike {
  id: number;
  ip: string;
  challenge: string;
  authed: Set<string>;
  closed: boolean;
  send(text: string): boolean;
  close(code?: number, reason?: string): void;
}

/** A store signal that also stops a scan past its budget or deadline. */
export interface ScanGuard {
  signal: { readonly aborted: boolean };
  /** why the guard stopped the scan, or null */
  readonly tripped: null | 'budget' | 'timeout';
}

interface Slots { running: number; queue: Array<() => void> }

export class Access {
  readonly lists: AccessLists;
  readonly limiter: RateLimiter;
  readonly refusals = new RefusalLog();
  readonly dms: ProtectedKinds;
  /** spider workers (spider.workerPubkeys): exempt from rate limits once authenticated */
  readonly workers: SpiderWorkers;
  private perIp = new Map<string, number>();
  private hosts = new WeakMap<object, string>();
  private slots = new WeakMap<object, Slots>();
  private conns = new Set<ConnLike>();
  authOk = 0;
  authFailed = 0;
  scansCut = 0;

  constructor(private config: Config, private verifier: SigChecker) {
    this.lists = new AccessLists(config);
    this.limiter = new RateLimiter(config.rateLimits);
    this.dms = new ProtectedKinds(config.auth.readKinds);
    this.workers = new SpiderWorkers(config.spider.workerPubkeys);
  }

  /** Loads the persisted lists and adds the policy hooks. */
  install(policies: Policies, store: EventStore): void {
    this.lists.open(store.env);
    policies.rejectEvent.unshift(...writePolicies(this.config, this.lists));
    policies.rejectFilter.push(authToRead(this.config.auth.required), this.dms.rejectFilter());
    policies.rejectConnection.push((ip) => {
      if (!this.lists.ipAllowedToConnect(ip)) return 'blocked: your IP address is not on this relay\'s allow list';
      if (this.lists.ipBlockedNow(ip)) return 'blocked: your IP address is blocked on this relay';
      const cap = this.config.rateLimits.maxConnectionsPerIp;
      if (cap > 0 && (this.perIp.get(ip) ?? 0) >= cap) return `rate-limited: more than ${cap} connections from your IP address`;
      return null;
    });
  }

  // ---- connections ----------------------------------------------------------------------

  /** The client IP: the configured trusted proxy header when set and present, else the socket's. Call in upgrade. */
  clientIp(res: HttpResponse, req: HttpRequest): string {
    const h = this.config.trustedProxyHeader.toLowerCase();
    if (h) {
      const v = req.getHeader(h);
      if (v) {
        // X-Forwarded-For: the last entry is the one our proxy appended; the rest are client claims
        const parts = v.split(',').map((s) => s.trim()).filter(Boolean);
        const ip = parts[parts.length - 1];
        if (ip) return ip;
      }
    }
    return Buffer.from(res.getRemoteAddressAsText()).toString();
  }

  noteHost(conn: object, host: string): void { this.hosts.set(conn, host); }

  opened(conn: ConnLike): void {
    this.perIp.set(conn.ip, (this.perIp.get(conn.ip) ?? 0) + 1);
    this.conns.add(conn);
    conn.send(authMessage(conn.challenge));
  }

  closed(conn: ConnLike): void {
    const n = (this.perIp.get(conn.ip) ?? 1) - 1;
    if (n <= 0) this.perIp.delete(conn.ip);
    else this.perIp.set(conn.ip, n);
    this.conns.delete(conn);
    this.limiter.forget(conn);
  }

  /** Closes open connections from a newly blocked IP or range. */
  dropBlocked(): number {
    let n = 0;
    for (const c of [...this.conns]) {
      if (this.lists.ipBlockedNow(c.ip)) {
        c.close(1008, 'blocked');
        n++;
      }
    }
    return n;
  }

  // ---- NIP-42 --------------------------------------------------------------------------

  async handleAuth(conn: ConnLike, raw: unknown): Promise<void> {
    const id = typeof (raw as { id?: unknown })?.id === 'string' ? (raw as { id: string }).id : '';
    const r = await checkAuthEvent(raw, {
      challenge: conn.challenge,
      relayUrls: acceptedRelayUrls(this.config.publicUrl, this.hosts.get(conn) ?? ''),
      maxAgeSeconds: Math.round(this.config.auth.maxAge / 1000),
    }, this.verifier);
    if ('error' in r) {
      this.authFailed++;
      this.refused('AUTH', r.error, conn.ip);
      conn.send(okMessage(id, false, r.error));
      return;
    }
    this.authOk++;
    conn.authed.add(r.pubkey);
    conn.send(okMessage(id, true, ''));
  }

  // ---- rate limits ---------------------------------------------------------------------

  /** null when the message may be handled, else a `rate-limited:` refusal. */
  rateLimit(verb: Verb, conn: ConnLike): string | null {
    if (this.workers.any(conn.authed)) return null;
    const r = this.limiter.check(verb, { ip: conn.ip, conn, authed: conn.authed });
    if (r) this.refused(verb, r, conn.ip);
    return r;
  }

  refused(verb: string, message: string, ip = ''): void { this.refusals.add(verb, message, ip); }

  // ---- reads -----------------------------------------------------------------------------

  /** Waits for one of the connection's query slots; null when too many are already waiting. */
  async querySlot(conn: object): Promise<(() => void) | null> {
    let s = this.slots.get(conn);
    if (!s) this.slots.set(conn, (s = { running: 0, queue: [] }));
    const slots = s;
    const release = () => {
      const next = slots.queue.shift();
      if (next) next();
      else slots.running--;
    };
    if (slots.running < this.config.read.maxConcurrentQueries) {
      slots.running++;
      return release;
    }
    if (slots.queue.length >= this.config.read.maxQueuedQueries) return null;
    await new Promise<void>((resolve) => slots.queue.push(resolve));
    return release;
  }

  /**
   * A signal for store.query/count that stops the scan once it has read `read.scanBudget` index
   * entries or run `read.queryTimeout`. The store checks the signal once per step of
   * `store.queryYieldEvery` entries, so each check is counted as that many entries. `scanBudget`
   * replaces read.scanBudget for scans with their own budget (NEG-OPEN: negentropy.scanBudget).
   */
  scanGuard(outer: { aborted: boolean }, scanBudget = this.config.read.scanBudget): ScanGuard {
    const maxSteps = Math.max(1, Math.ceil(scanBudget / this.config.store.queryYieldEvery));
    const deadline = Date.now() + this.config.read.queryTimeout;
    let steps = 0;
    let tripped: ScanGuard['tripped'] = null;
    const self = this;
    return {
      signal: {
        get aborted() {
          if (outer.aborted) return true;
          if (tripped) return true;
          if (++steps > maxSteps) tripped = 'budget';
          else if (steps % 4 === 0 && Date.now() > deadline) tripped = 'timeout';
          if (tripped) self.scansCut++;
          return tripped !== null;
        },
      },
      get tripped() { return tripped; },
    };
  }

  /** Stored results a reader may see (DMs only to their author or recipient). */
  visibleResults(filters: Filter[], authed: ReadonlySet<string>, results: string[]): string[] {
    if (!this.dms.needsFiltering(filters, authed)) return results;
    return results.filter((json) => this.dms.canSeeJson(json, authed));
  }

  /** Live delivery check. */
  canSee(ev: NostrEvent, authed: ReadonlySet<string>): boolean { return this.dms.canSee(ev, authed); }

  // ---- NIP-11 ----------------------------------------------------------------------------

  readonly nips = [13, 42, 70, 86];

  /** Sets the access-related NIP-11 limitation fields on a relayInfo() document. */
  nip11(doc: Record<string, unknown>): Record<string, unknown> {
    const { auth, policy } = this.config;
    const lim = (doc.limitation ??= {}) as Record<string, unknown>;
    lim.auth_required = auth.required === 'read' || auth.required === 'all';
    lim.restricted_writes = auth.required === 'write' || auth.required === 'all' || auth.writeKinds.length > 0 ||
      this.lists.pubkeyAllowListActive() || this.lists.kindAllowListActive() || policy.minPow > 0 || policy.powKinds.length > 0;
    if (policy.minPow > 0) lim.min_pow_difficulty = policy.minPow;
    return doc;
  }

  figures(): Record<string, number> {
    return {
      authSucceeded: this.authOk,
      authFailed: this.authFailed,
      rateLimited: this.limiter.refused,
      scansCut: this.scansCut,
      clientIps: this.perIp.size,
      bannedPubkeys: this.lists.list('bannedPubkeys').length + this.lists.configBanned.size,
      blockedIps: this.lists.list('blockedIps').length + this.lists.configIpDeny.size,
    };
  }
}
