// A counting semaphore with shares: at most `max` holders in all, at most `perOwner` with one owner
// and at most `perTarget` on one target. A holder waits while any of the three is full; a release
// wakes every waiter that fits now, in arrival order, so one owner at its share does not hold up
// the others behind it. The lookup on a miss bounds its connections with it: an owner is the client
// address whose lookup opened the connection, a target the remote host, so a few slow remotes named
// by one client cannot hold every connection (src/spider/lookup/asker.ts).

interface Waiter { owner: string; target: string; grant(): void }

export class FairSlots {
  private used = 0;
  private readonly byOwner = new Map<string, number>();
  private readonly byTarget = new Map<string, number>();
  private readonly waiters: Waiter[] = [];

  constructor(readonly max: number, readonly perOwner: number, readonly perTarget: number) {}

  private fits(owner: string, target: string): boolean {
    return this.used < this.max && (this.byOwner.get(owner) ?? 0) < this.perOwner && (this.byTarget.get(target) ?? 0) < this.perTarget;
  }

  private hold(owner: string, target: string): () => void {
    this.used++;
    this.byOwner.set(owner, (this.byOwner.get(owner) ?? 0) + 1);
    this.byTarget.set(target, (this.byTarget.get(target) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.used--;
      const o = this.byOwner.get(owner)! - 1;
      if (o === 0) this.byOwner.delete(owner); else this.byOwner.set(owner, o);
      const t = this.byTarget.get(target)! - 1;
      if (t === 0) this.byTarget.delete(target); else this.byTarget.set(target, t);
      this.wake();
    };
  }

  private wake(): void {
    for (let i = 0; i < this.waiters.length && this.used < this.max;) {
      const w = this.waiters[i]!;
      if (this.fits(w.owner, w.target)) {
        this.waiters.splice(i, 1);
        w.grant();
      } else i++;
    }
  }

  /**
   * A slot for `owner` on `target`: resolves with its release, or null when `signal` aborted or
   * `maxWaitMs` passed first.
   */
  take(owner: string, target: string, signal?: AbortSignal, maxWaitMs = Infinity): Promise<(() => void) | null> {
    if (signal?.aborted) return Promise.resolve(null);
    if (this.fits(owner, target)) return Promise.resolve(this.hold(owner, target));
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const w: Waiter = {
        owner, target,
        grant: () => { done(); resolve(this.hold(owner, target)); },
      };
      const giveUp = () => {
        const i = this.waiters.indexOf(w);
        if (i >= 0) this.waiters.splice(i, 1);
        done();
        resolve(null);
      };
      const done = () => { clearTimeout(timer); signal?.removeEventListener('abort', giveUp); };
      if (Number.isFinite(maxWaitMs)) timer = setTimeout(giveUp, maxWaitMs);
      signal?.addEventListener('abort', giveUp, { once: true });
      this.waiters.push(w);
    });
  }

  /** Holders now, in all and of one owner / on one target. */
  get inUse(): number { return this.used; }
  ownerHolds(owner: string): number { return this.byOwner.get(owner) ?? 0; }
  targetHolds(target: string): number { return this.byTarget.get(target) ?? 0; }
  get waiting(): number { return this.waiters.length; }
}
