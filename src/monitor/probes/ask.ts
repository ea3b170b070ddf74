// One bounded REQ on a probe connection: the events it gets (at most maxEvents, the rest counted and
// dropped), how it ended (EOSE, CLOSED, no answer within the timeout, aborted), and when. Every probe
// that reads goes through it, so each has the same timeout and the same caps.
import type { RelayClient } from '../../remote/client.js';
import type { WireFilter } from '../../nostr/filter.js';

export interface Asked {
  events: unknown[];
  /** events past maxEvents (dropped) */
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

export function ask(client: RelayClient, filters: WireFilter[], o: AskOptions): Promise<Asked & { id: string }> {
  const started = performance.now();
  return new Promise((resolve) => {
    const out: Asked = { events: [], extra: 0, end: 'silent', ms: 0 };
    let id = '';
    let done = false;
    const finish = (end: Asked['end'], reason?: string) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      o.signal.removeEventListener('abort', onAbort);
      out.end = end;
      if (reason !== undefined) out.reason = reason.slice(0, 200);
      out.ms = performance.now() - started;
      if (end !== 'closed' && !(end === 'eose' && o.keepOpen)) client.unsubscribe(id, o.tidy === true || end !== 'eose');
      resolve({ ...out, id });
    };
    const onAbort = () => finish('aborted');
    const timer = setTimeout(() => finish('silent'), o.timeout);
    o.signal.addEventListener('abort', onAbort, { once: true });
    id = client.subscribe(filters, {
      event(ev) { if (out.events.length < o.maxEvents) out.events.push(ev); else out.extra++; },
      eose() { finish('eose'); },
      closed(reason) { finish(reason.startsWith('connection: ') ? 'aborted' : 'closed', reason); },
    });
    if (o.signal.aborted) onAbort();
  });
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
