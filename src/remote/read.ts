// One bounded read of a subscription on another relay: the one way this process reads events from
// a remote, for the spider's pages (spider/fetch/page.ts: crawl, NIP-77 fetch by id, seeds, outbox,
// lookup on a miss), the monitor's probes (monitor/probes/ask.ts) and `sync`'s fetch by id
// (sync/fetch-ids.ts). The relay on the other side is an attacker until proven otherwise, so the read
// ends, whatever it sends, at the first of:
//   - EOSE, CLOSED (or the connection's end), the caller's signal;
//   - more EVENTs than `maxEvents` (the REQ's limit: no relay owes more before EOSE): 'flood';
//   - more than `maxBytes` of frames for the subscription, malformed, oversized and refused ones
//     included: 'bytes';
//   - `deadline` ms after the REQ, whatever arrives meanwhile: 'deadline' (a remote that drips one
//     event now and then cannot hold a read open);
//   - `idleTimeout` ms without an event accepted: 'idle' (what is refused keeps nothing alive, and the
//     time spent admitting a window, socket paused, is not silence);
//   - a remote that lies more than it tells the truth: at least HOSTILE_MIN events malformed, outside
//     the filter or refused by admit(), and more of them than events taken: 'hostile'.
// Unchecked events are held only in a window: once WINDOW_EVENTS events or WINDOW_BYTES bytes wait,
// the socket is paused (RelayClient.hold) while the caller's admit() decides on them (the spider: the
// home's known-check, then ids and signatures, admit.ts), and only what it keeps stays. At the end the
// last window is admitted too, unless the read ended as hostile or aborted. Nothing here reads ids or
// signatures itself: `check` (synchronous: shape, size, filter) and `admit` are the caller's.
import type { RelayClient } from './client.js';
import type { WireFilter } from '../nostr/filter.js';

/**
 * Events past which a window is admitted before more is read: the spider's default page size, so a
 * crawl's page is admitted in one go as before (windows of 200 events / 1 MiB cost the crawl 5–13%
 * more CPU in crawl-scale); a page of forgeries is still cut after one window.
 */
export const WINDOW_EVENTS = 500;
/** Bytes (frames) past which a window is admitted before more is read. */
export const WINDOW_BYTES = 4 << 20;
/** Refused events before a read can be called hostile (a few forged copies among honest ones are not). */
export const HOSTILE_MIN = 8;

/**
 * Why `check` drops an event: a lie (shape, mismatch: another kind, author, id or tag) or not
 * (oversized: our own limit; repeat: seen in this read; outside: what was asked but dated outside
 * the filter's since/until, which relays with sloppy bounds send: dropped, not held against them).
 */
export type Drop = 'oversized' | 'shape' | 'mismatch' | 'repeat' | 'outside';

/** What `check` returns for an event it drops (one shared instance per reason: no allocation per event). */
export class Dropped {
  private constructor(readonly why: Drop) {}
  static readonly of: Record<Drop, Dropped> = {
    oversized: new Dropped('oversized'), shape: new Dropped('shape'), mismatch: new Dropped('mismatch'), repeat: new Dropped('repeat'),
    outside: new Dropped('outside'),
  };
}

export type ReadEnd = 'eose' | 'complete' | 'closed' | 'idle' | 'deadline' | 'bytes' | 'flood' | 'hostile' | 'aborted';

export interface ReadBounds {
  /** EVENTs before EOSE past which the read ends as a flood (the REQ's limit) */
  maxEvents: number;
  /** bytes of frames for the subscription (any, dropped ones included) past which the read is cut */
  maxBytes: number;
  /** ms from the REQ to the end, whatever arrives */
  deadline: number;
  /** ms without an event accepted */
  idleTimeout: number;
  signal?: AbortSignal;
}

export interface ReadRequest<T, K> extends ReadBounds {
  filters: WireFilter[];
  /** Synchronous checks of one event (never undefined: an oversized frame is dropped before): what to hold, or Dropped.of[why]. */
  check(raw: unknown, bytes: number): T | Dropped;
  /**
   * Decides on a window of checked events, the socket paused: what to keep, and how many were
   * refused (forged: counted towards 'hostile'). Without it every checked event is kept as is.
   */
  admit?(window: T[]): Promise<{ kept: K[]; invalid: number }>;
  /** the read has all it wants (e.g. every id asked for arrived): it ends as 'complete' */
  complete?(): boolean;
  /** at EOSE: send CLOSE (default), only stop routing (the connection is closed next), or keep the subscription open */
  atEose?: 'close' | 'forget' | 'keep';
  /** a NOTICE matching this before any event is taken as the refusal of this read (relays that refuse REQs with NOTICE) */
  noticeRefusal?: RegExp;
}

export interface ReadResult<K> {
  subId: string;
  end: ReadEnd;
  /** CLOSED's reason ('connection: …' when the connection went away), or the refusing NOTICE */
  reason?: string;
  /** NIP-67: the EOSE said ["finish"] (every stored match was sent) or ["more"] (the relay holds more) */
  finish?: boolean;
  more?: boolean;
  /** what admit() kept (or every checked event, without admit), in arrival order */
  kept: K[];
  /** EVENT frames received for the subscription */
  events: number;
  /** of those, passed by check() */
  accepted: number;
  /** bytes of frames received for the subscription */
  bytes: number;
  dropped: Record<Drop, number>;
  /** refused by admit() */
  invalid: number;
}

export function readEvents<T, K = T>(client: RelayClient, r: ReadRequest<T, K>): Promise<ReadResult<K>> {
  const res: ReadResult<K> = {
    subId: '', end: 'eose', kept: [], events: 0, accepted: 0, bytes: 0,
    dropped: { oversized: 0, shape: 0, mismatch: 0, repeat: 0, outside: 0 }, invalid: 0,
  };
  let window: T[] = [];
  let windowBytes = 0;
  let admitting: Promise<void> | null = null;
  let failure: { error: unknown } | null = null;
  let ended = false;
  let idle: NodeJS.Timeout | undefined;
  let deadline: NodeJS.Timeout | undefined;
  let removeNotice = () => {};
  let settle!: (e?: { error: unknown }) => void;
  const done = new Promise<ReadResult<K>>((resolve, reject) => {
    settle = (e) => (e ? reject(e.error) : resolve(res));
  });

  const hostile = () => {
    const lies = res.dropped.shape + res.dropped.mismatch + res.invalid;
    const truths = res.accepted - res.invalid - window.length;
    return lies >= HOSTILE_MIN && lies > truths;
  };
  const armIdle = () => {
    clearTimeout(idle);
    idle = setTimeout(() => end('idle'), r.idleTimeout);
  };
  const onAbort = () => end('aborted', 'connection: aborted');

  /** Admits the waiting window with the socket paused; the idle timer stops meanwhile. */
  const admitWindow = async (): Promise<void> => {
    const batch = window;
    window = [];
    windowBytes = 0;
    if (batch.length === 0) return;
    const release = client.hold();
    clearTimeout(idle);
    try {
      const a = await r.admit!(batch);
      for (const k of a.kept) res.kept.push(k);
      res.invalid += a.invalid;
    } finally {
      release();
    }
    if (ended) return;
    if (hostile()) end('hostile');
    else armIdle();
  };
  const full = () => window.length >= WINDOW_EVENTS || windowBytes >= WINDOW_BYTES;
  const flush = () => {
    if (admitting || failure || ended) return;
    admitting = admitWindow()
      .catch((error: unknown) => { failure ??= { error }; end('aborted', 'admission failed'); })
      .finally(() => { admitting = null; if (full()) flush(); });
  };

  /** No more frames are taken; the last window is admitted (unless hostile or aborted), then the read resolves. */
  function end(why: ReadEnd, reason?: string): void {
    if (ended) return;
    ended = true;
    res.end = why;
    if (reason !== undefined) res.reason = reason;
    clearTimeout(idle);
    clearTimeout(deadline);
    r.signal?.removeEventListener('abort', onAbort);
    removeNotice();
    if (why === 'eose') {
      const at = r.atEose ?? 'close';
      if (at !== 'keep') client.unsubscribe(res.subId, at === 'close');
    } else if (why !== 'closed') client.unsubscribe(res.subId);
    if (why === 'hostile' || why === 'aborted') { window = []; windowBytes = 0; }
    void (async () => {
      while (admitting) await admitting;
      if (!failure && window.length > 0) await admitWindow().catch((error: unknown) => { failure ??= { error }; });
      settle(failure ?? undefined);
    })();
  }

  const event = (raw: unknown, bytes: number): void => {
    if (ended) return;
    res.events++;
    res.bytes += bytes;
    if (res.bytes > r.maxBytes) return end('bytes');
    if (res.events > r.maxEvents) return end('flood');
    const t = raw === undefined ? Dropped.of.oversized : r.check(raw, bytes);
    if (t instanceof Dropped) {
      res.dropped[t.why]++;
      if ((t.why === 'shape' || t.why === 'mismatch') && hostile()) end('hostile');
      return;
    }
    res.accepted++;
    if (!r.admit) res.kept.push(t as unknown as K);
    else {
      window.push(t);
      windowBytes += bytes;
    }
    if (r.complete?.()) return end('complete');
    if (!admitting) armIdle();
    if (r.admit && full()) flush();
  };

  if (r.signal?.aborted) {
    ended = true;
    res.end = 'aborted';
    res.reason = 'connection: aborted';
    return Promise.resolve(res);
  }
  r.signal?.addEventListener('abort', onAbort, { once: true });
  if (r.noticeRefusal) {
    const re = r.noticeRefusal;
    removeNotice = client.addNoticeListener((text) => { if (res.events === 0 && re.test(text)) end('closed', text); });
  }
  deadline = setTimeout(() => end('deadline'), r.deadline);
  armIdle();
  res.subId = client.subscribe(r.filters, {
    event,
    eose: (hints) => {
      if (hints?.includes('finish')) res.finish = true;
      else if (hints?.includes('more')) res.more = true;
      end('eose');
    },
    closed: (reason) => end('closed', reason || 'closed'),
  });
  return done;
}

/** Everything the read dropped or had refused, as one count (the callers' "invalid"). */
export const refusedCount = (r: ReadResult<unknown>): number =>
  r.dropped.oversized + r.dropped.shape + r.dropped.mismatch + r.dropped.outside + r.invalid + (r.end === 'flood' ? 1 : 0);
