// What one client may hold at once, charged to its connection and to its address key (an IPv4
// address or an IPv6 /64, cidr.ts addressKey): filter values kept in the live index and in waiting
// COUNTs, filters every publish may be checked against, and EVENT/AUTH messages in flight (each
// holds a signature check). Opening more connections does not buy more: the address caps hold
// across them. Over a cap the request is refused with `rate-limited:` — the client holds too much
// right now, and closing something frees it — and the connection keeps working.
import type { Config } from '../../config.js';
import type { Filter } from '../../nostr/filter.js';

/**
 * Counters by key. A key whose count drops to zero stays, at zero, until zeros are at least half of
 * the keys (and more than a few): then they are all forgotten at once. Deleting a key the moment it
 * dropped to zero and adding it again at its next query (a query slot taken and given back, output
 * queued and sent: several times per REQ) churned V8's hash table: Tally.add was 7.4% of the relay's
 * main thread answering 9,400 REQs a second (bench/RESULTS.md, fifteenth session). A sweep
 * costs the keys it looks at, at most twice the zeros added since the last one.
 */
export class Tally<K> {
  private m = new Map<K, number>();
  private zeros = 0;
  get(k: K): number { return this.m.get(k) ?? 0; }
  add(k: K, n: number): void {
    const had = this.m.get(k);
    const v = (had ?? 0) + n;
    if (v > 0) {
      if (had === 0) this.zeros--;
      this.m.set(k, v);
    } else if (had !== undefined && had !== 0) {
      this.m.set(k, 0);
      if (++this.zeros > 64 && 2 * this.zeros >= this.m.size) this.sweep();
    }
  }
  private sweep(): void {
    for (const [k, v] of this.m) if (v === 0) this.m.delete(k);
    this.zeros = 0;
  }
  /** keys whose count is above zero */
  get size(): number { return this.m.size - this.zeros; }
  total(): number {
    let n = 0;
    for (const v of this.m.values()) n += v;
    return n;
  }
}

/** What a client's filters weigh: each filter counts one, plus every value of its lists. */
export function filterValues(filters: Filter[]): number {
  let n = 0;
  for (const f of filters) {
    n += 1 + (f.ids?.length ?? 0) + (f.authors?.length ?? 0) + (f.kinds?.length ?? 0);
    for (const [, values] of f.tags ?? []) n += values.length;
  }
  return n;
}

/** A connection as the budgets see it: an identity and its address key. */
export interface BudgetSubject { key: string }

/** Undoes a charge; calling it again does nothing. */
export type Release = () => void;

const once = (fn: () => void): Release => {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    fn();
  };
};

export class ClientBudgets {
  private readonly connValues = new Tally<BudgetSubject>();
  private readonly ipValues = new Tally<string>();
  private readonly ipFilters = new Tally<string>();
  private readonly connFlight = new Tally<BudgetSubject>();
  private readonly ipFlight = new Tally<string>();
  refused = 0;

  constructor(private readonly limits: Config['limits'], private readonly rates: Config['rateLimits']) {}

  /**
   * Charges the filters of a subscription (live: they enter the live index) or of a waiting COUNT
   * to the connection and its address. Returns the release, or the `rate-limited:` refusal.
   */
  holdFilters(conn: BudgetSubject, filters: Filter[], live: boolean): Release | string {
    const { maxValuesPerConnection, maxValuesPerIp, maxFiltersPerIp } = this.limits;
    const values = filterValues(filters);
    const nFilters = live ? filters.length : 0;
    const held = this.connValues.get(conn);
    if (held + values > maxValuesPerConnection) {
      return this.no(`this connection would hold ${held + values} filter values in open subscriptions and queries (at most ${maxValuesPerConnection}); close some subscriptions first`);
    }
    const ipHeld = this.ipValues.get(conn.key);
    if (ipHeld + values > maxValuesPerIp) {
      return this.no(`your IP address would hold ${ipHeld + values} filter values in open subscriptions and queries (at most ${maxValuesPerIp}); close some subscriptions first`);
    }
    const ipFilters = this.ipFilters.get(conn.key);
    if (ipFilters + nFilters > maxFiltersPerIp) {
      return this.no(`your IP address would have ${ipFilters + nFilters} filters in open subscriptions (at most ${maxFiltersPerIp}); close some subscriptions first`);
    }
    this.connValues.add(conn, values);
    this.ipValues.add(conn.key, values);
    this.ipFilters.add(conn.key, nFilters);
    return once(() => {
      this.connValues.add(conn, -values);
      this.ipValues.add(conn.key, -values);
      this.ipFilters.add(conn.key, -nFilters);
    });
  }

  /** One EVENT or AUTH entering the ingest path / signature check; released when answered. */
  inFlight(conn: BudgetSubject): Release | string {
    const { maxInFlightPerConnection: perConn, maxInFlightPerIp: perIp } = this.rates;
    if (perConn > 0 && this.connFlight.get(conn) >= perConn) return this.no(`more than ${perConn} EVENT/AUTH messages of this connection wait for their OK; wait for them`);
    if (perIp > 0 && this.ipFlight.get(conn.key) >= perIp) return this.no(`more than ${perIp} EVENT/AUTH messages from your IP address wait for their OK; wait for them`);
    this.connFlight.add(conn, 1);
    this.ipFlight.add(conn.key, 1);
    return once(() => {
      this.connFlight.add(conn, -1);
      this.ipFlight.add(conn.key, -1);
    });
  }

  figures(): Record<string, number> {
    return { filterValuesHeld: this.ipValues.total(), liveFilters: this.ipFilters.total(), inFlight: this.ipFlight.total(), budgetRefusals: this.refused };
  }

  private no(why: string): string {
    this.refused++;
    return `rate-limited: ${why}`;
  }
}
