// The validator: a candidate becomes a directory relay only once it answered as a Nostr
// relay — a WebSocket handshake, then a REQ answered with EOSE, EVENT or CLOSED (or a NOTICE or an
// AUTH challenge, which only a Nostr relay sends). One batch per monitor cycle: least-failed and
// oldest candidates first, `concurrency` at a time, each probe bounded by the timeout. A failure is
// counted; a candidate that failed maxFailures times is dropped; one the SSRF rules refuse (after
// DNS) is dropped at once. A validated relay enters the directory at hop -1 ("found": not on the
// spider's hops) with its sources as referrers; the spider sets its real hop if a crawl reaches it.
import type { Logger } from 'pino';
import { resolveTarget, UnsafeUrlError, type Target } from '../remote/url.js';
import { probeRelay } from '../remote/probe.js';
import type { RelayDirectory } from '../directory/records.js';
import { validationOrder, type CandidateRecord, type CandidateStore } from '../directory/candidates.js';

export const FOUND_HOP = -1;

export interface ValidatorDeps {
  candidates: CandidateStore;
  directory: RelayDirectory;
  /** candidates tried in this call */
  batch: number;
  concurrency: number;
  timeout: number;
  maxFailures: number;
  allowPrivate: boolean;
  /** our own relay's URLs: never validated, dropped */
  selfUrls?: ReadonlySet<string>;
  signal?: AbortSignal;
  log: Logger;
  resolve?: (url: string, allowPrivate: boolean) => Promise<Target>;
}

export interface ValidationSummary {
  tried: number;
  valid: number;
  failed: number;
  /** dropped after maxFailures */
  dropped: number;
  /** dropped: the address is not one we may contact */
  refused: number;
  /** dropped: already in the directory, or our own relay */
  stale: number;
  /** candidates left */
  left: number;
}

/** Whether the relay answered as a Nostr relay; the reason when not. */
export async function validateRelay(url: string, o: Pick<ValidatorDeps, 'timeout' | 'allowPrivate' | 'signal' | 'resolve'>): Promise<{ valid: boolean; refused?: boolean; error?: string }> {
  let target: Target;
  try {
    target = await (o.resolve ?? resolveTarget)(url, o.allowPrivate);
  } catch (e) {
    return { valid: false, refused: e instanceof UnsafeUrlError, error: (e as Error).message };
  }
  const p = await probeRelay(target, { timeout: o.timeout, signal: o.signal });
  if (p.opened && p.answer) return { valid: true };
  return { valid: false, error: p.error ?? (p.opened ? 'no Nostr answer' : 'not reached') };
}

export async function validateCandidates(d: ValidatorDeps): Promise<ValidationSummary> {
  const s: ValidationSummary = { tried: 0, valid: 0, failed: 0, dropped: 0, refused: 0, stale: 0, left: 0 };
  const batch: CandidateRecord[] = [];
  for (const c of d.candidates.all().sort(validationOrder)) {
    if (d.directory.get(c.url) || d.selfUrls?.has(c.url)) {
      s.stale++;
      await d.candidates.remove(c.url);
    } else if (batch.length < d.batch) batch.push(c);
  }
  let next = 0;
  const worker = async () => {
    while (next < batch.length && !d.signal?.aborted) {
      const c = batch[next++];
      s.tried++;
      const r = await validateRelay(c.url, d);
      if (d.signal?.aborted && !r.valid) break; // a stop is not the relay's failure
      if (r.valid) {
        s.valid++;
        await d.candidates.remove(c.url);
        // a crawl may have reached it meanwhile: its hop stays
        if (!d.directory.get(c.url)) {
          const referrers = Object.keys(c.sources).map((src) => `finder: ${src}`);
          await d.directory.discovered(c.url, FOUND_HOP, referrers, Object.values(c.sources).reduce((a, n) => a + n, 0));
        }
        d.log.info({ url: c.url, sources: c.sources }, 'validator: candidate answered as a Nostr relay; added to the directory');
      } else if (r.refused) {
        s.refused++;
        await d.candidates.remove(c.url);
        d.log.info({ url: c.url, reason: r.error }, 'validator: candidate refused by the address rules; dropped');
      } else {
        s.failed++;
        const rec = await d.candidates.failed(c.url, r.error ?? 'failed');
        if (rec && rec.failures >= d.maxFailures) {
          s.dropped++;
          await d.candidates.remove(c.url);
          d.log.info({ url: c.url, failures: rec.failures, error: r.error }, 'validator: candidate failed too often; dropped');
        }
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(d.concurrency, batch.length) }, worker));
  s.left = d.candidates.count();
  return s;
}
