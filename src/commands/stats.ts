// orbweaver stats: store size, events, index sizes, and (one pass over the store) events per kind
// and the top authors. --json for machines; --no-scan skips the pass on a very large store.
import type { Config } from '../config.js';
import { kindOfJson } from '../relay/policy/read.js';
import { fmt, openCommandStore, rejectUnknown, takeFlag, takeOption, UsageError } from './common.js';

export const STATS_USAGE = 'usage: orbweaver stats [--json] [--top N] [--no-scan]';

export interface StatsReport {
  dataDir: string;
  events: number;
  bytes: number;
  indexes: Record<string, number>;
  kinds?: Array<{ kind: number; events: number }>;
  topAuthors?: Array<{ pubkey: string; events: number }>;
  authors?: number;
}

export async function statsCommand(config: Config, argv: string[]): Promise<number> {
  const args = [...argv];
  if (takeFlag(args, '--help')) { process.stdout.write(STATS_USAGE + '\n'); return 0; }
  const json = takeFlag(args, '--json');
  const noScan = takeFlag(args, '--no-scan');
  const top = Number(takeOption(args, '--top') ?? 20);
  rejectUnknown(args, ['--json', '--top', '--no-scan', '--help'], 'stats');
  if (!Number.isInteger(top) || top < 0) throw new UsageError('--top must be a non-negative integer');
  const store = await openCommandStore(config);
  let r: StatsReport;
  try {
    const s = store.stats();
    r = { dataDir: config.dataDir, events: s.events, bytes: s.bytes, indexes: s.indexes };
    if (!noScan) {
      const kinds = new Map<number, number>();
      const authors = new Map<string, number>();
      for await (const j of store.iterate({})) {
        const k = kindOfJson(j) ?? -1;
        kinds.set(k, (kinds.get(k) ?? 0) + 1);
        const i = j.indexOf('"pubkey":"');
        const pk = i >= 0 ? j.slice(i + 10, i + 74) : '?';
        authors.set(pk, (authors.get(pk) ?? 0) + 1);
      }
      r.kinds = [...kinds].map(([kind, events]) => ({ kind, events })).sort((a, b) => b.events - a.events || a.kind - b.kind);
      r.authors = authors.size;
      r.topAuthors = [...authors].sort((a, b) => b[1] - a[1]).slice(0, top).map(([pubkey, events]) => ({ pubkey, events }));
    }
  } finally {
    await store.close();
  }
  if (json) {
    process.stdout.write(JSON.stringify(r, null, 2) + '\n');
    return 0;
  }
  const out = [
    `data directory  ${r.dataDir}`,
    `events          ${fmt(r.events)}`,
    `store size      ${(r.bytes / 1024 / 1024).toFixed(1)} MiB`,
    'index entries',
    ...Object.entries(r.indexes).map(([k, v]) => `  ${k.padEnd(12)} ${fmt(v)}`),
  ];
  if (r.kinds) {
    out.push(`events per kind (${r.kinds.length} kinds)`, ...r.kinds.map((k) => `  ${String(k.kind).padEnd(12)} ${fmt(k.events)}`));
    out.push(`top authors (${fmt(r.authors ?? 0)} authors)`, ...r.topAuthors!.map((a) => `  ${a.pubkey}  ${fmt(a.events)}`));
  }
  process.stdout.write(out.join('\n') + '\n');
  return 0;
}
