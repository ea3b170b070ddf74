// The probes of one check (docs/monitor.md, "Probes"): one WebSocket to the pinned address with the
// spider's client — the check's own connection, handed over, where there is one — in four lanes side
// by side: search, COUNT, NEG-OPEN, and the gated REQ followed by the limits (four requests open at
// most, the spider's subscriptionsPerRelay). Subscriptions end with the connection (no CLOSE each)
// unless the subscription count is probed.
// Read-only: nothing is written. Bounded per relay like the spider's fetches: each request has the
// check's timeout (a probe of a NIP the relay's NIP-11 does not claim at most UNCLAIMED_TIMEOUT_MS), the whole run the probe budget, and the relay may send at most MAX_FRAMES messages
// and MAX_BYTES bytes (frames over 256 KiB close the connection) before the probes are cut short.
import type WebSocket from 'ws';
import { RelayClient } from '../../remote/client.js';
import type { Target } from '../../remote/url.js';
import type { Nip11Info } from '../../remote/nip11.js';
import { probeSearch } from './search.js';
import { probeCount } from './count.js';
import { probeNegentropy } from './negentropy.js';
import { askGated, authObservation } from './auth.js';
import { probeLimits, probesSubscriptions } from './limits.js';
import type { NipProbe, ProbeReport } from './types.js';

export const MAX_FRAMES = 2_000;
/**
 * The most a probe of a NIP the relay does not claim waits for an answer (the check's timeout when
 * that is shorter). Many relays ignore COUNT or NEG-OPEN silently; without a claim, a long wait only
 * delays the check (its lanes run side by side, so the slowest sets its time), and a relay that
 * serves an unclaimed NIP answers within this on any network the monitor can read.
 */
export const UNCLAIMED_TIMEOUT_MS = 3_000;
export const MAX_BYTES = 4 * 1024 * 1024;
const MAX_PAYLOAD = 256 * 1024;

export interface ProbeRunOptions {
  /** per request */
  timeout: number;
  /** the whole run on one relay */
  budget: number;
  nip11: Nip11Info | null;
  nip11Status: ProbeReport['nip11'];
  /** the check's plain REQ: served (EVENT/EOSE), refused auth-required (false), else null */
  readWithoutAuth: boolean | null;
  /** the check's connection, handed over (src/remote/probe.ts, handOver): the probes continue on it; else they open their own */
  socket?: WebSocket;
  /** probe the limits this time (they are probed once a day: src/monitor/monitor.ts) */
  limits?: boolean;
  /** the check's connection was challenged: before its REQ's answer (on connect) or after */
  challenged?: 'first' | 'later';
  signal?: AbortSignal;
}

const skipped: NipProbe = { outcome: 'skipped' };

export async function runProbes(target: Target, o: ProbeRunOptions): Promise<ProbeReport> {
  const started = performance.now();
  const report: ProbeReport = { nip11: o.nip11Status, ms: 0 };
  const ctl = new AbortController();
  const cut = (why: string) => { if (!ctl.signal.aborted) { report.cut ??= why; ctl.abort(); } };
  const onOuter = () => cut('aborted');
  o.signal?.addEventListener('abort', onOuter, { once: true });
  const budget = setTimeout(() => cut(`budget of ${o.budget} ms spent`), o.budget);
  let client: RelayClient | null = null;
  let guard: NodeJS.Timeout | undefined;
  try {
    const copts = { connectTimeout: o.timeout, maxPayload: MAX_PAYLOAD, maxFrame: MAX_PAYLOAD, userAgent: 'orbweaver-monitor' };
    client = o.socket ? RelayClient.adopt(o.socket, target, copts) : await RelayClient.connect(target, copts, ctl.signal);
    const c = client;
    c.onClose = (reason) => cut(reason);
    guard = setInterval(() => {
      if (c.framesIn > MAX_FRAMES || c.bytesIn > MAX_BYTES) cut(`flood: ${c.framesIn} messages, ${c.bytesIn} bytes`);
    }, 25);
    // subscriptions are closed with the connection, unless the subscription count is probed
    const step = { timeout: o.timeout, signal: ctl.signal, tidy: o.limits !== false && probesSubscriptions(o.nip11) };
    const claimed = new Set(o.nip11?.supported_nips ?? []);
    const stepFor = (nip: number) => (claimed.has(nip) ? step : { ...step, timeout: Math.min(o.timeout, UNCLAIMED_TIMEOUT_MS) });
    // four lanes, at most four requests open at once (the spider's subscriptionsPerRelay)
    const gatedThenLimits = async () => {
      const g = await askGated(c, step);
      const l = ctl.signal.aborted || o.limits === false ? undefined : { at: Date.now(), ...(await probeLimits(c, o.nip11, step)) };
      return [g, l] as const;
    };
    const [search, count, negentropy, [gated, limits]] = await Promise.all([probeSearch(c, stepFor(50)), probeCount(c, stepFor(45)), probeNegentropy(c, stepFor(77)), gatedThenLimits()]);
    Object.assign(report, { search, count, negentropy });
    if (limits) report.limits = limits;
    const authRefusals = [search, count, negentropy].filter((p) => /^(NEG-ERR )?auth-required:/.test(p.detail ?? '')).length + (gated ? 1 : 0);
    // on the check's connection, its challenge came first (answer 0 or 1); ours are counted after it
    const earlier = o.challenged ? [{ afterAnswers: o.challenged === 'first' ? 0 : 1 }] : [];
    const shift = o.socket ? 1 : 0;
    report.auth = authObservation([...earlier, ...c.challenges.map((x) => ({ afterAnswers: x.afterAnswers + shift }))], o.readWithoutAuth, gated, authRefusals);
  } catch (e) {
    report.cut ??= `connect: ${(e as Error).message}`.slice(0, 200);
    report.search ??= skipped; report.count ??= skipped; report.negentropy ??= skipped;
  } finally {
    clearTimeout(budget);
    clearInterval(guard);
    o.signal?.removeEventListener('abort', onOuter);
    if (client) {
      client.onClose = undefined; // our own close is no cut
      client.close(500);
    }
  }
  // a flood or a garbage-only relay is cut short: what was still pending is no observation
  report.ms = Math.max(1, Math.ceil(performance.now() - started));
  return report;
}
