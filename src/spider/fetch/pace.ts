// The pace of REQs to one relay. Relays limit REQs per connection and per address (all of our
// connections together), and each rate-limited answer is a REQ spent for nothing that some of them
// count against us too. So instead of only backing off after each refusal, the spider learns the
// spacing the relay allows and keeps every REQ of the crawl under it: `quirks.pace`, ms between the
// starts of two REQs, doubled on each rate-limited answer (from MIN_PACE), kept with the relay's
// quirks and used from the first REQ of its next crawl (and by live mode's catch-ups of it).
// Doubling overshoots the relay's own rate by at most two: the pace is polite, not exact. It never
// shrinks by itself: a relay that was once slow stays paced (its record shows it).
import type { Quirks } from '../../directory/types.js';
import { sleep } from '../../lib/sleep.js';

/** The first pace after a rate-limited answer, ms (10 REQs a second). */
export const MIN_PACE = 100;
/** The slowest pace learnt, ms: a relay that refuses even this is given up on by maxRetries. */
export const MAX_PACE = 60_000;

export class Pacer {
  /** when the latest REQ was given its turn (ms since the epoch) */
  private last = 0;

  /** `quirks` is the relay's, updated in place: the pace learnt is kept with it. */
  constructor(private readonly quirks: Quirks) {}

  /** when the pace last changed: refusals of REQs sent before it were answers to the old pace */
  private changed = 0;

  /**
   * Waits for this REQ's turn and returns its time (for slower()). Turns are handed out in call
   * order, so the parallel subscriptions of a crawl share the pace.
   */
  async turn(signal?: AbortSignal): Promise<number> {
    const pace = this.quirks.pace ?? 0;
    const now = Date.now();
    // from the turn before, at the pace as it is now (a refusal meanwhile slows the next one already)
    const at = pace > 0 ? Math.max(now, this.last + pace) : now;
    this.last = at;
    await sleep(at - now, signal);
    return at;
  }

  /**
   * The REQ given its turn at `sentAt` was answered rate-limited: slower from the next REQ on. Several
   * subscriptions refused at once are one lesson: a REQ sent before the last change does not double it again.
   */
  slower(sentAt: number): void {
    if (sentAt < this.changed) return;
    this.quirks.pace = Math.min(MAX_PACE, Math.max(MIN_PACE, (this.quirks.pace ?? 0) * 2));
    this.changed = Date.now();
  }
}
