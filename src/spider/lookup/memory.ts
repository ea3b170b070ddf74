// What the lookup on a miss remembers per author and kind: the lookup in flight (a second REQ for
// the same author joins it instead of asking the network again) and the lookups done recently,
// found or not (a miss is not asked again for `remember` ms; a stale list the network has no newer
// version of is not asked again either). Bounded: at most `max` remembered, the oldest forgotten
// first, expired ones dropped as they are met.

export const lookupKey = (pubkey: string, kind: number): string => `${pubkey}:${kind}`;

export class LookupMemory {
  /** key -> lookup in flight */
  private readonly inFlight = new Map<string, Promise<void>>();
  /** key -> when it may be looked up again (ms), in insertion order: the oldest first */
  private readonly recent = new Map<string, number>();

  constructor(private readonly rememberMs: number, private readonly max: number) {}

  /** The lookup in flight for this key, if any. */
  joining(key: string): Promise<void> | undefined {
    return this.inFlight.get(key);
  }

  /** Looked up recently (found or not): not asked again yet. */
  remembered(key: string, now = Date.now()): boolean {
    const until = this.recent.get(key);
    if (until === undefined) return false;
    if (until > now) return true;
    this.recent.delete(key);
    return false;
  }

  /**
   * Marks the keys in flight with `p`; once it settles they are remembered when it resolved true
   * (asked somewhere), else forgotten so a later REQ asks again.
   */
  track(keys: string[], p: Promise<boolean>): Promise<void> {
    const done: Promise<void> = p.then((keep) => keep, () => false).then((keep) => {
      const now = Date.now();
      for (const k of keys) {
        if (this.inFlight.get(k) === done) this.inFlight.delete(k);
        if (keep) this.remember(k, now);
      }
    });
    for (const k of keys) this.inFlight.set(k, done);
    return done;
  }

  remember(key: string, now = Date.now()): void {
    this.recent.delete(key); // re-inserted at the end: the newest
    this.recent.set(key, now + this.rememberMs);
    while (this.recent.size > this.max) this.recent.delete(this.recent.keys().next().value as string);
  }

  get size(): number { return this.recent.size; }
  get pending(): number { return this.inFlight.size; }
}
