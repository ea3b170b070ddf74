// The spider's work queue in Redis: the second WorkQueue implementation (memory.ts has the in-process
// one), so `orbweaver worker` processes on other machines share a crawl with the relay (the
// coordinator). Semantics as MemoryQueue: one lease per item at a time, ack only after the work is
// done, fail() retries and dead-letters after maxAttempts, and every enqueued item yields exactly
// one result for the coordinator. A lease expires, a lost lease cannot ack, attempts are counted,
// and there is a dead-letter list.
//
// Key layout (P = spider.queueKey, default orbweaver:spider; docs/scaling.md shows redis-cli use):
//   P:pending       LIST   item JSON waiting; LPUSH to add, BLMOVE RIGHT->LEFT to lease (FIFO)
//   P:processing    LIST   item JSON leased (the exact string, removed by ack/fail/reaper)
//   P:leases        ZSET   item id -> lease deadline (ms, Redis server clock)
//   P:owners        HASH   item id -> owner token of the lease (a lost lease cannot ack)
//   P:lock:<url>    STRING owner token, PX = lease TTL: the relay is being crawled (one worker at a time)
//   P:dead          LIST   dead-lettered item JSON with "error" and "deadAt" added
//   P:results       LIST   result envelopes for the coordinator (LPUSH by ack/fail/reaper, RPOP)
//   P:seen:<run>    SET    relay URLs enqueued in the run (dedupe; expires after a week)
//   P:run           STRING the coordinator's current run id
//
// Items are JSON whose first keys are fixed, {"id","attempt","url","run",...}, so the reaper (a Lua
// script, atomic, safe to run from any node at any time) can bump the attempt counter without
// re-encoding the item. Every Redis call tolerates errors: a lease, a result or an enqueue that
// fails is reported (rate-limited logging), backed off and tried again; ioredis reconnects.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { DEFAULT_MAX_ATTEMPTS, deadResult, type Lease, type WorkQueue } from './memory.js';
import type { WorkItem, WorkResult } from '../../directory/types.js';
import { sleep } from '../../lib/sleep.js';

/** An item as it travels through Redis. */
export interface QueueItem extends WorkItem {
  /** random, fixed for the item's life (attempts included) */
  id: string;
  /** failed attempts so far */
  attempt: number;
  run: string;
  /** 'discover': its relay lists feed the next hop; 'fetch': the last hop */
  phase: 'discover' | 'fetch';
  /** enqueued at, ms */
  ts: number;
  /** the coordinator's pubkey: a relay whose NIP-11 self equals it is our own relay */
  self?: string;
}

export type ResultEnvelope =
  | { type: 'result'; url: string; run: string; id: string; attempt: number; by: string; result: WorkResult }
  | { type: 'dead'; url: string; run: string; id: string; attempts: number; error: string };

export interface RedisQueueOptions {
  url: string;
  /** key prefix (spider.queueKey) */
  prefix: string;
  leaseTtl: number;
  maxAttempts?: number;
  log: Logger;
  /** shown in lease owner tokens and results (default host:pid) */
  name?: string;
  /** coordinator: our relay's pubkey, carried in items */
  self?: string;
  /** coordinator: results that belong to no outstanding item of this run (an earlier run's, a hand re-queue) */
  onStray?: (r: WorkResult) => Promise<void> | void;
}

export interface QueueCounts { pending: number; processing: number; dead: number; results: number }

/** What every script that settles an item shares: remove it from processing and its lease. */
const SETTLE = `
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function item_id(j) return string.match(j, '^{"id":"([^"]*)"') end
local function item_attempt(j) return tonumber(string.match(j, '^{"id":"[^"]*","attempt":(%d+)')) or 0 end
local function item_url(j) return string.match(j, '^{"id":"[^"]*","attempt":%d+,"url":"([^"]*)"') end
local function item_run(j) return string.match(j, '^{"id":"[^"]*","attempt":%d+,"url":"[^"]*","run":"([^"]*)"') or '' end
-- keys: processing, leases, owners, pending, dead, results; prefix for lock keys
local function unlease(k, prefix, j, id, owner)
  redis.call('LREM', k[1], 1, j)
  redis.call('ZREM', k[2], id)
  redis.call('HDEL', k[3], id)
  local url = item_url(j)
  if url and owner then
    local lk = prefix .. ':lock:' .. url
    if redis.call('GET', lk) == owner then redis.call('DEL', lk) end
  end
end
-- another attempt, or the dead-letter list (and a 'dead' result for the coordinator)
local function retry_or_dead(k, j, id, max, err, now)
  local n = item_attempt(j) + 1
  if n >= max then
    local dead = string.sub(j, 1, -2) .. ',"error":' .. cjson.encode(err) .. ',"deadAt":' .. now .. '}'
    redis.call('LPUSH', k[5], dead)
    redis.call('LPUSH', k[6], '{"type":"dead","url":' .. cjson.encode(item_url(j) or '') .. ',"run":' .. cjson.encode(item_run(j)) ..
      ',"id":' .. cjson.encode(id) .. ',"attempts":' .. n .. ',"error":' .. cjson.encode(err) .. '}')
    return 'dead'
  end
  local again = string.gsub(j, '^({"id":"[^"]*","attempt":)%d+', '%1' .. n, 1)
  redis.call('LPUSH', k[4], again)
  return 'retry'
end
`;

const SCRIPTS = {
  // KEYS: pending, seen. ARGV: force, seenTtlSeconds, then url, json pairs. Returns the URLs skipped.
  orbEnqueue: {
    numberOfKeys: 2,
    lua: `
local skipped = {}
for i = 3, #ARGV, 2 do
  local added = redis.call('SADD', KEYS[2], ARGV[i])
  if added == 1 or ARGV[1] == '1' then redis.call('LPUSH', KEYS[1], ARGV[i + 1]) else table.insert(skipped, ARGV[i]) end
end
redis.call('EXPIRE', KEYS[2], ARGV[2])
return skipped`,
  },
  // After BLMOVE: take the lease (owner token, deadline) and the relay's lock, atomically.
  // KEYS: processing, leases, owners, pending, lock. ARGV: json, id, token, ttl.
  orbClaim: {
    numberOfKeys: 5,
    lua: SETTLE + `
if not redis.call('LPOS', KEYS[1], ARGV[1]) then return 'gone' end
local cur = redis.call('HGET', KEYS[3], ARGV[2])
local lockOk = (not cur) and redis.call('SET', KEYS[5], ARGV[3], 'NX', 'PX', ARGV[4])
if not lockOk then
  -- the relay is being crawled under another lease (or the same item twice): back of the queue, attempt unchanged
  redis.call('LREM', KEYS[1], 1, ARGV[1])
  if not cur then redis.call('ZREM', KEYS[2], ARGV[2]) end
  redis.call('LPUSH', KEYS[4], ARGV[1])
  return 'locked'
end
redis.call('HSET', KEYS[3], ARGV[2], ARGV[3])
redis.call('ZADD', KEYS[2], now_ms() + tonumber(ARGV[4]), ARGV[2])
return 'ok'`,
  },
  // KEYS: leases, owners, lock. ARGV: id, token, ttl. 1: renewed; 0: the lease is not ours any more.
  orbRenew: {
    numberOfKeys: 3,
    lua: SETTLE + `
if redis.call('HGET', KEYS[2], ARGV[1]) ~= ARGV[2] then return 0 end
local l = redis.call('GET', KEYS[3])
if l and l ~= ARGV[2] then return 0 end
redis.call('ZADD', KEYS[1], 'XX', now_ms() + tonumber(ARGV[3]), ARGV[1])
redis.call('SET', KEYS[3], ARGV[2], 'PX', ARGV[3])
return 1`,
  },
  // KEYS: processing, leases, owners, pending, dead, results. ARGV: prefix, json, id, token, result envelope.
  orbAck: {
    numberOfKeys: 6,
    lua: SETTLE + `
if redis.call('HGET', KEYS[3], ARGV[3]) ~= ARGV[4] then return 0 end
unlease(KEYS, ARGV[1], ARGV[2], ARGV[3], ARGV[4])
redis.call('LPUSH', KEYS[6], ARGV[5])
return 1`,
  },
  // KEYS as orbAck. ARGV: prefix, json, id, token, maxAttempts, error. 'retry' | 'dead' | 'lost'.
  orbFail: {
    numberOfKeys: 6,
    lua: SETTLE + `
if redis.call('HGET', KEYS[3], ARGV[3]) ~= ARGV[4] then return 'lost' end
unlease(KEYS, ARGV[1], ARGV[2], ARGV[3], ARGV[4])
return retry_or_dead(KEYS, ARGV[2], ARGV[3], tonumber(ARGV[5]), ARGV[6], now_ms())`,
  },
  // The reaper. KEYS as orbAck. ARGV: prefix, maxAttempts, ttl, limit. Returns {retried, dead, adopted}.
  orbReap: {
    numberOfKeys: 6,
    lua: SETTLE + `
local now = now_ms()
local byId = {}
local adopted = 0
for _, j in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do
  local id = item_id(j)
  if id then
    byId[id] = j
    -- leased by BLMOVE but never claimed (the worker died in between): its lease starts now
    if not redis.call('ZSCORE', KEYS[2], id) then
      redis.call('ZADD', KEYS[2], now + tonumber(ARGV[3]), id)
      adopted = adopted + 1
    end
  else
    redis.call('LREM', KEYS[1], 1, j)
    redis.call('LPUSH', KEYS[5], j)
  end
end
local retried, dead = 0, 0
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, tonumber(ARGV[4]))) do
  local owner = redis.call('HGET', KEYS[3], id)
  local j = byId[id]
  if j then
    unlease(KEYS, ARGV[1], j, id, owner)
    if retry_or_dead(KEYS, j, id, tonumber(ARGV[2]), 'lease expired: the worker died or stalled (owner ' .. tostring(owner) .. ')', now) == 'dead' then dead = dead + 1 else retried = retried + 1 end
  else
    redis.call('ZREM', KEYS[2], id)
    redis.call('HDEL', KEYS[3], id)
  end
end
return {retried, dead, adopted}`,
  },
} as const;

type ScriptName = keyof typeof SCRIPTS;

/** Reports Redis errors without flooding the log: the first, then one line per 10 s with a count. */
class ErrorReporter {
  private last = 0;
  private suppressed = 0;
  down = false;
  constructor(private log: Logger) {}
  error(e: unknown, what: string): void {
    const now = Date.now();
    this.down = true;
    if (now - this.last < 10_000) { this.suppressed++; return; }
    this.log.warn({ err: (e as Error)?.message ?? String(e), what, suppressed: this.suppressed }, 'spider: redis unavailable; backing off and retrying');
    this.last = now;
    this.suppressed = 0;
  }
  ok(): void {
    if (!this.down) return;
    this.down = false;
    this.last = 0;
    this.log.info('spider: redis reachable again; resuming');
  }
}

function parseItem(json: string): QueueItem | null {
  try {
    const o = JSON.parse(json) as QueueItem;
    if (typeof o?.id !== 'string' || typeof o.url !== 'string' || !Array.isArray(o.kinds)) return null;
    return o;
  } catch { return null; }
}

/** The item JSON with the key order the scripts rely on. */
export function encodeItem(q: QueueItem): string {
  const { id, attempt, url, run, phase, ts, hop, ...rest } = q;
  return JSON.stringify({ id, attempt, url, run, hop, phase, ts, ...rest });
}

export class RedisQueue implements WorkQueue {
  readonly prefix: string;
  readonly name: string;
  private readonly cmd: Redis;
  /** blocking connections (BLMOVE, BRPOP), one per concurrent blocking call */
  private idle: Redis[] = [];
  private all: Redis[] = [];
  private readonly reporter: ErrorReporter;
  private readonly maxAttempts: number;
  private closed = false;
  private readonly stop = new AbortController();
  private lastReap = 0;
  private backoff = 100;
  // coordinator state
  readonly run = `${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
  private runStarted = false;
  private outstanding = new Map<string, QueueItem>();
  private unsent: QueueItem[] = [];
  private stuckSince: number | null = null;
  private lastReconcile = 0;
  /** leases in progress: their renewal stops when the queue closes */
  private active = new Set<() => void>();

  constructor(private readonly o: RedisQueueOptions) {
    this.prefix = o.prefix;
    this.name = o.name ?? `${hostname()}:${process.pid}`;
    this.maxAttempts = o.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
    this.reporter = new ErrorReporter(o.log);
    this.cmd = this.connect(Math.max(1000, Math.min(5000, Math.floor(o.leaseTtl / 3))));
    for (const [name, s] of Object.entries(SCRIPTS)) this.cmd.defineCommand(name, { numberOfKeys: s.numberOfKeys, lua: s.lua });
  }

  key(k: string): string { return `${this.prefix}:${k}`; }

  private connect(commandTimeout: number): Redis {
    const r = new Redis(this.o.url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      autoResendUnfulfilledCommands: false,
      commandTimeout,
      connectTimeout: 5000,
      retryStrategy: (n) => (this.closed ? null : Math.min(100 * 2 ** Math.min(n, 5), 2000)),
      connectionName: 'orbweaver-spider',
    });
    r.on('error', (e) => { if (!this.closed) this.reporter.error(e, 'connection'); });
    r.on('ready', () => this.reporter.ok());
    this.all.push(r);
    return r;
  }

  /** Waits (bounded) for a connection to be usable; throws when it is not. */
  private async ready(r: Redis, ms: number): Promise<void> {
    if (r.status === 'ready') return;
    if (this.closed) throw new Error('queue closed');
    await new Promise<void>((resolve) => {
      const done = () => { clearTimeout(t); r.off('ready', done); resolve(); };
      const t = setTimeout(done, Math.max(10, ms));
      r.once('ready', done);
    });
    if ((r.status as string) !== 'ready') throw new Error(`redis not connected (${r.status})`);
  }

  private async script<T>(name: ScriptName, keys: string[], args: Array<string | number>): Promise<T> {
    await this.ready(this.cmd, 1000);
    const fn = (this.cmd as unknown as Record<string, (...a: Array<string | number>) => Promise<T>>)[name];
    return fn.call(this.cmd, ...keys, ...args);
  }

  private settleKeys(): string[] {
    return ['processing', 'leases', 'owners', 'pending', 'dead', 'results'].map((k) => this.key(k));
  }

  private async blocking<T>(fn: (r: Redis) => Promise<T>, waitMs: number): Promise<T> {
    const r = this.idle.pop() ?? this.connect(12_000);
    try {
      await this.ready(r, Math.min(waitMs, 1000));
      return await fn(r);
    } finally {
      if (this.closed) r.disconnect(); else this.idle.push(r);
    }
  }

  private async failed(e: unknown, what: string, waitMs: number): Promise<void> {
    this.reporter.error(e, what);
    await sleep(Math.min(waitMs, this.backoff), this.stop.signal);
    this.backoff = Math.min(this.backoff * 2, 2000);
  }

  private succeeded(): void {
    this.backoff = 100;
    this.reporter.ok();
  }

  // ---- the reaper ------------------------------------------------------------------------

  /** Returns expired leases to pending (attempt + 1) or to the dead-letter list. Safe from any node. */
  async reap(): Promise<{ retried: number; dead: number; adopted: number }> {
    const [retried, dead, adopted] = await this.script<number[]>('orbReap', this.settleKeys(), [this.prefix, this.maxAttempts, this.o.leaseTtl, 1000]);
    if (retried || dead) this.o.log.warn({ retried, dead }, 'spider: expired leases reaped (a worker died or stalled)');
    return { retried, dead, adopted };
  }

  private async maybeReap(): Promise<void> {
    const now = Date.now();
    if (now - this.lastReap < Math.max(200, this.o.leaseTtl / 4)) return;
    this.lastReap = now;
    try { await this.reap(); } catch (e) { this.reporter.error(e, 'reap'); }
  }

  // ---- coordinator -------------------------------------------------------------------------

  private async startRun(): Promise<void> {
    if (this.runStarted) return;
    // One coordinator per queue key: what is still pending belongs to an earlier run that ended.
    const [[, stale], [, staleResults]] = (await this.cmd.multi().llen(this.key('pending')).llen(this.key('results'))
      .del(this.key('pending'), this.key('results')).set(this.key('run'), this.run).exec()) as Array<[Error | null, number]>;
    if (stale || staleResults) this.o.log.info({ stale, staleResults }, 'spider: dropped pending items and results of an earlier run');
    this.runStarted = true;
  }

  private toQueueItem(it: WorkItem): QueueItem {
    return {
      ...it, id: randomBytes(8).toString('hex'), attempt: 0, run: this.run, phase: it.discover ? 'discover' : 'fetch', ts: Date.now(),
      ...(this.o.self ? { self: this.o.self } : {}),
    };
  }

  private async push(items: QueueItem[], force: boolean): Promise<void> {
    await this.ready(this.cmd, 1000);
    await this.startRun();
    const args: string[] = [];
    for (const q of items) args.push(q.url, encodeItem(q));
    for (let i = 0; i < args.length; i += 200) {
      const skipped = await this.script<string[]>('orbEnqueue', [this.key('pending'), this.key(`seen:${this.run}`)], [force ? '1' : '0', 7 * 86400, ...args.slice(i, i + 200)]);
      if (skipped.length) this.o.log.warn({ skipped: skipped.slice(0, 20), n: skipped.length }, 'spider: relays already enqueued in this run were not enqueued again');
    }
  }

  /** Coordinator: enqueues items for this run. Never throws: what Redis does not take now is sent later. */
  async enqueue(items: WorkItem[]): Promise<void> {
    const qs = items.map((it) => this.toQueueItem(it));
    for (const q of qs) this.outstanding.set(q.url, q);
    try {
      await this.push(qs, false);
      this.succeeded();
    } catch (e) {
      this.reporter.error(e, 'enqueue');
      this.unsent.push(...qs);
    }
  }

  /**
   * Coordinator upkeep, between results: sends what could not be enqueued, runs the reaper, and
   * re-enqueues items that are neither pending, leased nor reported — Redis restarted and lost its
   * data (or someone removed keys). It waits one lease TTL first, so a worker still holding a lease
   * from before has renewed (and found it lost, and stopped) or fenced itself off.
   */
  private async maintain(): Promise<void> {
    if (this.unsent.length) {
      const batch = this.unsent.splice(0);
      try { await this.push(batch, false); } catch (e) { this.unsent.unshift(...batch); throw e; }
      this.o.log.info({ n: batch.length }, 'spider: items enqueued after redis came back');
    }
    await this.maybeReap();
    const now = Date.now();
    if (this.outstanding.size === 0 || now - this.lastReconcile < Math.max(200, this.o.leaseTtl / 4)) return;
    this.lastReconcile = now;
    const res = (await this.cmd.multi().llen(this.key('pending')).llen(this.key('results')).lrange(this.key('processing'), 0, -1).get(this.key('run')).exec()) as Array<[Error | null, unknown]>;
    const [pending, results, processing, run] = res.map(([, v]) => v) as [number, number, string[], string | null];
    if (run !== this.run) this.runStarted = false;
    const leased = new Set<string>();
    for (const j of processing) { const q = parseItem(j); if (q && q.run === this.run) leased.add(q.url); }
    const missing = [...this.outstanding.values()].filter((q) => !leased.has(q.url));
    if (pending > 0 || results > 0 || missing.length === 0) { this.stuckSince = null; return; }
    if (this.stuckSince === null) {
      this.stuckSince = now;
      this.o.log.warn({ missing: missing.length, run: run ?? null }, 'spider: items of this run are neither pending, leased nor reported (redis restarted?); re-enqueueing after one lease TTL');
      return;
    }
    if (now - this.stuckSince < this.o.leaseTtl) return;
    this.stuckSince = null;
    await this.push(missing, true);
    this.o.log.warn({ n: missing.length, urls: missing.slice(0, 10).map((q) => q.url) }, 'spider: re-enqueued items that had no result');
  }

  /** Coordinator: the next result of this run (each outstanding item yields exactly one). */
  async result(waitMs: number): Promise<WorkResult | null> {
    const end = Date.now() + waitMs;
    for (;;) {
      if (this.closed) return null;
      try {
        await this.maintain();
        const left = Math.max(0, end - Date.now());
        const raw = left > 0
          ? await this.blocking((r) => r.brpop(this.key('results'), Math.max(0.01, Math.min(left, 1000) / 1000)).then((x) => x?.[1] ?? null), left)
          : await this.cmd.rpop(this.key('results'));
        this.succeeded();
        if (raw) {
          const r = await this.accept(raw);
          if (r) return r;
          continue;
        }
      } catch (e) {
        await this.failed(e, 'results', Math.max(0, end - Date.now()));
      }
      if (Date.now() >= end) return null;
    }
  }

  private async accept(raw: string): Promise<WorkResult | null> {
    let env: ResultEnvelope;
    try { env = JSON.parse(raw) as ResultEnvelope; } catch { this.o.log.warn({ raw: raw.slice(0, 200) }, 'spider: unreadable result dropped'); return null; }
    const q = env.run === this.run ? this.outstanding.get(env.url) : undefined;
    const r = env.type === 'dead' ? deadResult(q ?? { url: env.url, hop: 0, kinds: [], discover: false, quirks: {}, cursors: {} }, env.attempts, env.error) : env.result;
    if (!q) {
      // An earlier run's work (or a hand re-queue): its cursors and quirks are still worth keeping.
      if (env.type === 'result' && this.o.onStray) await this.o.onStray(r);
      return null;
    }
    this.outstanding.delete(env.url);
    if (env.type === 'dead') this.o.log.warn({ url: env.url, attempts: env.attempts, error: env.error }, 'spider: item dead-lettered');
    return r;
  }

  pending(): number {
    return this.outstanding.size;
  }

  // ---- workers -------------------------------------------------------------------------------

  /** Leases the next item (BLMOVE pending -> processing, then owner token, deadline and relay lock). */
  async lease(waitMs: number): Promise<Lease | null> {
    if (this.closed) return null;
    let json: string | null;
    try {
      await this.maybeReap();
      json = await this.blocking((r) => r.blmove(this.key('pending'), this.key('processing'), 'RIGHT', 'LEFT', Math.max(0.01, Math.min(waitMs, 2000) / 1000)), waitMs);
      this.succeeded();
    } catch (e) {
      await this.failed(e, 'lease', waitMs);
      return null;
    }
    if (!json) return null;
    const q = parseItem(json);
    if (!q) {
      this.o.log.warn({ item: json.slice(0, 200) }, 'spider: malformed queue item moved to the dead-letter list');
      try { await this.cmd.multi().lrem(this.key('processing'), 1, json).lpush(this.key('dead'), json).exec(); } catch (e) { this.reporter.error(e, 'dead-letter'); }
      return null;
    }
    const token = `${this.name}:${randomBytes(6).toString('hex')}`;
    const claimedAt = Date.now();
    let claim: string;
    try {
      claim = await this.script<string>('orbClaim', [this.key('processing'), this.key('leases'), this.key('owners'), this.key('pending'), this.key(`lock:${q.url}`)], [json, q.id, token, this.o.leaseTtl]);
    } catch (e) {
      // The reaper adopts the unclaimed item after one TTL.
      this.reporter.error(e, 'claim');
      return null;
    }
    if (claim !== 'ok') {
      if (claim === 'locked') {
        this.o.log.info({ url: q.url }, 'spider: relay is being crawled under another lease; item put back');
        await sleep(Math.min(waitMs, 250), this.stop.signal);
      }
      return null;
    }
    return this.makeLease(q, json, token, claimedAt);
  }

  private makeLease(q: QueueItem, json: string, token: string, claimedAt: number): Lease {
    const ttl = this.o.leaseTtl;
    const lost = new AbortController();
    let lastOk = claimedAt;
    let renewing = false;
    let settled = false;
    const lockKey = this.key(`lock:${q.url}`);
    // Fencing: without a confirmed renewal for most of a TTL we stop before the lease can expire.
    const fenced = () => Date.now() - lastOk > ttl * 0.8;
    const lose = (why: string) => {
      if (lost.signal.aborted) return;
      this.o.log.warn({ url: q.url, why }, 'spider: lease lost; stopping work on the item');
      lost.abort(new Error(`lease lost: ${why}`));
    };
    const timer = setInterval(() => {
      if (settled) return;
      if (fenced()) { lose('no renewal confirmed within the lease TTL'); return; }
      if (renewing) return;
      renewing = true;
      const sent = Date.now();
      this.script<number>('orbRenew', [this.key('leases'), this.key('owners'), lockKey], [q.id, token, ttl])
        .then((ok) => { if (ok === 1) lastOk = sent; else lose('taken over or expired'); })
        .catch((e) => this.reporter.error(e, 'renew'))
        .finally(() => { renewing = false; });
    }, Math.max(50, Math.floor(ttl / 3)));
    timer.unref();
    const finish = () => { settled = true; clearInterval(timer); this.active.delete(finish); };
    this.active.add(finish);
    /** Retries a settling call until it answers or the lease must be considered gone. */
    const settle = async <T>(what: string, call: () => Promise<T>): Promise<T | null> => {
      for (let wait = 100; ; wait = Math.min(wait * 2, 2000)) {
        if (fenced() || this.closed) return null;
        try { const r = await call(); this.succeeded(); return r; } catch (e) { this.reporter.error(e, what); }
        await sleep(wait);
      }
    };
    const keys = this.settleKeys();
    return {
      item: stripItem(q),
      attempt: q.attempt + 1,
      signal: lost.signal,
      ack: async (result) => {
        finish();
        if (lost.signal.aborted) return false;
        const env: ResultEnvelope = { type: 'result', url: q.url, run: q.run, id: q.id, attempt: q.attempt + 1, by: this.name, result };
        const ok = await settle('ack', () => this.script<number>('orbAck', keys, [this.prefix, json, q.id, token, JSON.stringify(env)]));
        if (ok !== 1) this.o.log.warn({ url: q.url }, 'spider: ack refused: the lease was lost meanwhile; result dropped');
        return ok === 1;
      },
      fail: async (error) => {
        finish();
        if (lost.signal.aborted) return;
        const r = await settle('fail', () => this.script<string>('orbFail', keys, [this.prefix, json, q.id, token, this.maxAttempts, error.slice(0, 500)]));
        this.o.log[r === 'dead' ? 'warn' : 'info']({ url: q.url, attempt: q.attempt + 1, error, outcome: r }, r === 'dead' ? 'spider: item dead-lettered' : 'spider: attempt failed; item returned to the queue');
      },
    };
  }

  /** Queue sizes (for status lines and tests). */
  async counts(): Promise<QueueCounts> {
    await this.ready(this.cmd, 1000);
    const res = (await this.cmd.multi().llen(this.key('pending')).llen(this.key('processing')).llen(this.key('dead')).llen(this.key('results')).exec()) as Array<[Error | null, number]>;
    const [pending, processing, dead, results] = res.map(([, v]) => v);
    return { pending, processing, dead, results };
  }

  /** The raw client (tests, tools). */
  get redis(): Redis { return this.cmd; }

  async close(): Promise<void> {
    if (this.closed) return;
    if (this.runStarted) {
      // A coordinator that stops: its run's pending items are nobody's work any more.
      try {
        await this.cmd.multi().del(this.key('pending'), this.key(`seen:${this.run}`)).exec();
      } catch { /* redis away: the next run drops them */ }
    }
    this.closed = true;
    this.stop.abort();
    for (const f of [...this.active]) f();
    for (const r of this.all) r.disconnect();
  }
}

/** The WorkItem inside a queue item (crawlRelay takes exactly this). */
export function stripItem(q: QueueItem): WorkItem & { self?: string; run?: string } {
  const { id: _i, attempt: _a, phase: _p, ts: _t, ...rest } = q;
  return rest;
}
