// Starts the relay: store, verifier, ingest path, live index, uWS WebSocket + HTTP on one port.
import { randomBytes } from 'node:crypto';
import type { Config } from '../config.js';
import { storeSearchOptions } from '../config/search.js';
import { maxEventMessageLength, storeMapOptions } from '../config/relay.js';
import type { EventStore } from '../store/types.js';
import type { AsyncVerifier } from '../ingest/verify-pool.js';
import { largeSendFor } from './ws-send.js';
import { inlineQueries, queryPool, type QueryRunner } from './query-pool.js';
import type { NostrEvent } from '../nostr/event.js';
import { closedMessage, isEventMessage, noticeMessage } from '../nostr/messages.js';
import type { TemplatedApp, WebSocketBehavior } from '@trufflesuite/uws-js-unofficial';
import { loadUws, type Uws } from './uws.js';
import type { Logger } from '../lib/logger.js';
import type { Registry, RelayMetrics } from './metrics.js';
import { LiveIndex } from './live-index.js';
import { Connection } from './connection.js';
import { OutputBudget } from './output-budget.js';
import { firstRefusal, type Policies } from '../ingest/hooks.js';
import type { RelayContext } from './context.js';
import type { MissLookup } from './lookup.js';
import type { SearchTrust } from './context.js';
import { dispatch } from './handlers/dispatch.js';
import { closeAll, closeSubscription } from './handlers/close.js';
import { negentropyFigures } from './handlers/neg.js';
import { deliver } from './handlers/req.js';
import { LiveBudget } from './live-budget.js';
import { mountHttp, type PageAnswer } from './http.js';
import { relayInfo } from './nip11.js';
import { createDashboard, type DirectorySource, type Section } from './dashboard/status.js';
import type { Ingest, OnStored } from '../ingest/types.js';
import { VERSION } from './version.js';
import type { Access } from './policy/access.js';
import { ACCESS_NIPS, accessLimitation } from './policy/nip11.js';
import type { WritePipeline } from '../ingest/pipeline.js';
import { createManagementHandler, RPC_CONTENT_TYPE, type SpiderControl } from './nip86/api.js';
import type { RecordService } from './handlers/record.js';

/** The shared write side the relay serves from (src/app/pipeline.ts builds it) and its per-connection access over the same lists. */
export interface RelayPipeline extends WritePipeline {
  /** access lists, rate limits and AUTH state */
  access: Access;
}

/** What the relay is given by the composition root (src/app): the shared write side and the metrics registry. */
export interface RelayDeps {
  pipeline: RelayPipeline;
  registry: Registry;
  metrics: RelayMetrics;
  /** called once the port is bound, before the "listening" line is logged (src/app records the owner of the data directory) */
  onListen?: (port: number) => void;
  /** who may write the directory's records over WebSocket, and how (src/app: the local key) */
  records?: RecordService;
}

export interface RelayHandle {
  port: number;
  store: EventStore;
  ingest: Ingest;
  registry: Registry;
  verifier: AsyncVerifier;
  policies: Policies;
  /** adds a section to the status page (the spider's progress) */
  addStatusSection(fn: () => Section): void;
  /** the relay directory for the status page and /status.json (src/app provides it) */
  setStatusDirectory(source: DirectorySource | undefined): void;
  /** access control, lists and rate limits (policy/access.ts) */
  access: Access;
  /** hooks for the NIP-86 spidertrigger/spiderstatus methods; without them those methods answer an error */
  setSpiderControl(control: SpiderControl | undefined): void;
  /** the lookup on a miss REQs use (src/app wires the spider's); undefined turns it off */
  setLookup(lookup: MissLookup | undefined): void;
  /** per-reader trust for search (src/app wires the trust service's); undefined turns it off */
  setSearchTrust(fn: SearchTrust | undefined): void;
  /** adds Prometheus text to /metrics (the spider's figures) */
  addMetricsText(fn: () => string): void;
  /** adds NIPs and fields to the NIP-11 document (the trust service's NIP-85 key, added by src/app) */
  addInfo(fn: () => { nips?: number[]; fields?: Record<string, unknown> }): void;
  /** serves GET/HEAD `path` (the relay directory pages of src/monitor, added by src/app) */
  addPage(path: string, fn: (query: URLSearchParams) => PageAnswer): void;
  /** stop accepting, CLOSED to every subscription, stop the query threads (the pipeline is closed by its owner) */
  close(): Promise<void>;
}

/**
 * uSockets' LIBUS_LISTEN_EXCLUSIVE_PORT. The default listen sets SO_REUSEPORT, so a second relay
 * (or any process of the same user) could bind the same port and silently take half of the
 * connections — and a port-0 listen could even be handed a port another relay already holds.
 */
const LISTEN_EXCLUSIVE_PORT = 1;

/** What the parts of a running relay read and set after start: shutting down, the spider's hooks, the address it listens on. */
interface RelayState {
  closing: boolean;
  spiderControl: SpiderControl | undefined;
  listenUrl: string;
}

export async function startRelay(config: Config, logger: Logger, deps: RelayDeps): Promise<RelayHandle> {
  const { uws, native, package: uwsPackage, binary: uwsBinary, error: uwsError, largeFrameBug } = loadUws(config.allowJsFallback);
  if (!native) logger.warn({ reason: uwsError, uwsPackage }, 'RUNNING ON THE PURE-JS uWebSockets.js FALLBACK: expect a fraction of normal throughput');
  const { pipeline, registry, metrics } = deps;
  const { store, verifier, policies, access, ingest } = pipeline;
  const live = new LiveIndex<Connection>(config.trust.enabled ? (pk) => store.ranks.hiddenFromSearch(pk) : undefined);
  const connections = new Set<Connection>();
  const queries = await openQueries(config, store, access);
  const state: RelayState = { closing: false, spiderControl: undefined, listenUrl: '' };
  const ctx: RelayContext = { config, store, queries, ingest, live, policies, metrics, logger, access, lookup: null, records: deps.records ?? null, searchTrust: null };
  const unsubscribe = pipeline.onStored(liveFanOut(ctx, new LiveBudget(config.rateLimits.liveEventsPerIp, config.rateLimits.burstSeconds)));
  const output = new OutputBudget(config.limits.maxBufferedBytes, config.limits.maxBufferedBytesPerIp);
  relayGauges(registry, ctx, connections, output);

  const app = uws.App();
  app.ws<{ conn: Connection }>('/*', wsBehavior(uws, ctx, state, connections, output, largeFrameBug));
  const http = mountPages(app, ctx, registry, connections, state, verifier);

  const listenSocket = await new Promise<unknown>((resolve, reject) => {
    // the typings lack the (host, port, options, cb) overload the native binding has
    (app.listen as unknown as (this: unknown, h: string, p: number, o: number, cb: (s: unknown) => void) => void).call(app, config.host, config.port, LISTEN_EXCLUSIVE_PORT, (sock) => (sock ? resolve(sock) : reject(new Error(`cannot listen on ${config.host}:${config.port} (address in use or not available)`))));
  });
  const port = uws.us_socket_local_port(listenSocket as never);
  access.ownUrls.listening(config.host, port);
  deps.onListen?.(port);
  state.listenUrl = `ws://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;

  const sweepTimer = setInterval(() => {
    store.sweepExpired().catch((e) => logger.error({ err: e }, 'expiry sweep failed'));
  }, config.store.expirySweep);
  sweepTimer.unref();

  logger.info(
    { version: VERSION, address: `ws://${config.host}:${port}`, dataDir: config.dataDir, node: process.version, uwsNative: native, uwsPackage, uwsBinary, verifier: verifier.backend, verifyThreads: verifier.threads, queryThreads: queries.threads, events: store.stats().events },
    'orbweaver relay listening',
  );

  let closed: Promise<void> | null = null;
  const close = () => {
    if (closed) return closed;
    state.closing = true;
    closed = (async () => {
      clearInterval(sweepTimer);
      http.dashboard.stop();
      uws.us_listen_socket_close(listenSocket as never);
      unsubscribe();
      for (const conn of connections) {
        for (const subId of conn.subs.keys()) conn.send(closedMessage(subId, 'error: relay shutting down'));
        closeAll(ctx, conn);
        conn.close(1001, 'relay shutting down');
      }
      await queries.close();
    })();
    return closed;
  };

  const { dashboard, metricsTexts, infoParts, pages } = http;
  return { port, store, ingest, registry, verifier, policies, access, addStatusSection: (fn) => dashboard.addSection(fn), setStatusDirectory: (source) => dashboard.setDirectory(source), setSpiderControl: (c) => { state.spiderControl = c; }, setLookup: (l) => { ctx.lookup = l ?? null; }, setSearchTrust: (fn) => { ctx.searchTrust = fn ?? null; }, addMetricsText: (fn) => metricsTexts.push(fn), addInfo: (fn) => { infoParts.push(fn); }, addPage: (path, fn) => { pages.set(path, fn); }, close };
}

/** REQ scans and COUNTs: on query threads (queryThreads > 0), else on this thread under the access layer's guard. */
async function openQueries(config: Config, store: EventStore, access: Access): Promise<QueryRunner> {
  return config.queryThreads > 0
    ? await queryPool(
        { threads: config.queryThreads, ...storeMapOptions(config), search: storeSearchOptions(config), scanBudget: config.read.scanBudget, queryTimeout: config.read.queryTimeout, onCut: () => access.scansCut++, offloadWhenBusy: config.read.offloadWhenBusy },
        store,
      )
    : inlineQueries(store, (outer, scanBudget) => access.scanGuard(outer, scanBudget));
}

/** Live fan-out of a stored event to the matching subscriptions, within each address's live budget. */
function liveFanOut(ctx: RelayContext, liveBudget: LiveBudget): OnStored {
  const { live, access, metrics } = ctx;
  return (ev: NostrEvent, json: string, serial?: number) => {
    const hidden = access.dms.kinds.has(ev.kind);
    const now = Date.now();
    for (const s of live.match(ev)) {
      const sub = s as Parameters<typeof deliver>[1];
      if (hidden && !access.canSee(ev, sub.conn.authed)) continue;
      if (liveBudget.admit(sub.conn.ip, now)) {
        deliver(ctx, sub, ev.id, json, serial);
        continue;
      }
      // over its address's budget: the subscription ends here, saying why (live-budget.ts)
      if (!closeSubscription(ctx, sub.conn, sub.subId)) continue;
      metrics.refusals.inc({ reason: 'rate-limited' });
      access.refused('REQ', liveBudget.refusal, sub.conn.ip);
      sub.conn.send(closedMessage(sub.subId, liveBudget.refusal));
    }
  };
}

/** The relay's gauges on /metrics. */
function relayGauges(registry: Registry, ctx: RelayContext, connections: Set<Connection>, output: OutputBudget): void {
  const { live, access, store } = ctx;
  registry.gauge('orbweaver_connections', 'open WebSocket connections', () => connections.size);
  registry.gauge('orbweaver_subscriptions', 'open subscriptions', () => live.size);
  registry.gauge('orbweaver_negentropy_sessions', 'open NIP-77 sessions', () => negentropyFigures(ctx).sessions);
  registry.gauge('orbweaver_negentropy_records', 'records held by open NIP-77 sessions (36 bytes each)', () => negentropyFigures(ctx).records);
  registry.gauge('orbweaver_live_filter_checks', 'filters checked against published events since start (what fan-out costs)', () => live.checks);
  registry.gauge('orbweaver_unsent_bytes', 'output queued for clients and not yet taken by their sockets', () => output.total());
  registry.gauge('orbweaver_unsent_bytes_peak', 'the most output held unsent at once since start', () => output.peak);
  registry.gauge('orbweaver_reads_offloaded', 'point lookups and answer-bounded scans sent to an idle query thread since start because the main thread was saturated (read.offloadWhenBusy)', () => ctx.queries.offloaded);
  registry.gauge('orbweaver_req_answers_kept', 'REQs answered since start from an answer a query thread kept, unchanged in the store since (store.answerCache)', () => ctx.queries.answersKept);
  registry.gauge('orbweaver_queries_running', 'REQ scans and COUNTs running', () => access.querySlots.figures().queriesRunning);
  registry.gauge('orbweaver_queries_waiting', 'REQ scans and COUNTs waiting for a slot (per connection and per address caps)', () => access.querySlots.figures().queriesWaiting);
  registry.gauge('orbweaver_store_events', 'events in the store', () => store.stats().events);
  registry.gauge('orbweaver_store_bytes', 'bytes of the LMDB data file in use (its pages up to the last one used; a file an earlier version wrote through the write map is sparse and longer)', () => store.stats().bytes);
  registry.gauge('orbweaver_store_disk_free_bytes', 'bytes free on the data directory\'s file system (writes are refused below store.minFreeBytes)', () => store.disk()?.freeBytes ?? 0);
  registry.gauge('orbweaver_store_disk_full', '1 while writes are refused because the data directory\'s file system has less than store.minFreeBytes free', () => (store.disk()?.full ? 1 : 0));
}

/** The WebSocket side: connections refused or admitted on upgrade, each message dispatched to its verb's handler. */
function wsBehavior(uws: Uws, ctx: RelayContext, state: RelayState, connections: Set<Connection>, output: OutputBudget, largeFrameBug: boolean): WebSocketBehavior<{ conn: Connection }> {
  const { config, access, policies, metrics, logger } = ctx;
  const { maxMessageLength } = config.limits;
  // an EVENT may carry a list (a follow list of thousands of people): it has a limit of its own
  const maxEventMessage = maxEventMessageLength(config.limits);
  const maxPayloadLength = Math.max(maxMessageLength * 16, maxEventMessage * 2, 2 << 20);
  const onSlow = (c: Connection, why: string) => {
    metrics.slowClosed.inc();
    logger.info({ conn: c.id, ip: c.ip, cap: why }, 'closing a slow reader');
  };
  return {
    compression: uws.SHARED_COMPRESSOR,
    // Messages past maxMessageLength (an EVENT: maxEventMessageLength) are answered with a NOTICE.
    // uWS must read a message whole to hand it over, and past maxPayloadLength it drops the
    // connection without a word (code 1006), so that is set well above: 16 x maxMessageLength, twice
    // the largest EVENT, at least 2 MiB. What a client can make us buffer is then that much per
    // connection, times rateLimits.maxConnectionsPerIp per address.
    maxPayloadLength,
    maxBackpressure: config.limits.maxBufferedBytes + (1 << 20),
    idleTimeout: Math.min(960, Math.max(8, Math.round(config.limits.idleTimeout / 1000))),
    sendPingsAutomatically: true,
    upgrade: (res, req, context) => {
      const ip = access.clientIp(res, req);
      const refused = state.closing ? 'error: relay shutting down' : firstRefusal(policies.rejectConnection, ip);
      if (refused) {
        access.refused('CONNECT', refused, ip);
        res.cork(() => res.writeStatus(refused.startsWith('rate-limited') ? '429 Too Many Requests' : refused.startsWith('error') ? '503 Service Unavailable' : '403 Forbidden').writeHeader('Content-Type', 'text/plain').end(refused + '\n'));
        return;
      }
      const extensions = req.getHeader('sec-websocket-extensions');
      const conn = new Connection(ip, randomBytes(16).toString('hex'), output, onSlow, largeSendFor(largeFrameBug, extensions));
      res.upgrade({ conn }, req.getHeader('sec-websocket-key'), req.getHeader('sec-websocket-protocol'), extensions, context);
    },
    open: (ws) => {
      const conn = ws.getUserData().conn;
      conn.attach(ws);
      connections.add(conn);
      access.opened(conn);
    },
    drain: (ws) => ws.getUserData().conn.refreshOutput(),
    message: (ws, message) => {
      const conn = ws.getUserData().conn;
      if (!access.admitMessage(conn, message.byteLength)) return;
      // a command holding the data directory's local key may send up to uWS's cap: its record writes
      // carry whole relay records (a relay's links to thousands of others: handlers/record.ts)
      if (message.byteLength > maxMessageLength && !(ctx.records && conn.authed.has(ctx.records.writer))) {
        // refused before decoding: a client sending large messages costs us only their reading
        const event = isEventMessage(message);
        if (!event || message.byteLength > maxEventMessage) {
          metrics.refusals.inc({ reason: 'invalid' });
          conn.send(noticeMessage(`invalid: message larger than ${event ? maxEventMessage : maxMessageLength} bytes`));
          return;
        }
      }
      let text: string;
      try {
        text = Buffer.from(message).toString('utf8');
      } catch {
        return;
      }
      try {
        dispatch(ctx, conn, text);
      } catch (e) {
        logger.error({ err: e, conn: conn.id }, 'message handling failed');
      }
    },
    close: (ws) => {
      const conn = ws.getUserData().conn;
      conn.markClosed();
      closeAll(ctx, conn);
      connections.delete(conn);
      access.closed(conn);
    },
  };
}

/** HTTP on the relay's port: NIP-11, the status page and JSON, /metrics, /healthz, NIP-86 and the pages src/app adds. */
function mountPages(app: TemplatedApp, ctx: RelayContext, registry: Registry, connections: Set<Connection>, state: RelayState, verifier: AsyncVerifier) {
  const { config, metrics, access, store, live, logger } = ctx;
  const dashboard = createDashboard({
    config, metrics, refusals: access.refusals, access: () => access.figures(),
    connections: () => connections.size, subscriptions: () => live.size, store: () => ({ ...store.stats(), disk: store.disk() }), listenUrl: () => state.listenUrl,
  });
  const manage = createManagementHandler({ config, store, verifier, access, logger, spider: () => state.spiderControl });
  const metricsTexts: Array<() => string> = [];
  const pagesBuilt = registry.counter('orbweaver_http_pages_built_total', 'heavy HTTP pages built (the rest were served from their snapshot, limits.pageSnapshot)');
  registry.gauge('orbweaver_http_refused_total', 'HTTP requests refused with 429 (rateLimits.httpRequestsPerIp, maxConnectionsPerIp)', () => access.httpRefused);
  const infoParts: Array<() => { nips?: number[]; fields?: Record<string, unknown> }> = [];
  const nip11Doc = () => {
    const parts = infoParts.map((f) => f());
    const doc = accessLimitation(config, access.lists, relayInfo(config, [...ACCESS_NIPS, ...parts.flatMap((p) => p.nips ?? [])]));
    for (const p of parts) Object.assign(doc, p.fields ?? {});
    return doc;
  };
  const pages = new Map<string, (query: URLSearchParams) => PageAnswer>();
  mountHttp(app, {
    nip11: () => JSON.stringify(nip11Doc()),
    statusJson: (query) => dashboard.json(query),
    post: (res, req, done) => {
      if (!req.getHeader('content-type').toLowerCase().startsWith(RPC_CONTENT_TYPE)) {
        res.cork(() => res.writeStatus('415 Unsupported Media Type').writeHeader('Content-Type', 'text/plain').end(`POST here is NIP-86 management: use Content-Type: ${RPC_CONTENT_TYPE}\n`));
        done();
        return;
      }
      manage(res, req, done);
    },
    metrics: () => registry.text() + metricsTexts.map((f) => f()).join(''),
    healthy: () => !state.closing,
    statusPage: () => dashboard.page(),
    page: (path, query) => pages.get(path)?.(query) ?? null,
  }, { clientIp: (res, req) => access.clientIp(res, req), gate: (ip) => access.httpRequest(ip), snapshotMs: config.limits.pageSnapshot, onBuild: () => pagesBuilt.inc() });
  return { dashboard, metricsTexts, infoParts, pages };
}
