// Shapes shared by the monitor's parts: what one check of a relay found, and the history kept of it.
import type { Nip11Info } from '../remote/nip11.js';
import type { NostrAnswer, SslInfo } from '../remote/probe.js';
import type { ProbeReport } from './probes/types.js';

export type { NostrAnswer, SslInfo };

/** NIP-66 `n`: where a relay lives, told by its host name. */
export type Network = 'clearnet' | 'tor' | 'i2p' | 'loki';

/** The refusals a check met, by the NIP-66 requirement each shows. */
export interface Observed { auth?: string; payment?: string; writes?: string; pow?: string }

/** One health check of one relay (src/monitor/check.ts). */
export interface RelayCheck {
  url: string;
  /** ms since epoch, when the check started */
  checkedAt: number;
  network: Network;
  /** the WebSocket opened and the relay gave a Nostr answer */
  online: boolean;
  /** round-trip times in whole ms (a sub-millisecond answer counts as 1) */
  rtt: { open?: number; read?: number; write?: number; nip11?: number };
  answer?: NostrAnswer;
  /** the relay's NIP-11 document in checked form */
  nip11: Nip11Info | null;
  /** the document as compact JSON for the 30166 content (bounded; the checked form when the original is large) */
  nip11Json?: string;
  ssl?: SslInfo;
  /**
   * requirements the check saw in practice, beside what NIP-11 claims: each is the refusal that
   * showed it (src/monitor/nip66.ts, refusalRequirement). An AUTH challenge alone is none.
   */
  observed: Observed;
  /** kinds the relay was seen to accept: the write test's event answered OK true (NIP-66 `k`) */
  acceptedKinds?: number[];
  /** what the probes saw it serve (src/monitor/probes; absent: probes off, or the relay offline) */
  probes?: ProbeReport;
  /** why it is offline (or what went wrong on the way) */
  error?: string;
  /** the address is not one we may contact (SSRF rules): nothing was contacted */
  refused?: boolean;
}

/** One check as kept in the history: short keys, it is stored once per relay per interval. */
export interface Snapshot {
  /** ms since epoch */
  t: number;
  /** online */
  on: boolean;
  /** rtt open / read / write, ms */
  o?: number;
  r?: number;
  w?: number;
  /** error, shortened */
  e?: string;
  /** probe outcomes by NIP ({"50": "served", "77": "refused", …}; src/monitor/probes/decide.ts, outcomes) */
  p?: Record<string, string>;
}

/** Figures over the history of one relay, as of `at`. */
export interface RelayStats {
  at: number;
  /** online checks / checks over the last day, week and month (retention); null without checks */
  uptimeDay: number | null;
  uptimeWeek: number | null;
  uptimeMonth: number | null;
  /** checks in the month window */
  checks: number;
  /** nearest-rank percentiles of the online checks of the month window, ms */
  rttOpen: Percentiles;
  rttRead: Percentiles;
}

export interface Percentiles { p50: number | null; p90: number | null; p99: number | null; n: number }
