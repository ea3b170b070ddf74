// NIP-86 relay management: JSON-RPC over HTTP POST to the relay URL with
// Content-Type: application/nostr+json+rpc, authorised by NIP-98 for the configured admin pubkeys:
// the u tag must name this relay (auth/own-urls.ts: never the request's Host header), and each
// authorization event is accepted once (a captured header cannot be replayed within its window).
// Changes persist in LMDB (src/policy/lists.ts) and take effect at once. orbweaver adds three methods:
// spidertrigger (start a spider run now), spiderstatus (the spider's progress) and listrefusals
// (the latest refusals with the client IP each went to: the public status page shows no addresses).
import type { HttpRequest, HttpResponse } from '@trufflesuite/uws-js-unofficial';
import type { Config } from '../../config.js';
import type { EventStore } from '../../store/types.js';
import type { SigChecker } from '../auth/nip42.js';
import type { Logger } from '../../lib/logger.js';
import { checkHttpAuth } from '../auth/nip98.js';
import { parseCidr } from '../../policy/cidr.js';
import { parsePubkey } from '../../nostr/keys.js';
import type { Access } from '../policy/access.js';

export const RPC_CONTENT_TYPE = 'application/nostr+json+rpc';
const MAX_BODY = 64 * 1024;
/** allowed distance of an authorization event's created_at from now, seconds (NIP-98 suggests 60) */
const MAX_AGE_SECONDS = 60;

/**
 * Authorization events already accepted, until their created_at window has passed; a replay
 * inside the window is refused. Keyed by the signature, not the id: the same request signed twice
 * in one second has the same id but a new signature (BIP-340 signing is randomised and its
 * signatures are not malleable), while a captured header replayed is byte for byte the same.
 * Only events that passed every check (an admin's signature) are remembered, so the set holds
 * what the admins sent in the last minute.
 */
export class ReplayGuard {
  private seen = new Map<string, number>();
  constructor(private readonly windowSeconds: number) {}

  /** true the first time a signature is offered, false on a replay */
  first(sig: string, createdAt: number, now = Math.floor(Date.now() / 1000)): boolean {
    for (const [k, until] of this.seen) if (until < now) this.seen.delete(k);
    if (this.seen.has(sig)) return false;
    this.seen.set(sig, createdAt + this.windowSeconds);
    return true;
  }
}

/** What the relay handle offers for the spider methods (set by whoever starts the spider). */
export interface SpiderControl {
  /** start a run now; resolves with whatever describes the run (or that one is already running) */
  trigger(): unknown | Promise<unknown>;
  status(): unknown | Promise<unknown>;
}

export class RpcError extends Error {}

export interface ManagementDeps {
  config: Config;
  store: EventStore;
  verifier: SigChecker;
  access: Access;
  logger: Logger;
  spider: () => SpiderControl | undefined;
}

type Method = (params: unknown[]) => unknown | Promise<unknown>;

const str = (v: unknown, what: string): string => {
  if (typeof v !== 'string' || v.length === 0) throw new RpcError(`${what} must be a non-empty string`);
  return v;
};
const reasonOf = (v: unknown): string => (typeof v === 'string' ? v.slice(0, 500) : '');
const pubkey = (v: unknown): string => {
  const h = parsePubkey(str(v, 'pubkey'));
  if (!h) throw new RpcError('pubkey must be 64 hex characters or an npub');
  return h;
};
const kind = (v: unknown): number => {
  const k = typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v;
  if (!Number.isInteger(k) || (k as number) < 0 || (k as number) > 65535) throw new RpcError('kind must be an integer 0-65535');
  return k as number;
};

export function managementMethods(d: ManagementDeps): Record<string, Method> {
  const { lists } = d.access;
  const spider = () => {
    const s = d.spider();
    if (!s) throw new RpcError('the spider is not enabled on this relay (set ORBWEAVER_SPIDER=1)');
    return s;
  };
  const methods: Record<string, Method> = {
    supportedmethods: () => Object.keys(methods),
    banpubkey: async ([pk, reason]) => {
      const h = pubkey(pk);
      await lists.delete('allowedPubkeys', h);
      await lists.put('bannedPubkeys', h, reasonOf(reason));
      return true;
    },
    allowpubkey: async ([pk, reason]) => {
      const h = pubkey(pk);
      await lists.delete('bannedPubkeys', h);
      await lists.put('allowedPubkeys', h, reasonOf(reason));
      return true;
    },
    listbannedpubkeys: () => [
      ...[...lists.configBanned].map((p) => ({ pubkey: p, reason: 'config: policy.pubkeyDeny' })),
      ...lists.list('bannedPubkeys').map((e) => ({ pubkey: e.key, reason: e.reason })),
    ],
    listallowedpubkeys: () => [
      ...[...lists.configAllowed].map((p) => ({ pubkey: p, reason: 'config: policy.pubkeyAllow' })),
      ...lists.list('allowedPubkeys').map((e) => ({ pubkey: e.key, reason: e.reason })),
    ],
    banevent: async ([id, reason]) => {
      const h = str(id, 'event id').toLowerCase();
      if (!/^[0-9a-f]{64}$/.test(h)) throw new RpcError('event id must be 64 hex characters');
      await lists.put('bannedEvents', h, reasonOf(reason));
      await d.store.remove(h);
      return true;
    },
    allowevent: async ([id]) => {
      await lists.delete('bannedEvents', str(id, 'event id').toLowerCase());
      return true;
    },
    listbannedevents: () => lists.list('bannedEvents').map((e) => ({ id: e.key, reason: e.reason })),
    allowkind: async ([k]) => {
      const n = kind(k);
      await lists.delete('deniedKinds', String(n));
      await lists.put('allowedKinds', String(n));
      return true;
    },
    disallowkind: async ([k]) => {
      const n = kind(k);
      await lists.delete('allowedKinds', String(n));
      await lists.put('deniedKinds', String(n));
      return true;
    },
    listallowedkinds: () => [
      ...new Set([
        ...lists.configKindAllow.list().filter((k): k is number => typeof k === 'number'),
        ...lists.list('allowedKinds').map((e) => Number(e.key)),
      ]),
    ].sort((a, b) => a - b),
    listdisallowedkinds: () => lists.list('deniedKinds').map((e) => Number(e.key)).sort((a, b) => a - b),
    blockip: async ([ip, reason]) => {
      const t = str(ip, 'ip').trim();
      if (!parseCidr(t)) throw new RpcError('ip must be an IPv4 or IPv6 address or CIDR range');
      await lists.put('blockedIps', t, reasonOf(reason));
      d.access.dropBlocked();
      return true;
    },
    unblockip: async ([ip]) => {
      await lists.delete('blockedIps', str(ip, 'ip').trim());
      return true;
    },
    listblockedips: () => [
      ...lists.configIpDeny.list().map((ip) => ({ ip, reason: 'config: policy.ipDeny' })),
      ...lists.list('blockedIps').map((e) => ({ ip: e.key, reason: e.reason })),
    ],
    changerelayname: async ([v]) => { await lists.put('info', 'name', str(v, 'name')); return true; },
    changerelaydescription: async ([v]) => { await lists.put('info', 'description', typeof v === 'string' ? v : str(v, 'description')); return true; },
    changerelayicon: async ([v]) => { await lists.put('info', 'icon', str(v, 'icon URL')); return true; },
    listrefusals: () => d.access.refusals.addressed(),
    spidertrigger: async () => (await spider().trigger()) ?? true,
    spiderstatus: async () => (await spider().status()) ?? null,
  };
  return methods;
}

/** Handles POST / when its Content-Type is application/nostr+json+rpc. */
export function createManagementHandler(d: ManagementDeps): (res: HttpResponse, req: HttpRequest, done?: () => void) => void {
  const methods = managementMethods(d);
  // an event is accepted until its created_at + MAX_AGE_SECONDS: remembered a second longer
  const replays = new ReplayGuard(MAX_AGE_SECONDS + 1);
  return (res, req, done = () => {}) => {
    // uWS: everything from req must be read before the first await
    const authHeader = req.getHeader('authorization');
    const url = req.getUrl();
    const query = req.getQuery();
    let aborted = false;
    res.onAborted(() => { aborted = true; done(); });
    const send = (status: string, body: unknown) => {
      done(); // the request no longer counts against its address
      if (aborted) return;
      res.cork(() => {
        res.writeStatus(status)
          .writeHeader('Content-Type', 'application/json')
          .writeHeader('Access-Control-Allow-Origin', '*')
          .end(JSON.stringify(body));
      });
    };
    const run = async (body: Buffer, urls: string[]) => {
      const auth = await checkHttpAuth({ header: authHeader, method: 'POST', urls, body, maxAgeSeconds: MAX_AGE_SECONDS }, d.verifier);
      if ('error' in auth) return send('401 Unauthorized', { error: `unauthorized: ${auth.error}` });
      if (!d.access.lists.admins.has(auth.pubkey)) return send('401 Unauthorized', { error: 'unauthorized: this pubkey is not an admin of this relay (adminPubkeys)' });
      if (!replays.first(auth.sig, auth.createdAt)) return send('401 Unauthorized', { error: 'unauthorized: this authorization event was already used; sign a new one for each request' });
      let call: { method?: unknown; params?: unknown };
      try {
        call = JSON.parse(body.toString('utf8'));
      } catch {
        return send('400 Bad Request', { error: 'request body is not JSON' });
      }
      const name = typeof call?.method === 'string' ? call.method : '';
      const fn = Object.hasOwn(methods, name) ? methods[name] : undefined;
      if (!fn) return send('200 OK', { error: `unsupported method: ${JSON.stringify(name.slice(0, 64))}` });
      const params = Array.isArray(call.params) ? call.params : [];
      Promise.resolve()
        .then(() => fn(params))
        .then(
          (result) => {
            d.logger.info({ admin: auth.pubkey, method: name, params }, 'NIP-86 management call');
            send('200 OK', { result });
          },
          (e) => {
            if (!(e instanceof RpcError)) d.logger.error({ err: e, method: name }, 'NIP-86 method failed');
            send('200 OK', { error: e instanceof RpcError ? e.message : `error: ${(e as Error).message}` });
          },
        );
    };
    const chunks: Buffer[] = [];
    let size = 0;
    res.onData((chunk, last) => {
      size += chunk.byteLength;
      if (size > MAX_BODY) {
        if (!aborted) { send('413 Payload Too Large', { error: `request body larger than ${MAX_BODY} bytes` }); aborted = true; }
        return;
      }
      chunks.push(Buffer.from(chunk.slice(0)));
      if (!last || aborted) return;
      const body = Buffer.concat(chunks);
      void run(body, d.access.ownUrls.httpUrls(url + (query ? `?${query}` : ''))).catch((e) => {
        d.logger.error({ err: e }, 'NIP-86 request failed');
        send('500 Internal Server Error', { error: 'error: internal error' });
      });
    });
  };
}
