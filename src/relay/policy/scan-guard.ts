// The read budget of one REQ, COUNT or NEG-OPEN on this thread: a store signal that stops the scan
// once it has read its budget of index entries or run past its deadline (query-pool.ts has the
// same rule for scans on query threads).
import type { ScanSignal } from '../../store/types.js';

/** A store signal that also stops a scan past its budget or deadline. */
export interface ScanGuard {
  /** passed to the store; its `charge` counts planning and range setup (store/types.ts ScanSignal) */
  signal: ScanSignal;
  /** why the guard stopped the scan, or null */
  readonly tripped: null | 'budget' | 'timeout';
}

export interface ScanLimits {
  /** index entries the scan may read */
  scanBudget: number;
  /** entries between two checks of the signal (store.queryYieldEvery) */
  every: number;
  /** ms the scan may run (read.queryTimeout) */
  timeoutMs: number;
}

/**
 * The store checks the signal once per step of `every` entries, so each check is counted as that
 * many entries; the work of planning and opening ranges is charged in entries too (store/planner.ts
 * planCost). `onTrip` is told once, when the guard stops a scan.
 */
export function scanGuard(outer: { aborted: boolean }, limits: ScanLimits, onTrip: () => void): ScanGuard {
  const { every } = limits;
  const maxSteps = Math.max(1, Math.ceil(limits.scanBudget / every));
  const deadline = Date.now() + limits.timeoutMs;
  let steps = 0;
  let polls = 0;
  let tripped: ScanGuard['tripped'] = null;
  return {
    signal: {
      get aborted() {
        if (outer.aborted) return true;
        if (tripped) return true;
        if (++steps > maxSteps) tripped = 'budget';
        else if (++polls % 4 === 0 && Date.now() > deadline) tripped = 'timeout';
        if (tripped) onTrip();
        return tripped !== null;
      },
      charge(entries: number) {
        steps += entries / every;
      },
      // large index-only COUNTs are counted up to this, then extrapolated (store/query.ts)
      get budgetLeft() {
        return Math.max(0, maxSteps - steps) * every;
      },
    },
    get tripped() { return tripped; },
  };
}
