// One bounded REQ on a probe connection: the events it gets (at most maxEvents; one more ends the
// read as a flood, counted in `extra`), how it ended (EOSE, CLOSED, no answer within the timeout,
// aborted), and when. Every probe that reads goes through it, and it reads through the one bounded
// remote read (remote/read.ts) with the check's timeout as its deadline and READ_BYTES as its bytes,
// so each has the same timeout and the same caps as every other read of a remote.
import type { RelayClient } from '../../remote/client.js';
import { readEvents } from '../../remote/read.js';
import type { WireFilter } from '../../nostr/filter.js';

/** Bytes one probe REQ may bring (the probes' connection as a whole: run.ts MAX_BYTES). */
export const READ_BYTES = 4 * 1024 * 1024;

export interface Asked {
  events: unknown[];
  /** events past maxEvents: 1 when the relay sent more (the read stopped there) */
  extra: number;
  end: 'eose' | 'closed' | 'silent' | 'aborted';
  reason?: string;
  /** ms to the end */
  ms: number;
}

export interface AskOptions {
  timeout: number;
  maxEvents: number;
  signal: AbortSignal;
  /** leave the subscription open after EOSE (the subscription-count probe) */
  keepOpen?: boolean;
  /**
   * send CLOSE after EOSE; else the subscription is only forgotten here: the probes' connection is
   * closed right after them, which ends every subscription (fewer messages per relay). The
   * subscription-count probe needs the others closed first.
   */
  tidy?: boolean;
}

export async function ask(client: RelayClient, filters: WireFilter[], o: AskOptions): Promise<Asked & { id: string }> {
  const started = performance.now();
  // the probes judge what a relay sends, so nothing is dropped as malformed here: the caps decide
  const r = await readEvents<unknown>(client, {
    filters, maxEvents: o.maxEvents, maxBytes: READ_BYTES, deadline: o.timeout, idleTimeout: o.timeout, signal: o.signal,
    check: (raw) => raw,
    atEose: o.keepOpen ? 'keep' : o.tidy ? 'close' : 'forget',
  });
  const out: Asked & { id: string } = { id: r.subId, events: r.kept, extra: r.end === 'flood' ? 1 : 0, end: 'silent', ms: performance.now() - started };
  switch (r.end) {
    // more events than asked: an answer (the probes judge the excess), cut short
    case 'eose': case 'complete': case 'flood': out.end = 'eose'; break;
    case 'closed': out.end = r.reason?.startsWith('connection: ') ? 'aborted' : 'closed'; break;
    case 'aborted': out.end = 'aborted'; break;
    default: out.end = 'silent'; // no answer within the timeout or the bytes
  }
  if (out.end === 'closed' && r.reason !== undefined) out.reason = r.reason.slice(0, 200);
  return out;
}

/** Whole milliseconds, at least 1 (as the check's round-trip times). */
export const whole = (ms: number): number => Math.max(1, Math.ceil(ms));

/** A 32-byte hex key no one holds, for filters that must match (almost) nothing on every relay (not a secret: Math.random is enough). */
export function nobody(): string {
  let h = '';
  for (let i = 0; i < 8; i++) h += Math.floor(Math.random() * 0x1_0000_0000).toString(16).padStart(8, '0');
  return h;
}

/** What each probe is given: the check's timeout, the run's signal, and whether to tidy up (ask.ts). */
export interface Step { timeout: number; signal: AbortSignal; tidy?: boolean }
