// HTTP on the WebSocket port: NIP-11 (Accept: application/nostr+json, with CORS), the status page,
// /status.json, /metrics in Prometheus text format, /healthz, and pages the composition root adds
// (/directory, /directory.json). HEAD gets the same status and
// headers as GET without the body (uptime checkers use HEAD).
//
// Every request first passes the per-address gate (Access.httpRequest: requests per second, and the
// connection cap shared with WebSockets): past it, 429 with Retry-After. The heavy pages are built
// at most once per limits.pageSnapshot and served from that snapshot meanwhile, so a flood of them
// costs a lookup each, not a build (~0.3 ms each: 64 pipelining sockets got 10,000 a second).
import type { HttpRequest, HttpResponse, TemplatedApp } from '@trufflesuite/uws-js-unofficial';

export interface HttpRoutes {
  nip11: () => string;
  statusPage: () => string;
  metrics: () => string;
  healthy: () => boolean;
  /** the dashboard's figures as JSON (GET /status.json); the query string is passed on */
  statusJson?: (query: URLSearchParams) => string;
  /** POST (NIP-86 management); `done` once it is answered or aborted */
  post?: (res: HttpResponse, req: HttpRequest, done: () => void) => void;
  /** pages other modules add (src/app: /directory); null when the path is not theirs */
  page?: (path: string, query: URLSearchParams) => PageAnswer | null;
}

/** What an added page answers (GET and HEAD); status defaults to 200 OK. */
export interface PageAnswer { status?: string; type: string; body: string }

const CORS: Array<[string, string]> = [
  ['Access-Control-Allow-Origin', '*'],
  ['Access-Control-Allow-Headers', 'Authorization, Content-Type, Accept, *'],
  ['Access-Control-Allow-Methods', 'GET, HEAD, POST, OPTIONS'],
];

interface Answer { status: string; type: string; body: string; headers?: Array<[string, string]> }

function reply(res: HttpResponse, a: Answer, withBody = true): void {
  res.cork(() => {
    res.writeStatus(a.status).writeHeader('Content-Type', a.type);
    for (const [k, v] of a.headers ?? []) res.writeHeader(k, v);
    if (withBody) res.end(a.body);
    // uWS 20.30 treats endWithoutBody(length) as "not responded" and aborts the process: write the
    // length ourselves and end without one (keeps the connection reusable)
    else res.writeHeader('Content-Length', String(Buffer.byteLength(a.body))).endWithoutBody();
  });
}

/** What GET (and HEAD) of a path answers. Reads req synchronously, as uWS requires. */
function answer(routes: HttpRoutes, req: HttpRequest): Answer {
  const url = req.getUrl();
  if (url === '/healthz') {
    const ok = routes.healthy();
    return { status: ok ? '200 OK' : '503 Service Unavailable', type: 'text/plain', body: ok ? 'ok\n' : 'unhealthy\n', headers: [['Cache-Control', 'no-store']] };
  }
  if (url === '/metrics') return { status: '200 OK', type: 'text/plain; version=0.0.4', body: routes.metrics() };
  if (url === '/status.json' && routes.statusJson) {
    return { status: '200 OK', type: 'application/json', body: routes.statusJson(new URLSearchParams(req.getQuery() ?? '')), headers: [['Cache-Control', 'no-store']] };
  }
  if (url === '/' || url === '') {
    if (req.getHeader('accept').includes('application/nostr+json')) return { status: '200 OK', type: 'application/nostr+json', body: routes.nip11(), headers: CORS };
    return { status: '200 OK', type: 'text/html; charset=utf-8', body: routes.statusPage(), headers: [['Cache-Control', 'no-store']] };
  }
  const page = routes.page?.(url, new URLSearchParams(req.getQuery() ?? ''));
  if (page) return { status: page.status ?? '200 OK', type: page.type, body: page.body, headers: [['Cache-Control', 'no-store']] };
  return { status: '404 Not Found', type: 'text/plain', body: 'not found\n' };
}

/** What gates every request (Access.httpRequest). */
export type HttpGate = (ip: string) => { release: () => void } | { refused: string; retryAfter: number };

export interface HttpOptions {
  /** the client address of a request (Access.clientIp) */
  clientIp(res: HttpResponse, req: HttpRequest): string;
  gate: HttpGate;
  /** ms a heavy page's snapshot is served (limits.pageSnapshot); 0 = none */
  snapshotMs: number;
  /** a heavy page was built (not served from its snapshot) */
  onBuild?: () => void;
}

/** Pages built from the whole relay's state: served from a snapshot. /healthz stays live. */
const HEAVY = new Set(['/', '', '/status.json', '/metrics', '/directory', '/directory.json']);
/** distinct snapshots kept (path, query and NIP-11 or not): query strings are the client's to vary */
const MAX_SNAPSHOTS = 32;

export function mountHttp(app: TemplatedApp, routes: HttpRoutes, o?: HttpOptions): void {
  const snapshots = new Map<string, { at: number; a: Answer }>();
  const snapshotMs = o?.snapshotMs ?? 0;
  const cached = (req: HttpRequest): Answer => {
    const url = req.getUrl();
    if (!HEAVY.has(url)) return answer(routes, req);
    if (snapshotMs <= 0) {
      o?.onBuild?.();
      return answer(routes, req);
    }
    const key = `${url}?${req.getQuery() ?? ''}${req.getHeader('accept').includes('application/nostr+json') ? '#nip11' : ''}`;
    const now = performance.now();
    const hit = snapshots.get(key);
    if (hit && now - hit.at < snapshotMs) return hit.a;
    o?.onBuild?.();
    const a = answer(routes, req);
    if (!hit && snapshots.size >= MAX_SNAPSHOTS) {
      for (const [k, v] of snapshots) if (now - v.at >= snapshotMs) snapshots.delete(k);
      if (snapshots.size >= MAX_SNAPSHOTS) return a; // all fresh: this one is not kept
    }
    snapshots.set(key, { at: now, a });
    return a;
  };
  /** Passes the gate (or answers 429); returns the release, or null when refused. */
  const admit = (res: HttpResponse, req: HttpRequest): (() => void) | null => {
    if (!o) return () => {};
    const g = o.gate(o.clientIp(res, req));
    if ('release' in g) return g.release;
    reply(res, { status: '429 Too Many Requests', type: 'text/plain', body: g.refused + '\n', headers: [['Retry-After', String(g.retryAfter)], ...CORS] });
    return null;
  };
  app.options('/*', (res, req) => {
    const release = admit(res, req);
    if (!release) return;
    res.cork(() => {
      res.writeStatus('204 No Content');
      for (const [k, v] of CORS) res.writeHeader(k, v);
      res.end();
    });
    release();
  });
  const get = (withBody: boolean) => (res: HttpResponse, req: HttpRequest) => {
    const release = admit(res, req);
    if (!release) return;
    try {
      reply(res, cached(req), withBody);
    } finally {
      release();
    }
  };
  app.get('/*', get(true));
  app.head('/*', get(false));
  app.post('/*', (res: HttpResponse, req: HttpRequest) => {
    const release = admit(res, req);
    if (!release) return;
    const url = req.getUrl();
    if ((url === '/' || url === '') && routes.post) return routes.post(res, req, release);
    reply(res, { status: '404 Not Found', type: 'text/plain', body: 'not found\n' });
    release();
  });
}
