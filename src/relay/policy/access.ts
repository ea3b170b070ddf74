// Everything between a client and the relay's core that the operator controls, as one face the
// handlers call. Access holds the per-connection state (the open connections) and hands each
// question to a small policy of its own: who may connect (IP lists, connections and HTTP requests
// per address: address-gate.ts; the trusted proxy header), the flood gate before decoding
// (input-gate.ts), NIP-42 (auth-gate.ts), rate limits, what one client may hold (filter values,
// events in flight: budgets.ts), who may read what (auth to read, DMs: read.ts), read-side
// protection (query slots: query-slots.ts; the scan budget: scan-guard.ts), the refusal log
// (refusals.ts) and the lists NIP-86 changes (what they say in NIP-11: nip11.ts). Per-client limits
// count by address key (an IPv4 address or an IPv6 /64). server.ts creates one Access.
import type { HttpRequest, HttpResponse } from '@trufflesuite/uws-js-unofficial';
import type { Config } from '../../config.js';
import { maxEventMessageLength } from '../../config/relay.js';
import type { NostrEvent } from '../../nostr/event.js';
import type { SigChecker } from '../auth/nip42.js';
import { OwnUrls } from '../auth/own-urls.js';
import { RateLimiter, type Verb } from '../ratelimit/limiter.js';
import { RefusalLog } from './refusals.js';
import type { AccessLists } from '../../policy/lists.js';
import { authToRead, ProtectedKinds } from './read.js';
import { SpiderWorkers } from './workers.js';
import type { Policies } from '../../ingest/hooks.js';
import { ClientBudgets, type Release } from './budgets.js';
import { QuerySlots } from './query-slots.js';
import { AddressGate, type HttpAdmission } from './address-gate.js';
import { InputGate } from './input-gate.js';
import { scanGuard, type ScanGuard } from './scan-guard.js';
import { AuthGate } from './auth-gate.js';

/** What Access needs of a connection (src/relay/connection.ts). */
export interface ConnLike {
  id: number;
  ip: string;
  /** address key of ip (cidr.ts addressKey) */
  key: string;
  challenge: string;
  /** whether `challenge` was sent on this connection (NIP-42: only a sent challenge can be answered) */
  challengeSent: boolean;
  authed: Set<string>;
  closed: boolean;
  send(text: string): boolean;
  close(code?: number, reason?: string): void;
}

export class Access {
  readonly lists: AccessLists;
  readonly limiter: RateLimiter;
  readonly refusals = new RefusalLog();
  readonly dms: ProtectedKinds;
  /** spider workers (spider.workerPubkeys): exempt from rate limits once authenticated */
  readonly workers: SpiderWorkers;
  /** what one client holds: filter values, filters, events in flight */
  readonly budgets: ClientBudgets;
  /** who runs a scan now (per connection and per address) */
  readonly querySlots: QuerySlots;
  /** what the NIP-42 relay tag and the NIP-98 u tag may name */
  readonly ownUrls: OwnUrls;
  /** connections and HTTP requests per address (lists, caps, HTTP rate) */
  readonly addresses: AddressGate;
  /** messages and bytes per address, before anything is decoded */
  private readonly input: InputGate;
  /** NIP-42: challenges and AUTH answers */
  readonly auth: AuthGate;
  private conns = new Set<ConnLike>();
  scansCut = 0;

  /** `lists`: the write rules' (src/policy), so NIP-86 changes reach both */
  constructor(private config: Config, verifier: SigChecker, lists: AccessLists) {
    this.lists = lists;
    this.limiter = new RateLimiter(config.rateLimits);
    this.dms = new ProtectedKinds(config.auth.readKinds);
    this.workers = new SpiderWorkers(config.spider.workerPubkeys);
    this.budgets = new ClientBudgets(config.limits, config.rateLimits);
    this.querySlots = new QuerySlots(config.read);
    this.ownUrls = new OwnUrls(config.publicUrl, config.auth.relayHosts);
    this.auth = new AuthGate(config.auth, verifier, this.ownUrls, (verb, message, ip) => this.refused(verb, message, ip));
    this.addresses = new AddressGate(config.rateLimits, lists);
    this.input = new InputGate(config.rateLimits, maxEventMessageLength(config.limits));
  }

  /** HTTP requests refused with 429 */
  get httpRefused(): number {
    return this.addresses.httpRefused;
  }

  /** WebSocket messages dropped unread (admitMessage) */
  get messagesDropped(): number {
    return this.input.dropped;
  }

  /** Adds the per-connection hooks (the write rules are src/policy's, already in the lists). */
  install(policies: Policies): void {
    policies.rejectFilter.push(authToRead(this.config.auth.required), this.dms.rejectFilter());
    policies.rejectConnection.push((ip) => this.addresses.connectionRefusal(ip));
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

  opened(conn: ConnLike): void {
    this.addresses.opened(conn.key);
    this.conns.add(conn);
    this.auth.opened(conn);
  }

  /**
   * Admits an HTTP request from `ip` (every method, on every path). uWS gives no open/close event
   * for an HTTP connection, so what is counted in the address's connection cap
   * (rateLimits.maxConnectionsPerIp, shared with WebSockets) is each request while it is being
   * answered: call the returned release when it is. A refusal says when to come back
   * (Retry-After, seconds).
   */
  httpRequest(ip: string): HttpAdmission {
    return this.addresses.httpRequest(ip, (why) => this.refused('HTTP', why, ip));
  }

  closed(conn: ConnLike): void {
    this.addresses.closed(conn.key);
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

  // ---- NIP-42 (auth-gate.ts) ------------------------------------------------------------

  /** Right before a refusal: an `auth-required:` one sends the challenge first (on-demand mode). */
  beforeRefusal(conn: ConnLike, message: string): void {
    this.auth.beforeRefusal(conn, message);
  }

  /** An AUTH: rate-limited and counted in flight like an EVENT before its signature is checked. */
  handleAuth(conn: ConnLike, raw: unknown): Promise<void> {
    return this.auth.handle(conn, raw, () => this.rateLimit('AUTH', conn) ?? this.inFlight(conn, 'AUTH'));
  }

  // ---- rate limits ---------------------------------------------------------------------

  /**
   * Whether a message of `bytes` may be read at all: rateLimits.messagesPerIp and bytesPerIp, per
   * address, before it is decoded or parsed, so a flood costs little more than its reading. A
   * message over them is dropped; the connection is told so at most once a second.
   */
  admitMessage(conn: ConnLike, bytes: number): boolean {
    // spider workers first: their bursts are not charged to the address other clients share
    if (this.workers.any(conn.authed)) return true;
    return this.input.admit(conn, bytes, (why) => this.refused('MESSAGE', why, conn.ip));
  }

  /** null when the message may be handled, else a `rate-limited:` refusal. */
  rateLimit(verb: Verb, conn: ConnLike): string | null {
    if (this.workers.any(conn.authed)) return null;
    const r = this.limiter.check(verb, { ip: conn.key, conn, authed: conn.authed });
    if (r) this.refused(verb, r, conn.ip);
    return r;
  }

  /**
   * An EVENT or AUTH entering the signature check and ingest path: the release to call once it is
   * answered, or a `rate-limited:` refusal when the connection or its address has too many waiting.
   * Spider workers are exempt, as from the rate limits.
   */
  inFlight(conn: ConnLike, verb: 'EVENT' | 'AUTH'): Release | string {
    if (this.workers.any(conn.authed)) return () => {};
    const r = this.budgets.inFlight(conn);
    if (typeof r === 'string') this.refused(verb, r, conn.ip);
    return r;
  }

  refused(verb: string, message: string, ip = ''): void { this.refusals.add(verb, message, ip); }

  // ---- reads -----------------------------------------------------------------------------

  /** Waits for a query slot (query-slots.ts); null when too many already wait on this connection or address. */
  querySlot(conn: ConnLike): Promise<Release | null> {
    return this.querySlots.acquire(conn);
  }

  /**
   * A signal for store.query/count that stops the scan once it has read `read.scanBudget` index
   * entries or run `read.queryTimeout`. The store checks the signal once per step of
   * `store.queryYieldEvery` entries, so each check is counted as that many entries; the work of
   * planning and opening ranges is charged in entries too (store/planner.ts planCost). `scanBudget`
   * replaces read.scanBudget for scans with their own budget (NEG-OPEN: negentropy.scanBudget).
   */
  scanGuard(outer: { aborted: boolean }, scanBudget = this.config.read.scanBudget): ScanGuard {
    return scanGuard(outer, { scanBudget, every: this.config.store.queryYieldEvery, timeoutMs: this.config.read.queryTimeout }, () => this.scansCut++);
  }

  /** Live delivery check. */
  canSee(ev: NostrEvent, authed: ReadonlySet<string>): boolean { return this.dms.canSee(ev, authed); }

  figures(): Record<string, number> {
    return {
      authSucceeded: this.auth.ok,
      authFailed: this.auth.failed,
      authChallengesSent: this.auth.challengesSent,
      rateLimited: this.limiter.refused,
      scansCut: this.scansCut,
      messagesDropped: this.messagesDropped,
      clientIps: this.addresses.size,
      ...this.budgets.figures(),
      ...this.querySlots.figures(),
      bannedPubkeys: this.lists.list('bannedPubkeys').length + this.lists.configBanned.size,
      blockedIps: this.lists.list('blockedIps').length + this.lists.configIpDeny.size,
    };
  }
}
