// What happens to each event a page brings, once the page's own checks passed (shape, size, the
// filter asked: page.ts). On the real network most copies a crawl receives are duplicates, so the
// cheap questions come first and the id and signature check last:
//   1. another relay's copy is being handed on right now (run-wide, by id): wait for its answer;
//   2. the home already holds its id, a newer version of its address, or its deletion (KnownCheck:
//      a store lookup in-process, a batched REQ to the home relay for workers): not checked, not
//      sent. Such a copy is trusted for nothing but the fetch's own paging (a relay that forges one
//      misleads only its own fetch); onCurrent tells its callers it is a copy;
//   3. else its id and signature are checked, once (the ingest path finds the proof of that check
//      on the very object, nostr/verify.ts, and does not check again), and it is handed to the sink without waiting: up to `maxPending` hand-ons stay in
//      flight, so the next page is fetched while the home stores this one.
// The first failed hand-on (a worker that cannot deliver) is thrown by the next admit() or drain().
import type { NostrEvent } from '../../nostr/event.js';
import type { EventVerifier } from '../../nostr/verify.js';
import type { IngestStatus } from '../../ingest/types.js';
import type { EventStore } from '../../store/types.js';
import type { EventSink } from '../../ingest/sink.js';
import type { FetchCounts } from '../../directory/types.js';

/** For each event, what the home already decided without seeing it again, or null when it must be sent. */
export type KnownCheck = (evs: NostrEvent[]) => Promise<Array<IngestStatus | null>>;

/** In-process: the store's read-only precheck (the sink writes into this store). */
export const storeKnown = (store: Pick<EventStore, 'precheck'>): KnownCheck => async (evs) => evs.map((e) => store.precheck(e));

/** A sink that cannot be asked: every event is checked and sent. */
export const nothingKnown: KnownCheck = async (evs) => evs.map(() => null);

export interface HandoffDeps {
  verifier: EventVerifier;
  sink: EventSink;
  known: KnownCheck;
  /** run-wide, shared by every fetch of the process: events handed on and not answered yet */
  inFlight: Map<string, Promise<IngestStatus>>;
  counts: FetchCounts;
  /**
   * Each event that is (now) the home's current version: `copy` false when this fetch's event was
   * checked and stored, true when it is an unchecked copy of what the home holds (check its id
   * before trusting its content).
   */
  onCurrent?: (ev: NostrEvent, copy: boolean) => void;
  /** hand-ons in flight in the whole process (inFlight) before admit() waits for the oldest */
  maxPending: number;
}

const isCurrent = (st: IngestStatus) => st === 'stored' || st === 'duplicate';

export class Admitter {
  private readonly pending = new Set<Promise<void>>();
  private failure: { error: unknown } | null = null;

  constructor(private readonly d: HandoffDeps) {}

  private track(p: Promise<void>): void {
    const t = p.catch((error: unknown) => { this.failure ??= { error }; }).finally(() => this.pending.delete(t));
    this.pending.add(t);
  }

  private rethrow(): void {
    if (this.failure) throw this.failure.error;
  }

  /** A copy of an event another fetch is handing on: counted when that answer comes. */
  private follow(ev: NostrEvent, other: Promise<IngestStatus>): void {
    this.track(other.then((st) => {
      this.d.counts.duplicate++;
      if (isCurrent(st)) this.d.onCurrent?.(ev, true);
    }));
  }

  /**
   * Takes events new to the fetch (page-checked); returns the valid ones — known to the home, or
   * signature-checked and handed on — for the fetch's paging. Counts every one (fetched, duplicate,
   * stored, rejected, invalid, verified).
   */
  async admit(evs: NostrEvent[]): Promise<NostrEvent[]> {
    this.rethrow();
    const { d } = this;
    const c = d.counts;
    const valid: NostrEvent[] = [];
    const ask: NostrEvent[] = [];
    for (const ev of evs) {
      const other = d.inFlight.get(ev.id);
      if (other) { valid.push(ev); this.follow(ev, other); } else ask.push(ev);
    }
    const known = ask.length ? await d.known(ask) : [];
    for (let i = 0; i < ask.length; i++) {
      const ev = ask[i]!;
      const st = known[i] ?? null;
      if (st === 'duplicate') { c.duplicate++; valid.push(ev); d.onCurrent?.(ev, true); continue; }
      // An older version or a deleted event: the home would refuse it; its signature is never checked.
      if (st !== null) { c.rejected++; valid.push(ev); continue; }
      const other = d.inFlight.get(ev.id); // handed on by another fetch while we asked
      if (other) { valid.push(ev); this.follow(ev, other); continue; }
      c.verified++;
      if (d.verifier.check(ev) !== null) { c.invalid++; continue; }
      valid.push(ev);
      const put = d.sink.put(ev);
      d.inFlight.set(ev.id, put);
      this.track(put.then((s) => {
        if (s === 'stored' || s === 'ephemeral') c.stored++;
        else if (s === 'duplicate') c.duplicate++;
        else if (s === 'invalid') c.invalid++;
        else c.rejected++;
        if (isCurrent(s)) d.onCurrent?.(ev, s === 'duplicate');
      }).finally(() => { if (d.inFlight.get(ev.id) === put) d.inFlight.delete(ev.id); }));
    }
    c.fetched += valid.length;
    // Memory: the events handed on and not yet answered, all fetches together, stay bounded.
    while (d.inFlight.size > d.maxPending) {
      const oldest = d.inFlight.values().next().value as Promise<IngestStatus>;
      await oldest.catch(() => { /* its own fetch reports it */ });
      await Promise.resolve(); // let its bookkeeping (removal from inFlight) run
    }
    this.rethrow();
    return valid;
  }

  /** Waits for every hand-on; throws the first that failed. */
  async drain(): Promise<void> {
    while (this.pending.size > 0) await Promise.race(this.pending);
    this.rethrow();
  }
}
