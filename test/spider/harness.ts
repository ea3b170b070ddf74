// A home store with the real ingest path, for in-process spider tests.
import { pino } from 'pino';
import { openStore } from '../../src/store/index.js';
import { createIngest } from '../../src/ingest/ingest.js';
import { inlineVerifier } from '../../src/ingest/verify-pool.js';
import { emptyPolicies } from '../../src/ingest/hooks.js';
import { loadVerifier, type EventVerifier } from '../../src/nostr/verify.js';
import type { EventStore } from '../../src/store/types.js';
import type { Ingest } from '../../src/ingest/types.js';
import type { NostrEvent } from '../../src/nostr/event.js';
import { ingestSink, type EventSink } from '../../src/ingest/sink.js';
import { crawlOptions } from '../../src/spider/fetch/options.js';
import { sharedState, type CrawlDeps } from '../../src/spider/fetch/crawl.js';
import { storeKnown } from '../../src/spider/fetch/admit.js';
import { AuthorBook } from '../../src/spider/fetch/authors.js';
import { configSchema } from '../../src/config/schema.js';
import { tempDir } from '../helpers/relay-process.js';
import { keypair, relayList, sign } from '../fixtures/test-relay.js';
import { rmSync } from 'node:fs';
import { Writable } from 'node:stream';
import assert from 'node:assert/strict';
import { spiderCommand } from '../../src/commands/spider.js';
import type { Config } from '../../src/config.js';

export const quietLog = pino({ level: process.env.SPIDER_TEST_LOG ?? 'silent' });

export interface Home {
  dir: string;
  store: EventStore;
  ingest: Ingest;
  sink: EventSink;
  verifier: EventVerifier;
  /** events the ingest path stored and broadcast, in order */
  broadcast: NostrEvent[];
  /** signature checks made by the ingest path (not by the spider) */
  ingestChecks: { n: number };
  has(id: string): boolean;
  close(): Promise<void>;
}

export async function openHome(dir = tempDir('orbweaver-spider-')): Promise<Home> {
  const store = await openStore({ dir, mapSize: 1 << 30 });
  const verifier = await loadVerifier('auto');
  const broadcast: NostrEvent[] = [];
  const ingestChecks = { n: 0 };
  const inline = inlineVerifier(verifier);
  const counted = {
    ...inline,
    check: (ev: NostrEvent, json?: string) => { ingestChecks.n++; return inline.check(ev, json); },
    checkThen: (ev: NostrEvent, json: string | undefined, done: (bad: string | null) => void) => { ingestChecks.n++; inline.checkThen(ev, json, done); },
  };
  const ingest = createIngest({ store, verifier: counted, policies: emptyPolicies(), onStored: (ev) => { broadcast.push(ev); } });
  return {
    dir, store, ingest, sink: ingestSink(ingest), verifier, broadcast, ingestChecks,
    has: (id) => store.get(id) !== undefined,
    async close() { await store.close(); rmSync(dir, { recursive: true, force: true }); },
  };
}

/** Spider config with test-friendly timeouts (the defaults, otherwise). */
export function spiderConfig(over: Record<string, unknown> = {}) {
  return configSchema.parse({ spider: { allowPrivate: true, idleTimeout: '3s', connectTimeout: '5s', pause: 0, rateLimitBackoff: '20ms', lookback: 0, relayBudget: '60s', ...over } }).spider;
}

export function crawlDeps(home: Home, over: Record<string, unknown> = {}): CrawlDeps {
  return {
    verifier: home.verifier, sink: home.sink, known: storeKnown(home.store), log: quietLog, opts: crawlOptions(spiderConfig(over)),
    shared: sharedState(new AuthorBook(home.store.env), 4),
  };
}

/** Bounded wait for a condition (no wall-clock assertions: only a cap on how long to wait). */
export async function waitFor(cond: () => boolean, timeoutMs = 10_000, what = 'condition'): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export const DIRECTORY_KINDS = [0, 3, 10000, 10002];

/** A verifier that counts its checks. */
export function countingVerifier(v: EventVerifier): EventVerifier & { checks: number } {
  const c = {
    backend: v.backend,
    checks: 0,
    check: (ev: NostrEvent) => { c.checks++; return v.check(ev); },
    checkJson: (json: string) => { c.checks++; return v.checkJson(json); },
  };
  return c;
}

/** n events of the directory kinds, unique (author, kind), whose lists name `names`. */
export function population(n: number, names: string[], start: number): NostrEvent[] {
  const out: NostrEvent[] = [];
  let key = keypair();
  for (let i = 0; i < n; i++) {
    const kind = DIRECTORY_KINDS[i % 4];
    if (i % 4 === 0) key = keypair();
    const t = start - Math.floor(i / 3);
    out.push(kind === 10002 ? relayList(key.sk, t, names) : sign(key.sk, kind, t, [], `e${i}`));
  }
  return out;
}

/** `orbweaver spider --once --json` run in this process: asserts it exits 0 (its output as the message) and returns its summary. */
export async function spiderOnceJson<T>(config: Config): Promise<T> {
  let text = '';
  const out = new Writable({ write(chunk, _enc, cb) { text += chunk.toString(); cb(); } });
  const code = await spiderCommand(config, ['--once', '--json'], out);
  assert.equal(code, 0, text);
  return JSON.parse(text) as T;
}
