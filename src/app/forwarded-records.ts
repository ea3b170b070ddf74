// The directory's records as a process beside the relay that owns the data directory sees them
// (`orbweaver spider --once`, `orbweaver spider`): reads come from its read-only store, every write
// goes to the relay as an operation (record-ops.ts) and resolves with the relay's result, once the
// relay has committed it. So the store keeps one writing process.
import type { RootDatabase } from 'lmdb';
import { RelayDirectory, type RelayRecord } from '../directory/records.js';
import { SpiderRuns } from '../directory/runs.js';
import { CandidateStore, type CandidateRecord, type FinderMeta, type Sighting } from '../directory/candidates.js';
import { MonitorHistory, type HealthRecord } from '../monitor/history.js';
import type { SpiderSummary, WorkResult } from '../directory/types.js';
import type { RelayCheck, Snapshot } from '../monitor/types.js';
import type { CountsWire, FirstsWire, RecordCall } from './record-ops.js';

export class ForwardedDirectory extends RelayDirectory {
  constructor(env: RootDatabase, private readonly call: RecordCall) { super(env); }
  override async discovered(url: string, hop: number, referrers: string[], mentions: number, now = Date.now()): Promise<RelayRecord> {
    return await this.call('directory.discovered', [url, hop, referrers, mentions, now]) as RelayRecord;
  }
  override async applyResult(r: WorkResult, now = Date.now()): Promise<RelayRecord> {
    return await this.call('directory.applyResult', [r, now]) as RelayRecord;
  }
  override async recordRelay(canonical: string, confirmed: string[], kept: string[], now = Date.now()): Promise<RelayRecord> {
    return await this.call('directory.recordRelay', [canonical, confirmed, kept, now]) as RelayRecord;
  }
}

export class ForwardedRuns extends SpiderRuns {
  constructor(env: RootDatabase, private readonly call: RecordCall) { super(env); }
  override async record(s: SpiderSummary, by: string): Promise<void> {
    await this.call('runs.record', [s, by]);
  }
}

export class ForwardedCandidates extends CandidateStore {
  constructor(env: RootDatabase, private readonly call: RecordCall) { super(env); }
  override async setMeta(m: FinderMeta): Promise<void> {
    await this.call('candidates.setMeta', [m]);
  }
  override async add(counts: Map<string, Map<string, number>>, firsts: Map<string, Sighting>, max: number, now = Date.now()): Promise<{ added: number; updated: number; full: number }> {
    if (counts.size === 0) return { added: 0, updated: 0, full: 0 };
    const c: CountsWire = [...counts].map(([u, s]) => [u, [...s]]);
    const f: FirstsWire = [...firsts];
    return await this.call('candidates.add', [c, f, max, now]) as { added: number; updated: number; full: number };
  }
  override async remove(url: string): Promise<void> {
    await this.call('candidates.remove', [url]);
  }
  override async failed(url: string, error: string, now = Date.now()): Promise<CandidateRecord | undefined> {
    return (await this.call('candidates.failed', [url, error, now]) as CandidateRecord | null) ?? undefined;
  }
}

export class ForwardedHistory extends MonitorHistory {
  /** `retentionMs` only for the reads; the relay prunes by its own */
  constructor(env: RootDatabase, retentionMs: number, private readonly call: RecordCall) { super(env, retentionMs); }
  override async addSnapshot(url: string, s: Snapshot): Promise<void> {
    await this.call('history.addSnapshot', [url, s]);
  }
  override async prune(url: string, now = Date.now()): Promise<number> {
    return await this.call('history.prune', [url, now]) as number;
  }
  override async record(c: RelayCheck, published: { id: string; createdAt: number; d?: string } | null = null): Promise<HealthRecord> {
    return await this.call('history.record', [c, published]) as HealthRecord;
  }
  override async noteCrawl(url: string, kinds: Record<string, number>, at = Date.now()): Promise<void> {
    await this.call('history.noteCrawl', [url, kinds, at]);
  }
}

/** The records a spider and its monitor write, in one set. */
export interface DirectoryRecordSet {
  directory: RelayDirectory;
  runs: SpiderRuns;
  candidates: CandidateStore;
  history: MonitorHistory;
}

/** Reads from `env` (read-only), writes through `call`. */
export function forwardedRecords(env: RootDatabase, retentionMs: number, call: RecordCall): DirectoryRecordSet {
  return {
    directory: new ForwardedDirectory(env, call),
    runs: new ForwardedRuns(env, call),
    candidates: new ForwardedCandidates(env, call),
    history: new ForwardedHistory(env, retentionMs, call),
  };
}
