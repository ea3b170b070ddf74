// Running filters: one plan per filter, a newest-first scan with the tie rule, the OR of several
// filters with their own limits, count() and the unlimited iterate().
import { compareNewestFirst, isEmptyFilter, type Filter } from '../nostr/filter.js';
import { isActiveSearch } from '../nostr/search.js';
import { createdAtOf, expirationOfValue, idHexOf, jsonOf, MAX_CREATED_AT } from './codec.js';
import { expiryKey, hexBytes, keyCreatedAt, keySerial, MAX_SERIAL, readSerial, serialKey } from './keys.js';
import { CompiledFilter } from './match.js';
import { planCost, planFilter, type Plan } from './planner.js';
import { MergeScan } from './scan.js';
import type { Dbs } from './schema.js';
import { SearchScan } from './search/scan.js';
import type { ScanSignal, SeenSerials } from './types.js';

export interface Item {
  created_at: number;
  id: string;
  json: string;
  serial: number;
}

export interface ScanEnv {
  dbs: Dbs;
  now: number;
  yieldEvery: number;
  signal?: ScanSignal;
}

/** A filter that can match stored events at all (storage: created_at fits 32 bits). */
export const canMatch = (f: Filter): boolean => !isEmptyFilter(f) && (f.since ?? 0) <= MAX_CREATED_AT;

/**
 * Receives each match instead of the result list (negentropy items): the stored value (volatile:
 * read what is needed before returning) and its created_at. Returning false ends the scan.
 * Matches come newest first from index plans; the ids plan hands them in no particular order.
 */
export type MatchSink = (createdAt: number, value: Buffer) => boolean;

export interface CountMode {
  /** filters counted before this one: an event matching one of them is not counted again */
  exclude: CompiledFilter[];
  /** serials expired but not yet swept (for index-only counting) */
  expired: () => Set<number>;
}

/** One filter's scan, run in steps of about `budget` index entries. */
export interface Scan {
  readonly out: Item[];
  count: number;
  done: boolean;
  step(budget: number): void;
}

/** The scan of one filter: a NIP-50 search (search/scan.ts, results by relevance) or a time-ordered scan. */
export function scanFor(env: ScanEnv, f: Filter, limit: number, countMode?: CountMode): Scan {
  if (!isActiveSearch(f.search) || !env.dbs.search) return new FilterScan(env, f, limit, countMode);
  return new SearchScan(env, f, limit, countMode, (g, n) => new FilterScan(env, g, n));
}

/**
 * One filter's scan, run in steps of a bounded number of index entries so the caller can yield
 * between steps. Matches come out newest first and, within one created_at, by id: the keys give
 * equal created_at in arrival (serial) order, so each run of equal created_at is collected whole,
 * sorted by id, then emitted; when the limit falls inside a run, the run's lowest ids are kept.
 */
export class FilterScan implements Scan {
  /** matches ready to hand out, in final order */
  readonly out: Item[] = [];
  /** matches counted (count mode) */
  count = 0;
  done = false;

  private readonly plan: Plan;
  private readonly cf: CompiledFilter;
  private emitted = 0;
  // scan plans
  private merge?: MergeScan;
  private run: Item[] = [];
  private runCa = -1;
  // ids plan
  private ids: string[] = [];
  private idPos = 0;
  private readonly idSerials = new Set<number>();

  constructor(
    private readonly env: ScanEnv,
    f: Filter,
    private readonly limit: number,
    private readonly countMode?: CountMode,
    private readonly sink?: MatchSink,
  ) {
    this.plan = planFilter(env.dbs, f);
    env.signal?.charge?.(planCost(this.plan));
    this.cf = new CompiledFilter(f, this.plan.name === 'ids' ? undefined : this.plan.exactTag);
    if (this.plan.name === 'ids') this.ids = this.plan.ids;
    else this.merge = new MergeScan(this.plan.db, this.plan.ranges, limit === Infinity ? 256 : limit);
    if (limit <= 0) this.done = true;
  }

  get planName(): string {
    return this.plan.name;
  }

  /** Reads up to `budget` index entries. */
  step(budget: number): void {
    if (this.done) return;
    if (this.plan.name === 'ids') this.stepIds(budget);
    else this.stepScan(budget);
  }

  // ---- time-ordered index scan ----

  private stepScan(budget: number): void {
    const { dbs, now } = this.env;
    const cm = this.countMode;
    const indexOnly = cm !== undefined && cm.exclude.length === 0 && this.plan.name !== 'ids' && this.plan.indexOnly;
    const expired = indexOnly ? cm.expired() : undefined;
    for (let n = 0; n < budget; n++) {
      const key = this.merge!.next();
      if (key === undefined) {
        this.flushRun();
        this.done = true;
        return;
      }
      if (indexOnly) {
        if (!expired!.has(keySerial(key))) this.count++;
        continue;
      }
      const ca = keyCreatedAt(key);
      if (!cm && ca !== this.runCa) {
        this.flushRun();
        if (this.done) return;
        this.runCa = ca;
      }
      // Volatile buffer: used up before the next read.
      const value = dbs.events.getBinaryFast(serialKey(keySerial(key)));
      if (value === undefined || value.length === 0) continue; // deleted since the key was read
      if (!this.cf.matches(value, now)) continue;
      if (this.sink) {
        if (this.sink(ca, value)) continue;
        this.done = true;
        return;
      }
      if (cm) {
        if (!excluded(cm, value, now)) this.count++;
        continue;
      }
      this.run.push({ created_at: ca, id: idHexOf(value), json: jsonOf(value), serial: keySerial(key) });
    }
  }

  private flushRun(): void {
    const run = this.run;
    if (run.length === 0) return;
    if (run.length > 1) run.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const take = Math.min(run.length, this.limit - this.emitted);
    for (let i = 0; i < take; i++) this.out.push(run[i]);
    this.emitted += take;
    this.run = [];
    if (this.emitted >= this.limit) this.done = true;
  }

  // ---- ids plan: exact gets and prefix ranges of the id index, then one sort ----

  private stepIds(budget: number): void {
    const { dbs, now } = this.env;
    let n = 0;
    while (this.idPos < this.ids.length && n < budget) {
      const id = this.ids[this.idPos++];
      if (id.length === 64) {
        const s = dbs.id.getBinary(hexBytes(id));
        n++;
        if (s) this.idSerials.add(readSerial(s));
      } else {
        const start = hexBytes(id.padEnd(64, '0'));
        const end = hexBytes(id.padEnd(64, 'f'));
        for (const { value } of dbs.id.getRange({ start, end, inclusiveEnd: true })) {
          n++;
          this.idSerials.add(readSerial(value));
        }
      }
    }
    if (this.idPos < this.ids.length) return;
    const items: Item[] = [];
    const cm = this.countMode;
    for (const serial of this.idSerials) {
      const value = dbs.events.getBinaryFast(serialKey(serial));
      if (value === undefined || value.length === 0 || !this.cf.matches(value, now)) continue;
      if (this.sink) {
        if (this.sink(createdAtOf(value), value)) continue;
        break;
      }
      if (cm) {
        if (!excluded(cm, value, now)) this.count++;
        continue;
      }
      items.push({ created_at: createdAtOf(value), id: idHexOf(value), json: jsonOf(value), serial });
    }
    items.sort(compareNewestFirst);
    const take = Math.min(items.length, this.limit);
    for (let i = 0; i < take; i++) this.out.push(items[i]);
    this.done = true;
  }
}

function excluded(cm: CountMode, value: Buffer, now: number): boolean {
  for (const e of cm.exclude) if (e.matches(value, now)) return true;
  return false;
}

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Runs a scan to the end, yielding to the event loop between steps. False when aborted. */
export async function drive(scan: Scan, env: ScanEnv): Promise<boolean> {
  for (;;) {
    if (env.signal?.aborted) return false;
    scan.step(env.yieldEvery);
    if (scan.done) return true;
    await tick();
  }
}

/** The highest serial committed and visible now. */
export function lastSerial(dbs: Dbs): number {
  for (const k of dbs.events.getKeys({ reverse: true, limit: 1 })) return readSerial(k);
  return 0;
}

export async function runQuery(env: ScanEnv, filters: Filter[], defaultLimit: number, maxLimit: number, seen?: SeenSerials): Promise<string[]> {
  if (seen) seen.upTo = lastSerial(env.dbs); // read before the first chunk of any scan
  const byId = new Map<string, Item>();
  // NIP-50: search results keep their rank order (filter by filter, each event once where it first ranks)
  let ranked = false;
  for (const f of filters) {
    if (!canMatch(f)) continue;
    const limit = Math.min(f.limit ?? defaultLimit, maxLimit);
    if (limit <= 0) continue;
    const scan = scanFor(env, f, limit);
    ranked ||= scan instanceof SearchScan;
    const finished = await drive(scan, env);
    for (const it of scan.out) if (!byId.has(it.id)) byId.set(it.id, it);
    if (!finished) break;
  }
  const all = [...byId.values()];
  if (!ranked) all.sort(compareNewestFirst);
  if (seen) for (const it of all) if (it.serial > seen.upTo) seen.newer.add(it.id);
  return all.map((it) => it.json);
}

export async function runCount(env: ScanEnv, filters: Filter[]): Promise<number> {
  let expired: Set<number> | undefined;
  const expiredSerials = (): Set<number> => {
    if (!expired) {
      expired = new Set();
      const end = expiryKey(env.now, MAX_SERIAL);
      for (const k of env.dbs.expiry.getKeys({ start: expiryKey(0, 0), end, inclusiveEnd: true })) expired.add(readSerial(k, 4));
    }
    return expired;
  };
  const exclude: CompiledFilter[] = [];
  let total = 0;
  for (const f of filters) {
    if (!canMatch(f)) continue;
    const scan = scanFor(env, f, Infinity, { exclude: [...exclude], expired: expiredSerials });
    const finished = await drive(scan, env);
    total += scan.count;
    if (!finished) break;
    exclude.push(new CompiledFilter(f));
  }
  return total;
}

export async function* runIterate(env: ScanEnv, f: Filter): AsyncGenerator<string> {
  if (!canMatch(f)) return;
  const scan = scanFor(env, f, Infinity);
  for (;;) {
    if (env.signal?.aborted) return;
    scan.step(env.yieldEvery);
    for (const it of scan.out) yield it.json;
    scan.out.length = 0;
    if (scan.done) return;
    await tick();
  }
}

/** The unexpired stored value with this id, as a fresh Buffer. */
export function getValue(dbs: Dbs, id: string, now: number): Buffer | undefined {
  if (!/^[0-9a-f]{64}$/.test(id)) return undefined;
  const s = dbs.id.getBinary(hexBytes(id));
  if (!s) return undefined;
  const value = dbs.events.getBinary(serialKey(readSerial(s)));
  if (!value) return undefined;
  const exp = expirationOfValue(value);
  return exp !== null && exp <= now ? undefined : value;
}
