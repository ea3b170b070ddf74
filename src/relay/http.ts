// HTTP on the WebSocket port: NIP-11 (Accept: application/nostr+json, with CORS), the status page,
// /status.json, /metrics in Prometheus text format, /healthz, and pages the composition root adds
// (/directory, /directory.json). HEAD gets the same status and
// headers as GET without the body (uptime checkers use HEAD).
import type { HttpRequest, HttpResponse, TemplatedApp } from '@trufflesuite/uws-js-unofficial';

export interface HttpRoutes {
  nip11: () => string;
  statusPage: () => string;
  metrics: () => string;
  healthy: () => boolean;
  /** the dashboard's figures as JSON (GET /status.json); the query string is passed on */
  statusJson?: (query: URLSearchParams) => string;
  /** POST (NIP-86 management) */
  post?: (res: HttpResponse, req: HttpRequest) => void;
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

export function mountHttp(app: TemplatedApp, routes: HttpRoutes): void {
  app.options('/*', (res) => {
    res.cork(() => {
      res.writeStatus('204 No Content');
      for (const [k, v] of CORS) res.writeHeader(k, v);
      res.end();
    });
  });
  app.get('/*', (res: HttpResponse, req: HttpRequest) => reply(res, answer(routes, req)));
  app.head('/*', (res: HttpResponse, req: HttpRequest) => reply(res, answer(routes, req), false));
  app.post('/*', (res: HttpResponse, req: HttpRequest) => {
    const url = req.getUrl();
    if ((url === '/' || url === '') && routes.post) return routes.post(res, req);
    reply(res, { status: '404 Not Found', type: 'text/plain', body: 'not found\n' });
  });
}
