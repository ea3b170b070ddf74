// orbweaver export [--filter JSON]: every stored event matching the filter (default: all) as
// JSONL on stdout, newest first, streamed from store.iterate in constant memory. The output is
// what `orbweaver import`, strfry import and nak take.
import type { Config } from '../config.js';
import { FilterError, parseFilter, type Filter } from '../nostr/filter.js';
import { fmt, openCommandStore, rejectUnknown, takeFlag, takeOption, UsageError, writeAll } from './common.js';

export const EXPORT_USAGE = `usage: orbweaver export [--filter '{"kinds":[0,3]}'] > out.jsonl
  streams the stored events matching the filter (NIP-01 filter JSON; default all), newest first;
  a limit in the filter stops after that many events. The count goes to stderr.`;

export async function exportCommand(config: Config, argv: string[], out: NodeJS.WritableStream = process.stdout): Promise<number> {
  const args = [...argv];
  if (takeFlag(args, '--help')) { process.stdout.write(EXPORT_USAGE + '\n'); return 0; }
  const text = takeOption(args, '--filter');
  const quiet = takeFlag(args, '--quiet');
  rejectUnknown(args, ['--filter', '--quiet', '--help'], 'export');
  let filter: Filter = {};
  if (text !== undefined) {
    try {
      filter = parseFilter(JSON.parse(text), { maxFilterValues: 1_000_000, maxTagFilters: 64 });
    } catch (e) {
      if (e instanceof SyntaxError || e instanceof FilterError) throw new UsageError(`--filter: ${e.message}`);
      throw e;
    }
  }
  const limit = filter.limit ?? Infinity;
  delete filter.limit;
  let broken = false;
  out.on('error', () => { broken = true; }); // e.g. `| head`: stop quietly
  const signal = { get aborted() { return broken; } };
  const store = await openCommandStore(config);
  let n = 0;
  try {
    for await (const json of store.iterate(filter, { signal })) {
      if (n >= limit || broken) break;
      n++;
      const wait = writeAll(out, json + '\n');
      if (wait) await wait.catch(() => { broken = true; });
    }
  } finally {
    await store.close();
  }
  if (!quiet) process.stderr.write(`export: ${fmt(n)} events\n`);
  return 0;
}
