// The relay's side of the lookup on a miss: after a REQ's scan, the authors whose directory lists
// the answer lacks or holds only stale (nostr/lookup-miss.ts, read from the answer itself: no second
// store read) are handed to the lookup (the spider's, src/spider/lookup/, wired by src/app), and
// the REQ's EOSE waits for it up to `waitMs`. What it finds is stored through the ingest path and
// reaches the subscription as live events, during the wait or after EOSE.
import { lookupWants, missingAuthors, type AuthorMiss, type HeldEvent } from '../nostr/lookup-miss.js';
import type { Filter } from '../nostr/filter.js';

export interface MissLookup {
  /** ms a REQ waits for its lookup before EOSE; 0 = EOSE at once */
  readonly waitMs: number;
  /** ms: a stored list older than this is looked up again */
  readonly staleMs: number;
  /** the EOSE waits for stale authors too (else only for authors with a kind not held at all) */
  readonly waitStale: boolean;
  /** Starts or joins lookups for the client at `address`; resolves when they are done, null when none runs. */
  request(address: string, misses: AuthorMiss[]): Promise<void> | null;
}

/**
 * Starts the lookups a REQ's answer calls for; returns what its EOSE should wait for, or null:
 * `scanned` are the filters as scanned (with their limits), `held` the answer's events of the kinds
 * they look up (nostr/frame-heads.ts), `answered` how many events the answer had. Authors with a
 * kind not held at all are waited for; authors held only stale are not (unless waitStale): the
 * client has an answer already, and a newer version found comes on the open subscription.
 */
export function lookupAfterScan(lookup: MissLookup, address: string, scanned: Filter[], held: HeldEvent[] | null, answered: number, maxAnswer: number): Promise<void> | null {
  const wants = lookupWants(scanned);
  if (wants.length === 0) return null;
  // an answer cut at the REQ's bound proves nothing about the authors it did not reach
  if (answered >= maxAnswer) return null;
  const staleBefore = lookup.staleMs > 0 ? Math.floor((Date.now() - lookup.staleMs) / 1000) : 0;
  const misses = missingAuthors(wants, held ?? [], staleBefore);
  if (misses.length === 0) return null;
  if (lookup.waitStale) return lookup.request(address, misses);
  const stale = misses.filter((m) => m.stale);
  if (stale.length > 0) void lookup.request(address, stale);
  return stale.length === misses.length ? null : lookup.request(address, misses.filter((m) => !m.stale));
}

/** Resolves after `p` or `ms`, whichever comes first (the timer does not keep the process alive). */
export function boundedWait(p: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([p, new Promise<void>((r) => { timer = setTimeout(r, ms); timer.unref(); })]).finally(() => clearTimeout(timer));
}
