// The scan guard's step rule for a request whose budget is kept by the query pool (query-pool.ts's
// PoolGuard): a query thread (query-worker.ts) and the pool's own thread, for the requests it runs
// itself, each run a scan against one of these, starting from the steps the guard has used and
// handing back the steps taken and whether it tripped. The rule is Access.scanGuard's: each check
// of `aborted` is one step of queryYieldEvery index entries, planning and range setup are charged
// in entries, and the deadline is looked at every fourth check.
export class StepGuard {
  /** set when the request is cancelled (a worker's abort message) */
  abort = false;
  tripped: null | 'budget' | 'timeout' = null;
  private polls = 0;

  constructor(
    public steps: number,
    private readonly maxSteps: number,
    private readonly deadline: number,
    private readonly yieldEvery: number,
    /** the caller's own flag, read directly when the scan runs on the caller's thread */
    private readonly outer?: { readonly aborted: boolean },
  ) {}

  get aborted(): boolean {
    if (this.abort || this.tripped || this.outer?.aborted) return true;
    if (++this.steps > this.maxSteps) this.tripped = 'budget';
    else if (++this.polls % 4 === 0 && Date.now() > this.deadline) this.tripped = 'timeout';
    return this.tripped !== null;
  }

  charge(entries: number): void {
    this.steps += entries / this.yieldEvery;
  }

  /** index entries still allowed (the store counts large index-only COUNTs up to this, then estimates) */
  get budgetLeft(): number {
    return Math.max(0, this.maxSteps - this.steps) * this.yieldEvery;
  }
}
