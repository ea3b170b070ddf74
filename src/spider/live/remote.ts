// One live remote: a connection holding one subscription (the directory kinds, since = when it
// connected), every event checked (check.ts) and handed to the one ingest path (the sink, which
// verifies ids and signatures), and, when the connection drops, a reconnect with backoff followed
// by a catch-up of what was missed (catch-up.ts, the spider's own fetch code).
//
// No gap: the new subscription's `since` is the moment it connects, and the catch-up covers from
// the newest event the old connection delivered (or, if later, the moment the old subscription
// started — everything after it had been flowing) up to now, less the spider's lookback.
//
// Bounded per remote: events/s and bytes/s (token buckets), events being stored at once; a remote
// that exceeds them is cut off as a flood (what it sent meanwhile is caught up on reconnect, within
// the catch-up's own budgets). A remote that lies (not an event, outside the filter, dated far
// ahead, a forged id or signature) is cut off and waits hostileBackoff, doubling per offence.
// State is a few numbers per remote, whatever the traffic.
import type { Logger } from 'pino';
import { RelayClient } from '../../remote/client.js';
import { resolveTarget, type Target } from '../../remote/url.js';
import type { EventSink } from '../../ingest/sink.js';
import { toWire, type Filter } from '../../nostr/filter.js';
import { checkLiveEvent, MinuteRate } from './check.js';
import { TokenBucket } from '../../lib/token-bucket.js';
import { sleep } from '../../lib/sleep.js';

export interface LiveLimits {
  eventsPerSecond: number;
  bytesPerSecond: number;
  maxPending: number;
  /** ms */
  maxFuture: number;
  reconnectBackoff: number;
  maxReconnectBackoff: number;
  hostileBackoff: number;
  connectTimeout: number;
  maxEventBytes: number;
  allowPrivate: boolean;
}

export type LiveState = 'connecting' | 'live' | 'waiting' | 'cut-off' | 'stopped';

export interface RemoteStatus {
  url: string;
  why: 'general' | 'write';
  state: LiveState;
  /** events received per minute (accepted by the checks) */
  perMinute: number;
  /** seconds between the newest event's created_at and its arrival (null before the first) */
  lag: number | null;
  events: number;
  stored: number;
  /** events caught up after disconnects (stored) */
  caughtUp: number;
  reconnects: number;
  cutOffs: number;
  /** last cut-off or connection error */
  lastProblem: string | null;
  /** ms epoch of the next connection attempt while waiting */
  retryAt: number | null;
}

export interface CatchUp {
  /** fetches events of the kinds created since `from` (seconds); resolves with those stored */
  (url: string, from: number, signal: AbortSignal): Promise<number>;
}

export interface RemoteDeps {
  url: string;
  why: 'general' | 'write';
  kinds: number[];
  limits: LiveLimits;
  sink: EventSink;
  catchUp: CatchUp;
  log: Logger;
  /** second of the last complete fetch of this relay (the directory's cursors): caught up at the first connect */
  crawledUpTo?: number;
  resolve?: (url: string, allowPrivate: boolean) => Promise<Target>;
  /** told each accepted event (counters of the live set) */
  onEvent?: (stored: boolean) => void;
}

const nowSec = () => Math.floor(Date.now() / 1000);

/** A connection that lasted this long resets the reconnect backoff. */
const STABLE_MS = 30_000;

export class LiveRemote {
  state: LiveState = 'connecting';
  private readonly stop = new AbortController();
  private readonly rate = new MinuteRate();
  private lag: number | null = null;
  private events = 0;
  private stored = 0;
  private caughtUp = 0;
  private reconnects = 0;
  private cutOffs = 0;
  private offences = 0;
  private lastProblem: string | null = null;
  private retryAt: number | null = null;
  /** newest second fully delivered: catch-up starts here */
  private cursor: number | undefined;
  private running: Promise<void> | null = null;

  constructor(private readonly d: RemoteDeps) {
    this.cursor = d.crawledUpTo;
  }

  get url(): string { return this.d.url; }

  start(): void {
    this.running ??= this.loop().catch((e: unknown) => { this.d.log.error({ url: this.d.url, err: e }, 'live: remote loop crashed'); });
  }

  async close(): Promise<void> {
    this.stop.abort();
    this.state = 'stopped';
    await this.running;
  }

  status(): RemoteStatus {
    const now = Date.now();
    return {
      url: this.d.url, why: this.d.why, state: this.state, perMinute: this.rate.perMinute(now), lag: this.lag,
      events: this.events, stored: this.stored, caughtUp: this.caughtUp, reconnects: this.reconnects, cutOffs: this.cutOffs,
      lastProblem: this.lastProblem, retryAt: this.state === 'waiting' || this.state === 'cut-off' ? this.retryAt : null,
    };
  }

  private async loop(): Promise<void> {
    const signal = this.stop.signal;
    const L = this.d.limits;
    let failures = 0;
    while (!signal.aborted) {
      this.state = 'connecting';
      const outcome = await this.session(signal);
      if (signal.aborted) break;
      let wait: number;
      if (outcome.hostile) {
        this.cutOffs++;
        this.offences++;
        wait = Math.min(24 * 3600_000, L.hostileBackoff * 2 ** (this.offences - 1));
        this.state = 'cut-off';
        this.d.log.warn({ url: this.d.url, reason: outcome.reason, waitMs: wait }, 'live: remote cut off');
      } else {
        // a connection that did not last (refused subscription, dropped at once) backs off like a failed connect
        failures = outcome.connected && outcome.lastedMs >= STABLE_MS ? 0 : failures + 1;
        wait = Math.min(L.maxReconnectBackoff, L.reconnectBackoff * 2 ** Math.max(0, failures - 1));
        this.state = 'waiting';
        this.d.log.info({ url: this.d.url, reason: outcome.reason, waitMs: wait }, 'live: remote dropped; reconnecting');
      }
      this.lastProblem = outcome.reason;
      this.retryAt = Date.now() + wait;
      await sleep(wait, signal);
      this.reconnects++;
    }
    this.state = 'stopped';
  }

  /** One connection: subscribe, catch up what came before it, hold until it ends. */
  private async session(signal: AbortSignal): Promise<{ connected: boolean; hostile: boolean; reason: string; lastedMs: number }> {
    const began = Date.now();
    const L = this.d.limits;
    let client: RelayClient;
    try {
      const target = await (this.d.resolve ?? resolveTarget)(this.d.url, L.allowPrivate);
      client = await RelayClient.connect(target, { connectTimeout: L.connectTimeout, maxFrame: L.maxEventBytes + 1024, maxPayload: Math.max(1 << 20, L.maxEventBytes * 2) }, signal);
    } catch (e) {
      return { connected: false, hostile: false, reason: `connect: ${(e as Error).message}`, lastedMs: 0 };
    }
    const since = nowSec();
    // one second earlier on the wire: relays that compare since exclusively (nostr-rs-relay) would
    // otherwise leave out what is published within the second we connect
    const filter: Filter = { kinds: this.d.kinds, since: since - 1 };
    const events = new TokenBucket(L.eventsPerSecond, L.eventsPerSecond * 10, Date.now());
    const bytes = new TokenBucket(L.bytesPerSecond, L.bytesPerSecond * 10, Date.now());
    let pending = 0;
    let newest = since;
    let end: { hostile: boolean; reason: string } | null = null;
    let wake: () => void = () => {};
    const ended = new Promise<void>((r) => { wake = r; });
    const finish = (hostile: boolean, reason: string) => {
      if (end) return;
      end = { hostile, reason };
      client.close();
      wake();
    };
    const onStop = () => finish(false, 'stopped');
    signal.addEventListener('abort', onStop, { once: true });
    client.onClose = (reason) => finish(false, reason);
    const maxFutureSec = Math.floor(L.maxFuture / 1000);
    client.subscribe([toWire(filter)], {
      event: (raw, size) => {
        if (end) return;
        const now = Date.now();
        if (!events.take(now, 1) || !bytes.take(now, size)) return finish(true, `flood: more than ${L.eventsPerSecond} events/s or ${L.bytesPerSecond} bytes/s`);
        const c = checkLiveEvent(raw, size, filter, Math.floor(now / 1000), maxFutureSec, L.maxEventBytes);
        if (c.fault === 'oversized') return; // dropped unread: too big for us, not a lie
        if (!c.ev) return finish(true, `${c.fault}: ${c.detail}`);
        if (pending >= L.maxPending) return finish(true, `flood: more than ${L.maxPending} events waiting to be stored`);
        const ev = c.ev;
        this.events++;
        this.rate.add(now);
        this.lag = Math.max(0, Math.floor(now / 1000) - ev.created_at);
        pending++;
        this.d.sink.put(ev).then((st) => {
          this.d.log.debug({ url: this.d.url, id: ev.id, kind: ev.kind, status: st }, 'live: event');
          if (st === 'invalid') return finish(true, `forged: an event whose id or signature is wrong (${ev.id.slice(0, 12)}…)`);
          if (st === 'stored' || st === 'ephemeral') this.stored++;
          this.d.onEvent?.(st === 'stored');
          // the newest second this connection delivered and the home decided (a forgery never moves it)
          if (st !== 'rejected') newest = Math.max(newest, Math.min(ev.created_at, nowSec()));
        }, () => {}).finally(() => { pending--; });
      },
      eose: () => {},
      closed: (reason) => finish(false, `subscription closed: ${reason}`),
    });
    this.state = 'live';
    this.lastProblem = null;
    this.retryAt = null;
    // What was published between the previous connection (or the last crawl) and this one.
    const from = this.cursor;
    const caught = from === undefined ? Promise.resolve(true) : this.d.catchUp(this.d.url, from, signal)
      .then((n) => { this.caughtUp += n; return true; })
      .catch((e: unknown) => { this.d.log.info({ url: this.d.url, err: (e as Error).message }, 'live: catch-up failed; retried at the next connection'); return false; });
    await ended;
    signal.removeEventListener('abort', onStop);
    // Everything created from `since` on flowed through this subscription until it ended: the
    // next connection's catch-up starts at the newest event delivered (its lookback covers events
    // that arrive late) — unless this connection's own catch-up did not finish: then from where
    // that one started.
    this.cursor = (await caught) ? newest : from;
    const e = end as unknown as { hostile: boolean; reason: string };
    return { connected: true, ...e, lastedMs: Date.now() - began };
  }
}
