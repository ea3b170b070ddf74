// A pause that an abort ends early: crawls, queues and followers wait between attempts, and a stop
// (SIGTERM, a run's end) must not wait out their backoff.

/** Resolves after `ms`, or at once when `signal` aborts (never rejects). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    if (ms <= 0 || signal?.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() { clearTimeout(t); signal?.removeEventListener('abort', done); resolve(); }
    signal?.addEventListener('abort', done, { once: true });
  });
}
