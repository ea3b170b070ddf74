// Lookup on a miss: a REQ asked for directory lists of authors the store lacks or holds only stale
// (the relay's REQ handler found them: nostr/lookup-miss.ts); this finds them on the network.
//
// Per author, at most three rounds:
//   1. its write relays from the relay list (kind 10002) the store holds, else the indexer and
//      bootstrap relays (then its relay list is asked for too, whatever the REQ wanted);
//   2. when round 1 brought a newer relay list, the write relays it names (one more hop: a 10050
//      DM-relay list lives on the outbox the 10002 points to); else the indexer and bootstrap
//      relays if they were not asked yet (a client's own fallback when an outbox is exhausted);
//   3. the same once more, for what is still missing.
// A stale author whose write relays are followed live is not looked up: live mode brings its news.
//
// One lookup per author and kind at a time (a second REQ joins it), each remembered for
// `remember` whether found or not (or whether its relays failed: what was tried is not tried again
// at once); `perAddress` authors per minute per client address and `maxPending` in flight overall.
// What the lookups then cost other relays — connections, REQs, bytes — is charged to the same client
// address before it happens, and capped per target host (asker.ts, budgets.ts). What is found is
// stored through the one ingest path and reaches the waiting subscription as a live event.
import type { Logger } from 'pino';
import type { Config } from '../../config/schema.js';
import type { EventStore } from '../../store/types.js';
import type { EventSink } from '../../ingest/sink.js';
import type { RelayDirectory } from '../../directory/records.js';
import { loadVerifier, type EventVerifier } from '../../nostr/verify.js';
import type { NostrEvent } from '../../nostr/event.js';
import type { AuthorMiss } from '../../nostr/lookup-miss.js';
import { normalizeRelayUrl, type Target } from '../../remote/url.js';
import { KeyedBuckets } from '../../lib/token-bucket.js';
import { writeRelays } from '../live/select.js';
import { excludedRelays } from '../excluded.js';
import { LookupMemory, lookupKey } from './memory.js';
import { RemoteAsker, type AskRefusal, type PageCut } from './asker.js';
import { pageBytes } from '../fetch/options.js';

const RELAY_LIST = 10002;
const MAX_ROUNDS = 3;

export interface LookupDeps {
  config: Config['spider'];
  store: EventStore;
  /** the one ingest path */
  sink: EventSink;
  directory: RelayDirectory;
  log: Logger;
  /** our own relay's URLs, never asked */
  selfUrls?: string[];
  /** relays followed live now (live mode), if it runs */
  liveRelays?: () => ReadonlySet<string>;
  verifier?: EventVerifier;
  resolve?: (url: string, allowPrivate: boolean) => Promise<Target>;
}

export interface LookupStatus {
  /** ms a REQ waits for its lookup before EOSE */
  waitMs: number;
  /** requests that started or joined a lookup (the relay makes one for absent authors, one for stale ones) */
  requests: number;
  /** authors looked up (started, not joined) */
  authors: number;
  /** of those, with at least one kind found */
  found: number;
  /** of those, asked somewhere and found nowhere */
  missed: number;
  /** authors and kinds remembered as looked up recently */
  remembered: number;
  /** authors and kinds being looked up now */
  inFlight: number;
  /** authors left out: their address's budget (perAddress) */
  refusedAddress: number;
  /** authors left out: maxPending lookups in flight */
  refusedBusy: number;
  /** asks not sent: the remote host's REQ budget was spent */
  refusedRemote: number;
  /** asks not sent, by the budget that refused them (what they would have cost, charged to the client's address or the host) */
  refusedCost: Record<AskRefusal, number>;
  /** connection attempts to remotes (each charged before) */
  attempts: number;
  /** bytes received from remotes */
  bytes: number;
  /** REQs whose page ended early, by why */
  cut: Record<PageCut, number>;
  /** hosts remembered as failed (not tried again for a while) */
  hostsDown: number;
  /** stale authors left alone: their write relays are followed live */
  coveredLive: number;
  remoteReqs: number;
  connections: number;
  openConnections: number;
  failures: number;
  eventsStored: number;
  eventsInvalid: number;
}

/** The relay's hook (relay/lookup.ts declares what it needs of it). */
export interface Lookup {
  readonly waitMs: number;
  readonly staleMs: number;
  readonly waitStale: boolean;
  /** Starts or joins the lookups for `misses` on behalf of `address`; null when none was needed or allowed. */
  request(address: string, misses: AuthorMiss[]): Promise<void> | null;
  status(): LookupStatus;
  stop(): Promise<void>;
}

export function createLookup(deps: LookupDeps): Lookup {
  return new NetworkLookup(deps);
}

/** What an author's rounds tally (LookupStatus has them). */
type LookupCounts = Pick<LookupStatus, 'requests' | 'authors' | 'found' | 'missed' | 'refusedAddress' | 'refusedBusy' | 'coveredLive'>;

class NetworkLookup implements Lookup {
  readonly waitMs: number;
  readonly staleMs: number;
  readonly waitStale: boolean;
  private readonly cfg: Config['spider'];
  private readonly lc: Config['spider']['lookup'];
  private readonly log: Logger;
  private verifier: Promise<EventVerifier> | null;
  private readonly asker: RemoteAsker;
  private readonly memory: LookupMemory;
  private readonly perAddress: KeyedBuckets<string>;
  private readonly excluded: ReturnType<typeof excludedRelays>;
  private readonly fallbackUrls: string[];
  private readonly counts: LookupCounts = { requests: 0, authors: 0, found: 0, missed: 0, refusedAddress: 0, refusedBusy: 0, coveredLive: 0 };
  private stopped = false;
  /** authors being looked up now (maxPending bounds it) */
  private running = 0;

  constructor(private readonly deps: LookupDeps) {
    const cfg = (this.cfg = deps.config);
    const lc = (this.lc = cfg.lookup);
    this.waitMs = lc.wait;
    this.staleMs = lc.staleAge;
    this.waitStale = lc.waitStale;
    const log = (this.log = deps.log.child({ component: 'lookup' }));
    this.verifier = deps.verifier ? Promise.resolve(deps.verifier) : null;
    this.asker = new RemoteAsker({
      store: deps.store, sink: deps.sink, log, resolve: deps.resolve, verifier: () => (this.verifier ??= loadVerifier('auto')),
    }, {
      batch: lc.batch, maxConnections: lc.maxConnections, connectionsPerAddress: lc.connectionsPerAddress, connectionsPerHost: lc.connectionsPerHost,
      pause: cfg.pause, timeout: lc.timeout, deadline: lc.deadline, bytesPerList: lc.bytesPerList, maxPageBytes: pageBytes(cfg),
      maxEventBytes: cfg.maxEventBytes, failureMemory: lc.failureMemory, linger: lc.linger, allowPrivate: cfg.allowPrivate,
      budgets: {
        connectsPerHost: lc.connectsPerHost, connectsPerAddress: lc.connectsPerAddress, reqsPerAddress: lc.reqsPerAddress, bytesPerAddress: lc.bytesPerAddress,
        hostConnectsPerMinute: lc.hostConnectsPerMinute, hostReqsPerMinute: lc.remoteReqsPerMinute,
      },
    });
    this.memory = new LookupMemory(lc.remember, lc.maxRemembered);
    this.perAddress = new KeyedBuckets<string>(lc.perAddress / 60, lc.perAddress);
    this.excluded = excludedRelays(cfg, deps.directory, deps.selfUrls);
    this.fallbackUrls = [...new Set([...lc.indexerRelays, ...cfg.bootstrapRelays].map(normalizeRelayUrl).filter((u): u is string => u !== null))];
  }

  /** The indexer and bootstrap relays not excluded now (read at each use: the directory's backoff changes). */
  private fallbacks(): string[] {
    return this.fallbackUrls.filter((u) => !this.excluded(u));
  }

  /** The relay lists the store holds for these authors. */
  private async storedLists(pubkeys: string[]): Promise<Map<string, NostrEvent>> {
    const out = new Map<string, NostrEvent>();
    for (let i = 0; i < pubkeys.length; i += 500) {
      const batch = pubkeys.slice(i, i + 500);
      const rows = await this.deps.store.query([{ kinds: [RELAY_LIST], authors: batch, limit: batch.length }], { defaultLimit: batch.length, maxLimit: batch.length });
      for (const json of rows) {
        const ev = JSON.parse(json) as NostrEvent;
        out.set(ev.pubkey, ev);
      }
    }
    return out;
  }

  private writesOf(list: NostrEvent | undefined): string[] {
    return list ? (writeRelays(list.tags, this.cfg.maxRelayTagsPerList) ?? []).filter((u) => !this.excluded(u)) : [];
  }

  /**
   * One author's rounds, charged to the client at `address`; resolves with whether any relay was
   * tried (a connection attempted or a REQ sent: else, refused by budgets, it is not remembered).
   */
  private async lookupAuthor(m: AuthorMiss, held: NostrEvent | undefined, address: string): Promise<boolean> {
    const { counts, lc, deps } = this;
    let list = held;
    const writes = this.writesOf(list);
    if (m.stale && deps.liveRelays && writes.length > 0) {
      const live = deps.liveRelays();
      if (writes.some((u) => live.has(u))) { counts.coveredLive++; return true; }
    }
    counts.authors++;
    const want = new Set(m.kinds);
    const asked = new Set<string>();
    let anyAsked = false;
    let anyTried = false;
    let anyFound = false;
    let fallbackUsed = writes.length === 0;
    let relays = writes.length > 0 ? writes.slice(0, lc.relaysPerAuthor) : this.fallbacks();
    for (let round = 0; round < MAX_ROUNDS && want.size > 0 && relays.length > 0 && !this.stopped; round++) {
      for (const u of relays) asked.add(u);
      // without a known relay list, ask for it too: it says where the rest lives
      const kinds = list || want.has(RELAY_LIST) ? [...want] : [...want, RELAY_LIST];
      const answers = await Promise.all(relays.map((u) => this.asker.ask(u, m.pubkey, kinds, address)));
      const found = new Set<number>();
      for (const a of answers) {
        if (a.asked) anyAsked = true;
        if (a.tried) anyTried = true;
        for (const k of a.found) found.add(k);
      }
      for (const k of found) if (want.delete(k)) anyFound = true;
      if (want.size === 0) break;
      let next: string[] = [];
      if (found.has(RELAY_LIST)) {
        const fresh = (await this.storedLists([m.pubkey])).get(m.pubkey);
        if (fresh && fresh.id !== list?.id) {
          list = fresh;
          next = this.writesOf(fresh).filter((u) => !asked.has(u)).slice(0, lc.relaysPerAuthor);
        }
      }
      if (next.length === 0 && !fallbackUsed) {
        fallbackUsed = true;
        next = this.fallbacks().filter((u) => !asked.has(u));
      }
      relays = next;
    }
    if (anyFound) counts.found++;
    else if (anyAsked) counts.missed++;
    return anyTried;
  }

  request(address: string, misses: AuthorMiss[]): Promise<void> | null {
    if (this.stopped) return null;
    const { memory, counts } = this;
    const now = Date.now();
    const waits = new Set<Promise<void>>();
    const start: AuthorMiss[] = [];
    for (const m of misses) {
      const kinds: number[] = [];
      for (const k of m.kinds) {
        const key = lookupKey(m.pubkey, k);
        const joined = memory.joining(key);
        if (joined) waits.add(joined);
        else if (!memory.remembered(key, now)) kinds.push(k);
      }
      if (kinds.length === 0) continue;
      if (this.running + start.length >= this.lc.maxPending) { counts.refusedBusy++; continue; }
      if (!this.perAddress.take(address, now)) { counts.refusedAddress++; continue; }
      start.push({ pubkey: m.pubkey, kinds, stale: m.stale });
    }
    if (start.length > 0) this.startLookups(start, waits, address);
    if (waits.size === 0) return null;
    counts.requests++;
    return Promise.all(waits).then(() => {});
  }

  /** Starts the lookups of `start` for `address` (their stored relay lists read at once), each tracked in memory and added to `waits`. */
  private startLookups(start: AuthorMiss[], waits: Set<Promise<void>>, address: string): void {
    const lists = this.storedLists(start.map((m) => m.pubkey));
    for (const m of start) {
      this.running++;
      const p = lists.then((l) => this.lookupAuthor(m, l.get(m.pubkey), address)).finally(() => { this.running--; });
      p.catch((e: unknown) => this.log.error({ err: e, pubkey: m.pubkey }, 'lookup: failed'));
      waits.add(this.memory.track(m.kinds.map((k) => lookupKey(m.pubkey, k)), p));
    }
  }

  status(): LookupStatus {
    const f = this.asker.figures;
    return {
      waitMs: this.lc.wait, ...this.counts, remembered: this.memory.size, inFlight: this.memory.pending,
      refusedRemote: f.refused.host_reqs, refusedCost: { ...f.refused }, attempts: f.attempts, bytes: f.counts.bytes, cut: { ...f.cut }, hostsDown: this.asker.down.size,
      remoteReqs: f.reqs, connections: f.connections, openConnections: f.open, failures: f.failures,
      eventsStored: f.counts.stored, eventsInvalid: f.counts.invalid,
    };
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.asker.stop();
  }
}
