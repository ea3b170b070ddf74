// HTTP on the WebSocket port: NIP-11 (Accept: application/nostr+json, with CORS), the status page,
// /metrics in Prometheus text format, and /healthz.
import type { HttpRequest, HttpResponse, TemplatedApp } from '@trufflesuite/uws-js-unofficial';

export interface HttpRoutes {
  nip11: () => string;
  statusPage: () => string;
  metrics: () => string;
  healthy: () => boolean;
  /** the dashboard's figures as JSON (GET /status.json) */
  statusJson?: () => string;
  /** POST (NIP-86 management) */
  post?: (res: HttpResponse, req: HttpRequest) => void;
}

const CORS: Array<[string, string]> = [
  ['Access-Control-Allow-Origin', '*'],
  ['Access-Control-Allow-Headers', 'Authorization, Content-Type, Accept, *'],
  ['Access-Control-Allow-Methods', 'GET, POST, OPTIONS'],
];

function reply(res: HttpResponse, status: string, type: string, body: string, headers: Array<[string, string]> = []): void {
  res.cork(() => {
    res.writeStatus(status).writeHeader('Content-Type', type);
    for (const [k, v] of headers) res.writeHeader(k, v);
    res.end(body);
  });
}

export function mountHttp(app: TemplatedApp, routes: HttpRoutes): void {
  app.options('/*', (res) => {
    res.cork(() => {
      res.writeStatus('204 No Content');
      for (const [k, v] of CORS) res.writeHeader(k, v);
      res.end();
    });
  });
  app.get('/*', (res: HttpResponse, req: HttpRequest) => {
    const url = req.getUrl();
    if (url === '/healthz') {
      const ok = routes.healthy();
      return reply(res, ok ? '200 OK' : '503 Service Unavailable', 'text/plain', ok ? 'ok\n' : 'unhealthy\n');
    }
    if (url === '/metrics') return reply(res, '200 OK', 'text/plain; version=0.0.4', routes.metrics());
    if (url === '/status.json' && routes.statusJson) return reply(res, '200 OK', 'application/json', routes.statusJson(), [['Cache-Control', 'no-store']]);
    if (url === '/' || url === '') {
      if (req.getHeader('accept').includes('application/nostr+json')) {
        return reply(res, '200 OK', 'application/nostr+json', routes.nip11(), CORS);
      }
      return reply(res, '200 OK', 'text/html; charset=utf-8', routes.statusPage());
    }
    reply(res, '404 Not Found', 'text/plain', 'not found\n');
  });
  app.post('/*', (res: HttpResponse, req: HttpRequest) => {
    const url = req.getUrl();
    if ((url === '/' || url === '') && routes.post) return routes.post(res, req);
    reply(res, '404 Not Found', 'text/plain', 'not found\n');
  });
}
