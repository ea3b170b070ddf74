// At most `max` events per key in any window of `windowMs`: a log of each key's last `max` event
// times. Unlike a token bucket (a burst of its capacity, then its rate: up to twice the capacity in
// the first window), no window of that length ever holds more than `max`, which is what "at most 4
// connection attempts a minute" promises. Memory: at most `max` numbers per key seen in the last
// window; keys whose log has expired are forgotten. Pure apart from the clock you pass in.

export class SlidingWindows<K> {
  private readonly logs = new Map<K, number[]>();
  private lastSweep = 0;

  /** max <= 0 means unlimited */
  constructor(readonly max: number, readonly windowMs: number) {}

  get unlimited(): boolean { return this.max <= 0; }

  /** Counts one event for `key` at `now` (ms); false, and nothing counted, when the window is full. */
  take(key: K, now: number): boolean {
    if (this.max <= 0) return true;
    if (now - this.lastSweep > this.windowMs) this.sweep(now);
    let log = this.logs.get(key);
    if (!log) this.logs.set(key, (log = []));
    while (log.length > 0 && log[0]! <= now - this.windowMs) log.shift();
    if (log.length >= this.max) return false;
    log.push(now);
    return true;
  }

  /** Undoes the last take() of `key` (a charge that failed elsewhere). */
  give(key: K): void {
    const log = this.logs.get(key);
    log?.pop();
    if (log?.length === 0) this.logs.delete(key);
  }

  get size(): number { return this.logs.size; }

  /** Forgets keys with no event in the last window. */
  sweep(now: number): void {
    this.lastSweep = now;
    for (const [k, log] of this.logs) if (log.length === 0 || log[log.length - 1]! <= now - this.windowMs) this.logs.delete(k);
  }
}
