// A live relay's hop, and the operator's bound on it (spider.live.maxHop; docs/spider.md "Which
// relays"). Live mode follows where the directory's pubkeys write, which may be relays the crawl
// never reached: named only by relay lists fetched at the last hop (spider.hops), stored by clients,
// or found by the monitor's finder. The crawl gives no hop to those, and none is made up for them:
// "one beyond the last hop" would be wrong for a list that reached the store another way. So a
// relay's hop is the one its directory record has from the crawl that last found it, or unknown;
// and a bound, once set, keeps only relays of a known hop within it — an operator who bounds where
// the relay connects is not surprised by a relay no crawl placed.
import type { RelayDirectory, RelayRecord } from '../../directory/records.js';
import type { Excluded } from '../excluded.js';

/**
 * The hop at which a crawl last found the relay (0: named by a seed's list), or null when no crawl
 * did: no record, or a record the monitor's finder added (hop -1, src/monitor/validator.ts).
 */
export function crawlHop(rec: Pick<RelayRecord, 'hop'> | undefined): number | null {
  return rec !== undefined && rec.hop >= 0 ? rec.hop : null;
}

/** Whether `maxHop` (-1, the default: no bound) keeps a relay of this hop out of live mode. */
export function beyondMaxHop(hop: number | null, maxHop: number): boolean {
  if (maxHop < 0) return false;
  return hop === null || hop > maxHop;
}

/**
 * `excluded` (ours, unsafe, failing: excluded.ts) and, with a bound, every relay beyond `maxHop`:
 * the one rule for each relay live mode contacts by itself (the live set and the outbox refresh).
 */
export function withinMaxHop(excluded: Excluded, directory: Pick<RelayDirectory, 'get'>, maxHop: number): Excluded {
  if (maxHop < 0) return excluded;
  return (url) => excluded(url) || beyondMaxHop(crawlHop(directory.get(url)), maxHop);
}
