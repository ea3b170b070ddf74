// NIP-11 relay information, fetched over HTTP(S) from the same pinned address as the WebSocket.
// The document is untrusted: size-capped, parsed defensively, only the fields we use are read.
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { Target } from './url.js';

export interface Nip11Info {
  name?: string;
  software?: string;
  version?: string;
  pubkey?: string;
  /** the relay's own pubkey (NIP-11 `self`) */
  self?: string;
  supported_nips?: number[];
  limitation?: { max_limit?: number; max_subscriptions?: number; max_filters?: number; max_message_length?: number; auth_required?: boolean; payment_required?: boolean; restricted_writes?: boolean; min_pow_difficulty?: number };
  /** topics (NIP-11 `tags`: removed from NIP-11 in b914aef, still served by many relays), for the monitor's NIP-66 `t` */
  tags?: string[];
}

const MAX_DOC = 64 * 1024;

const str = (v: unknown, n = 200) => (typeof v === 'string' ? v.slice(0, n) : undefined);
const posInt = (v: unknown) => (Number.isSafeInteger(v) && (v as number) > 0 ? (v as number) : undefined);

/** Keeps the fields the spider uses, in checked form. */
export function sanitizeNip11(doc: unknown): Nip11Info | null {
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return null;
  const d = doc as Record<string, unknown>;
  const out: Nip11Info = {};
  for (const k of ['name', 'software', 'version'] as const) { const v = str(d[k]); if (v !== undefined) out[k] = v; }
  for (const k of ['pubkey', 'self'] as const) { const v = str(d[k], 64); if (v && /^[0-9a-f]{64}$/.test(v)) out[k] = v; }
  if (Array.isArray(d.supported_nips)) out.supported_nips = d.supported_nips.filter((n) => Number.isSafeInteger(n)).slice(0, 200) as number[];
  if (Array.isArray(d.tags)) out.tags = (d.tags as unknown[]).filter((t): t is string => typeof t === 'string' && t.length > 0 && t.length <= 64).slice(0, 20);
  const lim = d.limitation;
  if (typeof lim === 'object' && lim !== null && !Array.isArray(lim)) {
    const l = lim as Record<string, unknown>;
    out.limitation = {};
    for (const k of ['max_limit', 'max_subscriptions', 'max_filters', 'max_message_length'] as const) { const v = posInt(l[k]); if (v !== undefined) out.limitation[k] = v; }
    for (const k of ['auth_required', 'payment_required', 'restricted_writes'] as const) if (typeof l[k] === 'boolean') out.limitation[k] = l[k] as boolean;
    if (Number.isSafeInteger(l.min_pow_difficulty) && (l.min_pow_difficulty as number) >= 0) out.limitation.min_pow_difficulty = l.min_pow_difficulty as number;
  }
  return out;
}

/** GETs the NIP-11 document; null on any failure (many relays do not serve one). */
export async function fetchNip11(target: Target, timeoutMs: number, signal?: AbortSignal): Promise<Nip11Info | null> {
  const r = await fetchNip11Document(target, timeoutMs, signal);
  return r.doc === null ? null : sanitizeNip11(r.doc);
}

export interface Nip11Fetch {
  /** the parsed JSON (untrusted, any shape), or null */
  doc: unknown;
  /** why there is no document: HTTP status, too large, not JSON, timeout, connection error */
  error?: string;
  /** time to the whole answer, ms */
  ms: number;
}

/**
 * GETs the NIP-11 document as parsed JSON, at most MAX_DOC bytes and timeoutMs in all (a relay that
 * drips its answer is cut off at the timeout), from the pinned address. Never throws.
 */
export function fetchNip11Document(target: Target, timeoutMs: number, signal?: AbortSignal): Promise<Nip11Fetch> {
  const started = performance.now();
  return new Promise((resolve) => {
    const mod = target.secure ? https : http;
    let done = false;
    const finish = (doc: unknown, error?: string) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve({ doc, error, ms: performance.now() - started });
    };
    const req = mod.request({
      method: 'GET',
      host: target.address,
      port: target.port,
      path: target.path,
      servername: net.isIP(target.hostname) ? undefined : target.hostname,
      headers: { Host: target.hostname + (target.port === (target.secure ? 443 : 80) ? '' : `:${target.port}`), Accept: 'application/nostr+json', 'User-Agent': 'orbweaver-spider' },
      signal,
    }, (res) => {
      if (res.statusCode !== 200) { res.resume(); finish(null, `HTTP ${res.statusCode}`); return; }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > MAX_DOC) { req.destroy(); finish(null, `larger than ${MAX_DOC} bytes`); return; }
        chunks.push(c);
      });
      res.on('end', () => {
        try { finish(JSON.parse(Buffer.concat(chunks).toString('utf8'))); } catch { finish(null, 'not JSON'); }
      });
      res.on('error', (e) => finish(null, e.message));
    });
    const timer = setTimeout(() => { req.destroy(); finish(null, `timeout after ${timeoutMs} ms`); }, timeoutMs);
    req.on('error', (e) => finish(null, e.message));
    req.end();
  });
}
