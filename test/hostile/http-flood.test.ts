// Attack: keep-alive sockets of one address pipelining the heavy pages (/, /status.json, /metrics,
// /directory, /directory.json: ~0.3 ms of work each) got 10,000 responses a second and slowed every
// WebSocket client. Now each address has an HTTP request budget (rateLimits.httpRequestsPerIp, 429
// with Retry-After past it), HTTP requests being answered count in the per-address connection cap,
// and the heavy pages are built at most once per limits.pageSnapshot (1 s).
// Default HTTP settings; the attacker is 127.0.0.2, the other clients 127.0.0.1 and 127.0.0.3.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { startRelayProcess, type RelayProcess } from '../helpers/relay-process.js';
import { Client, now } from '../helpers/client.js';
import { metric, signedEvents } from './helpers.js';

let relay: RelayProcess;
before(async () => {
  // the schema's defaults (the test helper turns these two off for the other tests)
  relay = await startRelayProcess({ env: { ORBWEAVER_RATE_LIMITS_HTTP_REQUESTS_PER_IP: '50', ORBWEAVER_LIMITS_PAGE_SNAPSHOT: '1s' } });
});
after(async () => { await relay.cleanup(); });

interface Got { status: number; retryAfter?: string; body: string }

function get(agent: http.Agent, path: string): Promise<Got> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${relay.httpUrl}${path}`, { agent }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'] as string | undefined, body }));
    });
    req.on('error', reject);
  });
}

const agentFrom = (localAddress: string) => new http.Agent({ keepAlive: true, maxSockets: 16, localAddress });

test('an HTTP flood from one address gets 429 with Retry-After while another address is served', async () => {
  const flood = agentFrom('127.0.0.2');
  const paths = ['/', '/status.json', '/metrics', '/directory', '/directory.json'];
  const honest = agentFrom('127.0.0.1');
  const ws = await Client.open(relay.url, { localAddress: '127.0.0.1' });
  const [ev] = await signedEvents('http-flood', 1, () => ({ kind: 1, created_at: now(), tags: [], content: 'still served' }));
  // 1,000 requests as fast as 16 keep-alive sockets carry them
  const t0 = performance.now();
  const floodDone = Promise.all(Array.from({ length: 1000 }, (_, i) => get(flood, paths[i % paths.length])));
  // meanwhile the other address reads a page and publishes over its WebSocket
  const mine = await get(honest, '/status.json');
  assert.equal(mine.status, 200);
  assert.equal((await ws.publish(ev)).ok, true);
  const answers = await floodDone;
  const seconds = (performance.now() - t0) / 1000;
  const refused = answers.filter((a) => a.status === 429);
  const served = answers.filter((a) => a.status === 200);
  // the budget: a burst of 100 (2 s at 50/s), then 50 a second for as long as the flood lasted
  const allowed = 100 + 50 * Math.ceil(seconds);
  assert.ok(served.length <= allowed, `${served.length} served in ${seconds.toFixed(1)} s (at most ${allowed})`);
  assert.ok(served.length >= 100, `${served.length} served (the burst allowance)`);
  assert.ok(refused.length >= 1000 - allowed, `${refused.length} of 1000 refused`);
  assert.equal(served.length + refused.length, 1000);
  for (const r of refused) {
    assert.match(r.body, /^rate-limited: /);
    assert.ok(Number(r.retryAfter) >= 1, `Retry-After ${r.retryAfter}`);
  }
  // the other address is still served, by HTTP and over WebSocket
  assert.equal((await get(honest, '/status.json')).status, 200);
  assert.equal((await ws.query({ ids: [ev.id] })).events.length, 1);
  // (/metrics is a snapshot of at most a second ago)
  let counted = 0;
  for (let i = 0; i < 30 && counted < refused.length; i++) {
    counted = await metric(relay, 'orbweaver_http_refused_total');
    if (counted < refused.length) await new Promise((r) => setTimeout(r, 100));
  }
  assert.ok(counted >= refused.length, `${counted} refusals counted`);
  flood.destroy();
  honest.destroy();
  ws.close();
});

test('heavy pages are built at most once a second per page, however often they are asked for', async () => {
  const agent = agentFrom('127.0.0.3');
  const built = async () => Number(/^orbweaver_http_pages_built_total (\d+)$/m.exec((await get(agent, '/metrics')).body)?.[1] ?? NaN);
  const before = await built();
  const t0 = performance.now();
  // 40 reads of one page (within the address's burst allowance)
  const pages = await Promise.all(Array.from({ length: 40 }, () => get(agent, '/status.json')));
  const seconds = (performance.now() - t0) / 1000;
  for (const p of pages) assert.equal(p.status, 200);
  const after = await built();
  // each build of /status.json or /metrics within the interval: at most one per started second each
  const bound = 2 * (Math.ceil(seconds) + 1);
  assert.ok(after - before <= bound, `${after - before} builds in ${seconds.toFixed(2)} s for 41 requests (bound ${bound})`);
  assert.ok(new Set(pages.map((p) => p.body)).size <= Math.ceil(seconds) + 1, 'the reads were served from snapshots');
  agent.destroy();
});

test('HTTP requests count in the per-address connection cap shared with WebSockets', async () => {
  const small = await startRelayProcess({ env: { ORBWEAVER_RATE_LIMITS_MAX_CONNECTIONS_PER_IP: '3' } });
  try {
    const mine = new http.Agent({ keepAlive: true, localAddress: '127.0.0.5' });
    const other = new http.Agent({ keepAlive: true, localAddress: '127.0.0.6' });
    const at = (agent: http.Agent, path: string) => new Promise<Got>((resolve, reject) => {
      http.get(`${small.httpUrl}${path}`, { agent }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'] as string | undefined, body }));
      }).on('error', reject);
    });
    assert.equal((await at(mine, '/status.json')).status, 200, 'below the cap');
    const socks = await Promise.all([0, 1, 2].map(() => Client.open(small.url, { localAddress: '127.0.0.5' })));
    const refused = await at(mine, '/status.json');
    assert.equal(refused.status, 429);
    assert.match(refused.body, /^rate-limited: more than 3 connections and requests from your IP address/);
    assert.ok(Number(refused.retryAfter) >= 1);
    assert.equal((await at(other, '/status.json')).status, 200, 'another address');
    socks[0].close();
    let status = 0;
    for (let i = 0; i < 50 && status !== 200; i++) {
      status = (await at(mine, '/healthz')).status;
      if (status !== 200) await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(status, 200, 'served again once a connection closed');
    for (const s of socks) s.close();
    mine.destroy();
    other.destroy();
  } finally {
    await small.cleanup();
  }
});
