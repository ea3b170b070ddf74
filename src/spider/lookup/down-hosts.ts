// The lookup's negative cache of remote hosts (host and port, whatever the path): a host whose
// connection failed, that answered too slowly (its page past the deadline, or silent) or that was cut
// off for lying or flooding is not connected to again, by any lookup of any client, until its entry
// expires. Per host, not per URL: three paths on one host are one host that failed. Bounded: at most
// `max` hosts, the oldest forgotten first (a forgotten host only costs one more attempt).

export class DownHosts {
  /** host -> when it may be tried again (ms), oldest first */
  private readonly until = new Map<string, number>();

  constructor(private readonly forMs: number, private readonly max = 10_000) {}

  /** Remembers `host` as failed for `forMs` from `now`. */
  mark(host: string, now = Date.now()): void {
    this.until.delete(host); // re-inserted at the end: the newest
    this.until.set(host, now + this.forMs);
    while (this.until.size > this.max) this.until.delete(this.until.keys().next().value as string);
  }

  isDown(host: string, now = Date.now()): boolean {
    const t = this.until.get(host);
    if (t === undefined) return false;
    if (t > now) return true;
    this.until.delete(host);
    return false;
  }

  /** Hosts remembered now (expired ones that were not asked about since included). */
  get size(): number { return this.until.size; }
}
