// NIP-77 client side: reconcile a local item set with a remote relay over any transport that can
// send NEG-OPEN / NEG-MSG / NEG-CLOSE and route NEG-MSG / NEG-ERR back (remote/client.ts's
// RelayClient does). Used by `orbweaver sync`; the spider can call the same functions.
//
// The remote is untrusted: every answer has a deadline, messages are parsed by the bounded
// protocol code (src/nostr/negentropy.ts), rounds are capped, ids reported twice (which the
// protocol does with frame limits) are reported once. A filter whose set is too big — locally
// (more than maxItems) or for the remote (NEG-ERR "blocked:") — is split into two halves of its
// time range and each half is reconciled on its own, down to single seconds.
import { toWire, type Filter, type WireFilter } from '../nostr/filter.js';
import { Negentropy, NegentropyError, NegentropyStorage } from '../nostr/negentropy.js';
import { bytesToHex, hexToBytes } from '../nostr/negentropy-storage.js';
import { MAX_CREATED_AT } from '../store/codec.js';
import type { NegentropyItems } from '../store/negentropy.js';

export interface NegHandlers {
  msg(hex: string): void;
  /** NEG-ERR: the session is over */
  err(reason: string, max?: number): void;
  /** the connection went away */
  closed(reason: string): void;
}

/** What reconciliation needs of a connection to the remote. */
export interface NegTransport {
  /** sends NEG-OPEN; returns the session's subscription id */
  negOpen(filter: WireFilter, hex: string, handlers: NegHandlers): string;
  negMsg(subId: string, hex: string): void;
  /** sends NEG-CLOSE and stops routing the id */
  negClose(subId: string): void;
  addNoticeListener?(fn: (text: string) => void): () => void;
}

export type SyncErrorKind = 'refused' | 'timeout' | 'protocol' | 'closed' | 'unsupported' | 'incomplete';

export class SyncError extends Error {
  constructor(readonly kind: SyncErrorKind, message: string, readonly max?: number) {
    super(message);
  }
}

export interface ReconcileOptions {
  /** largest message we send, bytes before hex (0: none) */
  frameSizeLimit: number;
  /** deadline for each answer of the remote, ms */
  timeout: number;
  /**
   * ids (hex) the remote has and we lack, each once, as they are learnt; a returned promise is
   * awaited before the next message is sent (a consumer that fetches them can hold the remote back)
   */
  onNeed?(ids: string[]): void | Promise<void>;
  /** ids (hex) we have and the remote lacks, each once */
  onHave?(ids: string[]): void;
  /** called after each round (progress) */
  onRound?(r: ReconcileStats): void;
  signal?: AbortSignal;
  /** most rounds per NEG-OPEN before the remote is given up on */
  maxRounds?: number;
}

export interface ReconcileStats {
  /** NEG-OPENs sent (more than one when a set was split) */
  sessions: number;
  rounds: number;
  /** negentropy payload bytes (hex characters / 2) sent and received */
  bytesUp: number;
  bytesDown: number;
  have: number;
  need: number;
  /** time ranges split because a set was too big (here or at the remote) */
  splits: number;
}

export const emptyStats = (): ReconcileStats => ({ sessions: 0, rounds: 0, bytesUp: 0, bytesDown: 0, have: 0, need: 0, splits: 0 });

const DEFAULT_MAX_ROUNDS = 5000;
/** NOTICE texts that, before any NEG-MSG, mean the remote does not speak NIP-77 (strfry's sync uses the same words) */
const UNSUPPORTED = /error|invalid|unrecognized|bad msg|bad message|could not parse|disabled|unsupported|unknown/i;

/** One NEG-OPEN to the end: the local set against the remote's set for one filter. */
export async function reconcileOnce(t: NegTransport, filter: WireFilter, local: NegentropyStorage, opts: ReconcileOptions, stats: ReconcileStats, seen: Seen): Promise<void> {
  const neg = new Negentropy(local, opts.frameSizeLimit);
  const first = neg.initiate();
  const inbox: Array<{ hex?: string; err?: string; max?: number; closed?: string }> = [];
  let wake: (() => void) | null = null;
  const push = (m: (typeof inbox)[number]) => {
    inbox.push(m);
    wake?.();
  };
  let answered = false;
  const stopNotices = t.addNoticeListener?.((text) => {
    if (!answered && UNSUPPORTED.test(text)) push({ err: `unsupported: ${text}` });
  });
  const subId = t.negOpen(filter, bytesToHex(first), {
    msg: (hex) => push({ hex }),
    err: (reason, max) => push({ err: reason, max }),
    closed: (reason) => push({ closed: reason }),
  });
  stats.sessions++;
  stats.bytesUp += first.length;
  let open = true;
  try {
    for (let round = 0; ; round++) {
      if (round >= (opts.maxRounds ?? DEFAULT_MAX_ROUNDS)) throw new SyncError('protocol', `no agreement after ${round} rounds`);
      const m = await nextAnswer(inbox, (w) => (wake = w), opts.timeout, opts.signal, answered);
      if (m.closed !== undefined) {
        open = false;
        throw new SyncError('closed', m.closed);
      }
      if (m.err !== undefined) {
        open = false;
        if (m.err.startsWith('unsupported: ')) throw new SyncError('unsupported', `the relay does not seem to support NIP-77 (NOTICE: ${m.err.slice(13)})`);
        throw new SyncError('refused', m.err, m.max);
      }
      answered = true;
      let round_;
      try {
        const bytes = hexToBytes(m.hex!);
        // the message (up to ~1 MB of hex from some relays) is not kept while onNeed waits for the
        // fetches below: with many sessions at once those waits held ~1 MB each (a spider crawl)
        m.hex = undefined;
        stats.bytesDown += bytes.length;
        round_ = neg.reconcileAsInitiator(bytes);
      } catch (e) {
        if (e instanceof NegentropyError) throw new SyncError('protocol', `bad negentropy message from the relay: ${e.message}`);
        throw e;
      }
      stats.rounds++;
      const need = seen.fresh(round_.need, 'need');
      const have = seen.fresh(round_.have, 'have');
      stats.need += need.length;
      stats.have += have.length;
      if (need.length) await opts.onNeed?.(need);
      if (have.length) opts.onHave?.(have);
      opts.onRound?.(stats);
      if (!round_.next) return;
      stats.bytesUp += round_.next.length;
      t.negMsg(subId, bytesToHex(round_.next));
    }
  } finally {
    stopNotices?.();
    if (open) t.negClose(subId);
  }
}

function nextAnswer(
  inbox: Array<{ hex?: string; err?: string; max?: number; closed?: string }>,
  setWake: (w: (() => void) | null) => void,
  timeout: number,
  signal: AbortSignal | undefined,
  answered: boolean,
): Promise<(typeof inbox)[number]> {
  if (inbox.length > 0) return Promise.resolve(inbox.shift()!);
  return new Promise((resolve, reject) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      setWake(null);
    };
    const timer = setTimeout(() => {
      done();
      reject(new SyncError('timeout', answered ? `no NEG-MSG within ${timeout} ms` : `no answer to NEG-OPEN within ${timeout} ms (the relay may not support NIP-77)`));
    }, timeout);
    const onAbort = () => {
      done();
      reject(new SyncError('closed', 'stopped'));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    setWake(() => {
      done();
      resolve(inbox.shift()!);
    });
  });
}

/** Ids already reported in this sync: the protocol may report one twice under frame limits. */
export class Seen {
  private readonly need = new Set<string>();
  private readonly have = new Set<string>();
  fresh(ids: string[], which: 'need' | 'have'): string[] {
    const set = which === 'need' ? this.need : this.have;
    const out: string[] = [];
    for (const id of ids) {
      if (set.has(id)) continue;
      set.add(id);
      out.push(id);
    }
    return out;
  }
}

export interface SyncFilterOptions extends ReconcileOptions {
  /** the local set of a filter (store.negentropyItems with a record cap) */
  localItems(f: Filter): Promise<NegentropyItems>;
  /** "now" for the open upper end of a time range that must be split (unix seconds) */
  now: number;
  /** most halvings of one filter's time range */
  maxSplitDepth?: number;
}

/**
 * Reconciles one filter, splitting its time range in halves while a set is too big here
 * (localItems overLimit) or at the remote (NEG-ERR "blocked:"). Results stream through
 * onNeed/onHave; the stats are returned.
 */
export async function reconcileFilter(t: NegTransport, f: Filter, opts: SyncFilterOptions, stats: ReconcileStats = emptyStats(), seen = new Seen()): Promise<ReconcileStats> {
  const maxDepth = opts.maxSplitDepth ?? 40;
  const run = async (part: Filter, depth: number): Promise<void> => {
    const local = await opts.localItems(part);
    if (!local.complete) throw new SyncError('closed', 'stopped');
    let tooBig: string | null = local.overLimit ? 'the local store holds too many matching events for one session' : null;
    if (!tooBig) {
      try {
        await reconcileOnce(t, toWire(part), NegentropyStorage.fromRecords(local.records), opts, stats, seen);
        return;
      } catch (e) {
        if (!(e instanceof SyncError && e.kind === 'refused' && /^blocked:/.test(e.message))) throw e;
        tooBig = e.message;
      }
    }
    const halves = splitTime(part, opts.now);
    if (!halves || depth >= maxDepth) throw new SyncError('refused', `${tooBig} (cannot split the time range further)`);
    stats.splits++;
    await run(halves[0], depth + 1);
    await run(halves[1], depth + 1);
  };
  await run(f, 0);
  return stats;
}

/** [since, mid] and [mid+1, until] of a filter (until open stays open), or null for one second. */
export function splitTime(f: Filter, now: number): [Filter, Filter] | null {
  const since = f.since ?? 0;
  const until = f.until ?? Math.max(now, since);
  if (until <= since) return null;
  const mid = Math.floor((since + Math.min(until, MAX_CREATED_AT)) / 2);
  return [{ ...f, since, until: mid }, { ...f, since: mid + 1 }];
}
