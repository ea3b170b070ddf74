// The spider's runs as the directory records them, in a named LMDB database beside the relay
// records: the latest run's figures and how many runs this data directory has seen, whoever made
// them — the spider inside the relay, or `orbweaver spider` beside it (its own process, writing
// the same environment). The status page reads its "last run" from here, so a `spider --once` run
// shows as surely as one the relay made.
import type { Database, RootDatabase } from 'lmdb';
import type { SpiderSummary } from './types.js';
import { openNamedDb } from '../store/named-db.js';

export interface RunRecord {
  startedAt: number;
  finishedAt: number;
  durationMs: number;
  relays: SpiderSummary['relays'];
  fetched: number;
  stored: number;
  aborted: boolean;
  /** who ran it: 'relay' (the spider inside it) or the command ('orbweaver spider --once', …) */
  by: string;
}

export class SpiderRuns {
  private db: Database<RunRecord | number, string>;

  constructor(env: RootDatabase) {
    this.db = openNamedDb<RunRecord | number, string>(env, { name: 'spider-runs', encoding: 'msgpack' });
  }

  last(): RunRecord | null {
    const v = this.db.get('last');
    return v && typeof v === 'object' ? v : null;
  }

  count(): number {
    const v = this.db.get('count');
    return typeof v === 'number' ? v : 0;
  }

  /** Keeps a finished run as the latest and counts it (one transaction: the two never disagree). */
  async record(s: SpiderSummary, by: string): Promise<void> {
    const rec: RunRecord = {
      startedAt: s.startedAt, finishedAt: s.finishedAt, durationMs: s.durationMs, relays: { ...s.relays },
      fetched: s.events.fetched, stored: s.events.stored, aborted: s.aborted, by,
    };
    await this.db.transaction(() => {
      this.db.put('last', rec);
      this.db.put('count', this.count() + 1);
    });
  }
}
