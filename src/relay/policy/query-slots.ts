// Who may run a REQ scan or COUNT now. At most read.maxConcurrentQueries run per connection and
// read.maxConcurrentQueriesPerIp per address key (IPv4 address or IPv6 /64), so neither one
// connection nor a hundred connections of one client fill the query threads: another client's
// query finds at most that many scans of each client ahead of it. The rest wait in arrival order,
// in one queue per address; the waiting are bounded per connection and per address (beyond:
// rate-limited:).
import type { Config } from '../../config.js';
import { Tally, type BudgetSubject, type Release } from './budgets.js';

interface Waiter {
  conn: BudgetSubject;
  grant(): void;
}

export class QuerySlots {
  private readonly running = new Tally<BudgetSubject>();
  private readonly runningIp = new Tally<string>();
  private readonly waiting = new Tally<BudgetSubject>();
  private readonly queues = new Map<string, Waiter[]>();
  private nWaiting = 0;

  constructor(private readonly read: Config['read']) {}

  /** Resolves with the release of a slot once the query may run; null when too many already wait. */
  async acquire(conn: BudgetSubject): Promise<Release | null> {
    if (this.fits(conn)) {
      this.count(conn.key, conn, 1);
      return this.slot(conn);
    }
    const queue = this.queues.get(conn.key) ?? [];
    if (this.waiting.get(conn) >= this.read.maxQueuedQueries || queue.length >= this.read.maxQueuedQueriesPerIp) return null;
    if (queue.length === 0) this.queues.set(conn.key, queue);
    this.waiting.add(conn, 1);
    this.nWaiting++;
    await new Promise<void>((grant) => queue.push({ conn, grant }));
    return this.slot(conn); // wakeNext counted it as running already
  }

  /** queries running and waiting, over all clients */
  figures(): { queriesRunning: number; queriesWaiting: number } {
    return { queriesRunning: this.runningIp.total(), queriesWaiting: this.nWaiting };
  }

  private fits(conn: BudgetSubject): boolean {
    return this.running.get(conn) < this.read.maxConcurrentQueries && this.runningIp.get(conn.key) < this.read.maxConcurrentQueriesPerIp;
  }

  private count(key: string, conn: BudgetSubject, n: number): void {
    this.running.add(conn, n);
    this.runningIp.add(key, n);
  }

  private slot(conn: BudgetSubject): Release {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.count(conn.key, conn, -1);
      this.wakeNext(conn.key);
    };
  }

  /** Starts the first waiter of this address whose connection has a free slot. */
  private wakeNext(key: string): void {
    const queue = this.queues.get(key);
    if (!queue) return;
    const i = queue.findIndex((w) => this.fits(w.conn));
    if (i < 0) return;
    const [w] = queue.splice(i, 1);
    if (queue.length === 0) this.queues.delete(key);
    this.waiting.add(w.conn, -1);
    this.nWaiting--;
    // counted as running before it resumes, so a query arriving meanwhile cannot take its slot
    this.count(key, w.conn, 1);
    w.grant();
  }
}
