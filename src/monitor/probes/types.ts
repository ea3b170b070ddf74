// What the monitor's probes saw a relay do (src/monitor/probes/run.ts), beside what its NIP-11
// claims. Kept with each check (history.ts) and turned into the published tags by decide.ts.

/**
 * How a relay answered one probe:
 * - served: the answer the NIP asks for (search: matching events; NEG-OPEN: NEG-MSG; COUNT: a count)
 * - refused: CLOSED, NEG-ERR, or an error NOTICE in answer to the probe
 * - wrong: an answer, but not the NIP's (search: events that do not match the word or a nonsense
 *   word answered with events; COUNT: no count)
 * - empty: search answered EOSE without events (the relay may hold nothing that matches)
 * - silent: no answer within the check's timeout
 * - skipped: not run (the probe budget was spent, the connection went away)
 */
export type Outcome = 'served' | 'refused' | 'wrong' | 'empty' | 'silent' | 'skipped';

export interface NipProbe {
  outcome: Outcome;
  /** the refusal, the wrong answer or the NOTICE, shortened */
  detail?: string;
  /** ms from the request to the answer, whole (at least 1) */
  ms?: number;
}

export interface SearchProbe extends NipProbe {
  /** the word searched for, and where it came from: a profile the relay served, or the fallback ("nostr") when it served none with a usable word */
  word?: string;
  wordFrom?: 'profile' | 'fallback';
}

export interface CountProbe extends NipProbe {
  /** the answer carried an `hll` field: true when it is 256 registers in hex, false when malformed */
  hll?: boolean;
}

export interface AuthProbe {
  /** the relay sent a NIP-42 challenge right on connect, on demand (after a request), or never */
  challenge: 'connect' | 'demand' | 'none';
  /** the check's plain REQ was served (EVENT or EOSE) without AUTH; null: not seen */
  readWithoutAuth: boolean | null;
  /** the gated REQ (DMs to a random key) was answered auth-required: */
  gated?: string;
}

export interface LimitsProbe {
  /** ms since epoch when they were probed (they are probed once a day per relay; between, the last are kept) */
  at?: number;
  /** a REQ asking `asked` kind 1 events got `got` before EOSE (fewer than asked: clamped, or the relay holds fewer) */
  limit?: { asked: number; got: number };
  /** a REQ with `asked` filters was accepted (EOSE) or refused (CLOSED / NOTICE / no answer) */
  filters?: { asked: number; accepted: boolean; reason?: string };
  /** `asked` subscriptions open at once: the last one accepted or refused (only where NIP-11 claims a small maximum) */
  subscriptions?: { asked: number; accepted: boolean };
}

export interface ProbeReport {
  /** NIP-50 */
  search?: SearchProbe;
  /** NIP-77 */
  negentropy?: NipProbe;
  /** NIP-45 */
  count?: CountProbe;
  /** NIP-42 */
  auth?: AuthProbe;
  limits?: LimitsProbe;
  /** NIP-11 itself: served and valid, served but not a valid document, or none */
  nip11: 'valid' | 'invalid' | 'absent';
  /** the probes were cut short: the budget spent, a flood, the connection lost */
  cut?: string;
  /** ms the probes took in all */
  ms: number;
}
