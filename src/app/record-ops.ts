// The directory's own records (relay records, spider runs, relay candidates, the monitor's history)
// are written by the one process that writes the store (store/writer-lock.ts): two processes
// writing one LMDB environment lose acknowledged transactions (docs/storage.md, "Several writer
// processes"). A spider in another process beside the relay that owns the data directory
// (`orbweaver spider --once`) reads them from its read-only store and sends each write to the relay
// as an operation (forwarded-records.ts); the relay hears it (relay/handlers/record.ts) and applies
// it here to its own records, in its own process. The operations are the records' write methods,
// applied whole on the relay's side, so a read-modify-write (a run counted, a result folded in)
// sees the relay's latest state.
import type { Database, RootDatabase } from 'lmdb';
import { RelayDirectory } from '../directory/records.js';
import { SpiderRuns } from '../directory/runs.js';
import { CandidateStore, type Sighting } from '../directory/candidates.js';
import { RecordRefused } from '../relay/handlers/record.js';
import { MonitorHistory } from '../monitor/history.js';

/** The records' write methods, as sent. */
export type RecordOp =
  | 'directory.discovered' | 'directory.applyResult' | 'directory.recordRelay' | 'runs.record'
  | 'candidates.setMeta' | 'candidates.add' | 'candidates.remove' | 'candidates.failed'
  | 'history.addSnapshot' | 'history.prune' | 'history.record' | 'history.noteCrawl';

/** Sends one operation to whoever applies it (the relay) and resolves with its result. */
export type RecordCall = (op: RecordOp, args: unknown[]) => Promise<unknown>;

/** candidates.add's maps as JSON can carry them. */
export type CountsWire = Array<[string, Array<[string, number]>]>;
export type FirstsWire = Array<[string, Sighting]>;

/** How long a request id's answer is kept for a repeat: a command retries for its delivery timeout, minutes. */
const REQUEST_KEPT_MS = 24 * 3600_000;
/** Answers stored between two sweeps of the old ones. */
const SWEEP_EVERY = 256;

interface AppliedRequest {
  at: number;
  result: unknown;
}

const str = (v: unknown, what: string): string => { if (typeof v !== 'string') throw new RecordRefused(`${what} must be a string`); return v; };
const num = (v: unknown, what: string): number => { if (typeof v !== 'number' || !Number.isFinite(v)) throw new RecordRefused(`${what} must be a number`); return v; };
const obj = <T>(v: unknown, what: string): T => { if (typeof v !== 'object' || v === null) throw new RecordRefused(`${what} must be an object`); return v as T; };
const arr = <T>(v: unknown, what: string): T[] => { if (!Array.isArray(v)) throw new RecordRefused(`${what} must be an array`); return v as T[]; };

/** The relay's side: the records over its store's environment, and how an operation is applied to them. */
export class RecordApplier {
  private readonly directory: RelayDirectory;
  private readonly runs: SpiderRuns;
  private readonly candidates: CandidateStore;
  /** pruned by the relay's own spider.monitorRetention, as its own monitor prunes it */
  private readonly history: MonitorHistory;
  /**
   * The answers of applied requests by request id, so that a request sent again after the relay
   * restarted (the command lost its answer with the connection) is answered, not applied twice.
   */
  private readonly requests: Database<AppliedRequest, string>;
  private stored = 0;

  /** Opens every named database a forwarding command reads, before it opens the store read-only. */
  constructor(env: RootDatabase, monitorRetentionMs: number) {
    this.directory = new RelayDirectory(env);
    this.runs = new SpiderRuns(env);
    this.candidates = new CandidateStore(env);
    this.history = new MonitorHistory(env, monitorRetentionMs);
    this.requests = env.openDB<AppliedRequest, string>({ name: 'record-requests', encoding: 'msgpack' });
  }

  /**
   * Applies a request once: a request id answered before, in this run of the relay or an earlier
   * one, gets its answer again. (What is left: a relay killed between the operation's commit and
   * its answer's, a few milliseconds, applies a repeat again.)
   */
  async applyOnce(reqId: string, op: string, args: unknown[]): Promise<unknown> {
    const prior = this.requests.get(reqId);
    if (prior) return prior.result;
    const result = await this.apply(op, args);
    await this.requests.put(reqId, { at: Date.now(), result });
    if (++this.stored % SWEEP_EVERY === 0) await this.sweep(Date.now() - REQUEST_KEPT_MS);
    return result;
  }

  /** Forgets the answers of requests older than `before`. */
  private async sweep(before: number): Promise<void> {
    const old: string[] = [];
    for (const { key, value } of this.requests.getRange()) if (value.at < before) old.push(key);
    if (old.length) await this.requests.transaction(() => { for (const k of old) void this.requests.remove(k); });
  }

  /** The operation's result (JSON-able; undefined as null). Throws RecordRefused for a malformed one. */
  async apply(op: string, args: unknown[]): Promise<unknown> {
    const a = args;
    let r: unknown;
    switch (op) {
      case 'directory.discovered': r = await this.directory.discovered(str(a[0], 'url'), num(a[1], 'hop'), arr<string>(a[2], 'referrers'), num(a[3], 'mentions'), num(a[4], 'now')); break;
      case 'directory.applyResult': r = await this.directory.applyResult(obj(a[0], 'result'), num(a[1], 'now')); break;
      case 'directory.recordRelay': r = await this.directory.recordRelay(str(a[0], 'canonical'), arr<string>(a[1], 'confirmed').map((u) => str(u, 'alias')), arr<string>(a[2], 'kept').map((u) => str(u, 'alias')), num(a[3], 'now')); break;
      case 'runs.record': r = await this.runs.record(obj(a[0], 'summary'), str(a[1], 'by')); break;
      case 'candidates.setMeta': r = await this.candidates.setMeta(obj(a[0], 'meta')); break;
      case 'candidates.add': {
        const counts = new Map(arr<[string, Array<[string, number]>]>(a[0], 'counts').map(([u, s]) => [u, new Map(s)]));
        r = await this.candidates.add(counts, new Map(arr<[string, Sighting]>(a[1], 'firsts')), num(a[2], 'max'), num(a[3], 'now'));
        break;
      }
      case 'candidates.remove': r = await this.candidates.remove(str(a[0], 'url')); break;
      case 'candidates.failed': r = await this.candidates.failed(str(a[0], 'url'), str(a[1], 'error'), num(a[2], 'now')); break;
      case 'history.addSnapshot': r = await this.history.addSnapshot(str(a[0], 'url'), obj(a[1], 'snapshot')); break;
      case 'history.prune': r = await this.history.prune(str(a[0], 'url'), num(a[1], 'now')); break;
      case 'history.record': r = await this.history.record(obj(a[0], 'check'), a[1] === null ? null : obj(a[1], 'published')); break;
      case 'history.noteCrawl': r = await this.history.noteCrawl(str(a[0], 'url'), obj(a[1], 'kinds'), num(a[2], 'at')); break;
      default: throw new RecordRefused(`unknown record operation ${JSON.stringify(op.slice(0, 40))}`);
    }
    return r ?? null;
  }
}
