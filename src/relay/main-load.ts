// Is the main thread the bottleneck? It runs uWS, parsing, the write path's callbacks and every
// send; point lookups and answer-bounded scans also run on it, because there they cost less than a
// round trip to a query thread (query-pool.ts, runsInline). That holds while the main thread has
// time to spare. When it does not (the directory bench at 600,000 events: the main thread at
// 98-99% while the machine was a quarter idle, issue 74), those reads are better spent on a query
// thread with nothing to do. The measure is the event loop's utilisation (the share of time it was
// not waiting for I/O) over the last window, sampled by a timer that does not keep the process up.
import { performance, type EventLoopUtilization } from 'node:perf_hooks';

/** Utilisation at or above which the main thread counts as saturated. */
export const MAIN_BUSY_UTILISATION = 0.9;
/** How long each sample of the utilisation covers, ms. */
const WINDOW_MS = 200;

export class MainLoad {
  private last: EventLoopUtilization = performance.eventLoopUtilization();
  private saturated = false;
  private readonly timer: NodeJS.Timeout;

  constructor(threshold = MAIN_BUSY_UTILISATION) {
    this.timer = setInterval(() => {
      const now = performance.eventLoopUtilization();
      this.saturated = performance.eventLoopUtilization(now, this.last).utilization >= threshold;
      this.last = now;
    }, WINDOW_MS);
    this.timer.unref();
  }

  /** The main thread was saturated over the last window. */
  get busy(): boolean {
    return this.saturated;
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

/**
 * Where a read that may run on the main thread (runsInline) does run: here, unless this thread is
 * saturated and some query thread has nothing in flight (then the read costs the main thread only
 * the hand-off, and a core that was idle does the rest). Kept pure so the rule is tested apart
 * from any clock.
 */
export function runsHere(inlineable: boolean, mainBusy: boolean, idleQueryThreads: number): boolean {
  return inlineable && !(mainBusy && idleQueryThreads > 0);
}
