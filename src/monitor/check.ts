// One health check of one relay: its NIP-11 document, then a probe (open, read, and write where it
// is allowed), the certificate for wss://, the network by host name. The address is resolved and
// checked once with the spider's SSRF rules and both connections go to it. Bounded: every step has
// the monitor timeout, the NIP-11 document is capped at 64 KiB, frames at 256 KiB; a hostile relay
// (silent, garbage or huge NIP-11, never answering) costs at most a few timeouts.
import { fetchNip11Document, sanitizeNip11, type Nip11Info } from '../remote/nip11.js';
import { resolveTarget, UnsafeUrlError, type Target } from '../remote/url.js';
import type { NostrEvent } from '../nostr/event.js';
import { networkOf, refusalRequirement, wholeMs } from './nip66.js';
import { probeRelay } from '../remote/probe.js';
import type { RelayCheck } from './types.js';
import { runProbes } from './probes/run.js';
import type { ProbeReport } from './probes/types.js';

export interface CheckOptions {
  timeout: number;
  allowPrivate: boolean;
  /** measure rtt-write with this event where the relay's NIP-11 does not say writing is closed to us */
  writeEvent?: NostrEvent;
  signal?: AbortSignal;
  /** run the probes (src/monitor/probes) on an online relay, within this budget (ms) in all; `limits` false: not the limits this time */
  probes?: { budget: number; limits?: boolean };
  /** DNS override (tests) */
  resolve?: (url: string, allowPrivate: boolean) => Promise<Target>;
}

/** The 30166 content: the document as compact JSON, or its checked form when the original is large. */
const MAX_CONTENT = 16 * 1024;

function contentOf(doc: unknown, checked: Nip11Info): string {
  const raw = JSON.stringify(doc);
  return raw.length <= MAX_CONTENT ? raw : JSON.stringify(checked);
}

/**
 * The write test is allowed only when it was asked for (spider.monitorWrite) and the relay's NIP-11
 * does not announce that writing needs auth or payment or is restricted: those relays would only
 * refuse, and a refusal is no round-trip time.
 */
export function writeAllowed(nip11: Nip11Info | null): boolean {
  const l = nip11?.limitation;
  return !(l?.auth_required || l?.payment_required || l?.restricted_writes);
}

export async function checkRelay(url: string, o: CheckOptions): Promise<RelayCheck> {
  const check: RelayCheck = { url, checkedAt: Date.now(), network: networkOf(url), online: false, rtt: {}, nip11: null, observed: {} };
  let target: Target;
  try {
    target = await (o.resolve ?? resolveTarget)(url, o.allowPrivate);
  } catch (e) {
    check.error = (e as Error).message.slice(0, 300);
    if (e instanceof UnsafeUrlError) check.refused = true;
    return check;
  }
  const n11 = await fetchNip11Document(target, o.timeout, o.signal);
  if (n11.doc !== null) {
    check.nip11 = sanitizeNip11(n11.doc);
    if (check.nip11) {
      check.rtt.nip11 = wholeMs(n11.ms);
      check.nip11Json = contentOf(n11.doc, check.nip11);
    }
  }
  const write = o.writeEvent && writeAllowed(check.nip11) ? o.writeEvent : undefined;
  // with probes, the check's connection is handed over to them: one connection per relay and check
  const p = await probeRelay(target, { timeout: o.timeout, write, signal: o.signal, handOver: o.probes !== undefined });
  if (p.ssl) check.ssl = p.ssl;
  if (p.open !== undefined) check.rtt.open = wholeMs(p.open);
  // a refused REQ is a round trip but no read: rtt-read only for a served one (EVENT or EOSE)
  if (p.read !== undefined && p.closed === undefined) check.rtt.read = wholeMs(p.read);
  if (p.write?.ms !== undefined) check.rtt.write = wholeMs(p.write.ms);
  if (write && p.write?.ok) check.acceptedKinds = [write.kind];
  check.answer = p.answer;
  check.online = p.opened && p.answer !== undefined;
  const note = (message: string, of: 'read' | 'write') => {
    const r = refusalRequirement(message, of);
    if (r) check.observed[r] ??= message;
  };
  if (p.closed !== undefined) note(p.closed, 'read');
  if (p.write && !p.write.ok) note(p.write.message, 'write');
  if (p.error) check.error = p.error.slice(0, 300);
  else if (p.closed) check.error = `read: CLOSED ${p.closed}`.slice(0, 300);
  if (o.probes && check.online && !o.signal?.aborted) {
    check.probes = await runProbes(target, {
      timeout: o.timeout, budget: o.probes.budget, nip11: check.nip11, nip11Status: nip11Status(n11, check.nip11),
      readWithoutAuth: p.read !== undefined && p.closed === undefined ? true : check.observed.auth !== undefined ? false : null,
      limits: o.probes.limits, socket: p.socket, challenged: p.challenged ? (p.challengedFirst ? 'first' : 'later') : undefined, signal: o.signal,
    });
  } else if (p.socket) {
    const ws = p.socket;
    ws.close(1000);
    setTimeout(() => { try { ws.terminate(); } catch { /* gone */ } }, 500).unref();
  }
  return check;
}

/** NIP-11 as the probes report it: a valid document, one served but unreadable, or none. */
function nip11Status(f: { doc: unknown; error?: string }, checked: Nip11Info | null): ProbeReport['nip11'] {
  if (checked) return 'valid';
  if (f.doc !== null || /not JSON|larger than/.test(f.error ?? '')) return 'invalid';
  return 'absent';
}
