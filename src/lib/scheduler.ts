// Runs a task now and then every interval, never two at once: the next run is scheduled when the
// current one ends (interval counted from its start; immediately when it ran longer than that).
// The timer keeps the process alive: a scheduled run is work still to do (`orbweaver spider`
// without --once has nothing else holding it open). stop() clears it so the process can exit.
export interface Scheduler {
  start(): void;
  /** runs now unless a run is in progress, in which case that run's promise is returned */
  runNow<T>(): Promise<T>;
  /** ms since epoch of the next scheduled run, or null */
  nextRun(): number | null;
  stop(): Promise<void>;
}

export function createScheduler<T>(task: () => Promise<T>, intervalMs: number, onError: (e: unknown) => void): Scheduler {
  let current: Promise<T> | null = null;
  let timer: NodeJS.Timeout | null = null;
  let next: number | null = null;
  let started = false;
  let stopped = false;

  const run = (): Promise<T> => {
    if (current) return current;
    const begin = Date.now();
    if (timer) { clearTimeout(timer); timer = null; next = null; }
    current = task().finally(() => {
      current = null;
      if (started && !stopped) schedule(Math.max(0, begin + intervalMs - Date.now()));
    });
    return current;
  };

  const schedule = (delay: number) => {
    if (timer) clearTimeout(timer);
    next = Date.now() + delay;
    // setTimeout caps at ~24.8 days: a longer interval waits in steps
    timer = setTimeout(() => {
      timer = null;
      const left = (next ?? 0) - Date.now();
      if (left > 0) return schedule(left);
      next = null;
      run().catch(onError);
    }, Math.min(delay, 2 ** 31 - 1));
  };

  return {
    start() {
      if (started || stopped) return;
      started = true;
      run().catch(onError);
    },
    runNow<U>() {
      return run() as unknown as Promise<U>;
    },
    nextRun: () => next,
    async stop() {
      stopped = true;
      if (timer) { clearTimeout(timer); timer = null; next = null; }
      if (current) await current.catch(() => undefined);
    },
  };
}
