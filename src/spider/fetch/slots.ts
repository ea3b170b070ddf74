// A counting semaphore: at most `max` holders at once, the others wait in arrival order. The spider
// bounds with it the pages it holds in memory across every relay it fetches at once, so memory does
// not grow with `concurrency` or with the number of kinds.
export class Slots {
  private used = 0;
  private readonly waiters: Array<() => void> = [];

  constructor(readonly max: number) {}

  /** Waits for a slot; resolves with its release, or with null when `signal` aborted first. */
  async take(signal?: AbortSignal): Promise<(() => void) | null> {
    while (this.used >= this.max) {
      if (signal?.aborted) return null;
      await new Promise<void>((resolve) => {
        const wake = () => { signal?.removeEventListener('abort', wake); resolve(); };
        this.waiters.push(wake);
        signal?.addEventListener('abort', wake, { once: true });
      });
    }
    if (signal?.aborted) return null;
    this.used++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.used--;
      this.waiters.shift()?.();
    };
  }
}
