// Figures over a relay's check history (pure): uptime over a window, round-trip percentiles, and the
// per-day uptime of the detail page's bar.
// - uptime over a window = online checks / checks whose time falls in (now - window, now]; null
//   when there was no check. Checks are evenly spaced by the monitor's interval, so the count ratio
//   is the time ratio; a relay checked more often (the first check right after discovery) weighs
//   those checks like the others.
// - percentiles by nearest rank over the online checks of the month window: pN is the smallest
//   value with at least N% of the values at or below it.
import type { Percentiles, RelayStats, Snapshot } from './types.js';

export const DAY = 86_400_000;
export const WEEK = 7 * DAY;

export function uptime(snaps: readonly Snapshot[], now: number, windowMs: number): number | null {
  let checks = 0, online = 0;
  for (const s of snaps) {
    if (s.t <= now - windowMs || s.t > now) continue;
    checks++;
    if (s.on) online++;
  }
  return checks === 0 ? null : online / checks;
}

/** Nearest-rank percentile of ascending `sorted`; null when empty. */
export function percentile(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(sorted.length, rank) - 1];
}

export function percentiles(values: readonly number[]): Percentiles {
  const sorted = [...values].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p90: percentile(sorted, 90), p99: percentile(sorted, 99), n: sorted.length };
}

/** Uptime and RTT figures of one relay as of `now`; `monthMs` is the retention (default 30 days). */
export function relayStats(snaps: readonly Snapshot[], now: number, monthMs = 30 * DAY): RelayStats {
  const inMonth = snaps.filter((s) => s.t > now - monthMs && s.t <= now);
  const online = inMonth.filter((s) => s.on);
  return {
    at: now,
    uptimeDay: uptime(inMonth, now, DAY),
    uptimeWeek: uptime(inMonth, now, WEEK),
    uptimeMonth: uptime(inMonth, now, monthMs),
    checks: inMonth.length,
    rttOpen: percentiles(online.flatMap((s) => (s.o === undefined ? [] : [s.o]))),
    rttRead: percentiles(online.flatMap((s) => (s.r === undefined ? [] : [s.r]))),
  };
}

export interface DayUptime {
  /** ms since epoch of the UTC day's start */
  day: number;
  checks: number;
  online: number;
}

/** One entry per UTC day, oldest first, for the `days` days ending with today's. */
export function dailyUptime(snaps: readonly Snapshot[], now: number, days = 30): DayUptime[] {
  const today = Math.floor(now / DAY) * DAY;
  const first = today - (days - 1) * DAY;
  const out: DayUptime[] = Array.from({ length: days }, (_, i) => ({ day: first + i * DAY, checks: 0, online: 0 }));
  for (const s of snaps) {
    if (s.t < first || s.t > now) continue;
    const d = out[Math.floor((s.t - first) / DAY)];
    d.checks++;
    if (s.on) d.online++;
  }
  return out;
}

/** At most `max` snapshots, evenly thinned (the newest kept), for charts. */
export function thin<T>(items: readonly T[], max: number): T[] {
  if (items.length <= max) return [...items];
  const out: T[] = [];
  const step = items.length / max;
  for (let i = 0; i < max; i++) out.push(items[Math.min(items.length - 1, Math.floor(items.length - 1 - (max - 1 - i) * step))]);
  return out;
}
