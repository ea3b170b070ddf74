// Who may run a REQ scan or COUNT now. At most read.maxConcurrentQueries run per connection and
// read.maxConcurrentQueriesPerIp per address key (IPv4 address or IPv6 /64), so neither one
// connection nor a hundred connections of one client fill the query threads: another client's
// query finds at most that many scans of each client ahead of it. And the bytes of stored events
// a REQ returns are charged to its address (read.resultBytesPerIp per second, bursts of two
// seconds' worth): an address that asks for results faster waits before its next scan, so clients
// that ask for 30 MB answers again and again (and never read them) cannot keep the query threads
// and the main thread copying. The rest wait in arrival order, in one queue per address; the
// waiting are bounded per connection and per address (beyond: rate-limited:).
import type { Config } from '../../config.js';
import { Tally, type BudgetSubject, type Release } from './budgets.js';

interface Waiter {
  conn: BudgetSubject;
  grant(): void;
}

/** Result bytes an address may still take now (negative: a debt), and when that was computed. */
interface Allowance { bytes: number; at: number }

const BURST_SECONDS = 2;

export class QuerySlots {
  private readonly running = new Tally<BudgetSubject>();
  private readonly runningIp = new Tally<string>();
  private readonly waiting = new Tally<BudgetSubject>();
  private readonly queues = new Map<string, Waiter[]>();
  private readonly allowance = new Map<string, Allowance>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private nWaiting = 0;

  constructor(private readonly read: Config['read'], private readonly clock: () => number = () => performance.now()) {}

  /** Resolves with the release of a slot once the query may run; null when too many already wait. */
  async acquire(conn: BudgetSubject): Promise<Release | null> {
    const queue = this.queues.get(conn.key);
    if (!queue && this.fits(conn) && this.waitMs(conn.key) === 0) {
      this.count(conn, 1);
      return this.slot(conn);
    }
    if (this.waiting.get(conn) >= this.read.maxQueuedQueries || (queue?.length ?? 0) >= this.read.maxQueuedQueriesPerIp) return null;
    const q = queue ?? [];
    if (!queue) this.queues.set(conn.key, q);
    this.waiting.add(conn, 1);
    this.nWaiting++;
    const granted = new Promise<void>((grant) => q.push({ conn, grant }));
    this.wake(conn.key);
    await granted;
    return this.slot(conn); // wake() counted it as running already
  }

  /** Charges the bytes of a REQ's results to the connection's address. */
  charge(conn: BudgetSubject, bytes: number): void {
    const rate = this.read.resultBytesPerIp;
    if (rate <= 0 || bytes <= 0) return;
    const a = this.refill(conn.key);
    this.allowance.set(conn.key, { bytes: a.bytes - bytes, at: a.at });
  }

  /** queries running and waiting, over all clients */
  figures(): { queriesRunning: number; queriesWaiting: number } {
    return { queriesRunning: this.runningIp.total(), queriesWaiting: this.nWaiting };
  }

  private fits(conn: BudgetSubject): boolean {
    return this.running.get(conn) < this.read.maxConcurrentQueries && this.runningIp.get(conn.key) < this.read.maxConcurrentQueriesPerIp;
  }

  private count(conn: BudgetSubject, n: number): void {
    this.running.add(conn, n);
    this.runningIp.add(conn.key, n);
  }

  private slot(conn: BudgetSubject): Release {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.count(conn, -1);
      this.wake(conn.key);
    };
  }

  /** The allowance of an address now; a full one is not stored (quiet clients cost no memory). */
  private refill(key: string): Allowance {
    const now = this.clock();
    const cap = this.read.resultBytesPerIp * BURST_SECONDS;
    const a = this.allowance.get(key);
    if (!a) return { bytes: cap, at: now };
    const bytes = Math.min(cap, a.bytes + ((now - a.at) / 1000) * this.read.resultBytesPerIp);
    if (bytes >= cap) {
      this.allowance.delete(key);
      return { bytes: cap, at: now };
    }
    a.bytes = bytes;
    a.at = now;
    return a;
  }

  /** Milliseconds until the address has paid for the results it took (0: it may start a scan). */
  private waitMs(key: string): number {
    if (this.read.resultBytesPerIp <= 0) return 0;
    const a = this.refill(key);
    return a.bytes >= 0 ? 0 : Math.ceil((-a.bytes / this.read.resultBytesPerIp) * 1000);
  }

  /** Starts the waiters of this address that may run now, in order; or sets a timer for when they may. */
  private wake(key: string): void {
    const queue = this.queues.get(key);
    if (!queue) return;
    const wait = this.waitMs(key);
    if (wait > 0) {
      if (!this.timers.has(key)) {
        const t = setTimeout(() => { this.timers.delete(key); this.wake(key); }, wait);
        t.unref();
        this.timers.set(key, t);
      }
      return;
    }
    for (let i = 0; i < queue.length && this.runningIp.get(key) < this.read.maxConcurrentQueriesPerIp; ) {
      const w = queue[i];
      if (!this.fits(w.conn)) { i++; continue; }
      queue.splice(i, 1);
      this.waiting.add(w.conn, -1);
      this.nWaiting--;
      // counted as running before it resumes, so a query arriving meanwhile cannot take its slot
      this.count(w.conn, 1);
      w.grant();
    }
    if (queue.length === 0) this.queues.delete(key);
  }
}
