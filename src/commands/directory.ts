// orbweaver directory [--json]: every relay the spider knows, read from the data directory (read
// only: it works beside a running relay). The rows are the status page's table and the
// `directory` part of /status.json, made by the same function (src/spider/directory-view.ts);
// what only a running spider knows — which relay it is fetching now, when its next run starts —
// is on the status page.
import type { Config } from '../config.js';
import { RelayDirectory } from '../spider/directory.js';
import { directoryView, formatDirectory } from '../spider/directory-view.js';
import { openCommandStore, rejectUnknown, takeFlag } from './common.js';

export const DIRECTORY_USAGE = `usage: orbweaver directory [--json]
  every relay the spider knows: URL, hop, state, last crawl, events fetched / stored in it,
  next attempt, quirks, last error (times in UTC). --json: the same rows as /status.json.`;

export async function directoryCommand(config: Config, argv: string[], out: NodeJS.WritableStream = process.stdout): Promise<number> {
  const args = [...argv];
  if (takeFlag(args, '--help')) { out.write(DIRECTORY_USAGE + '\n'); return 0; }
  const json = takeFlag(args, '--json');
  rejectUnknown(args, ['--json', '--help'], 'directory');
  const store = await openCommandStore(config);
  try {
    const view = directoryView(new RelayDirectory(store.env).all(), {
      now: Date.now(),
      backoff: { base: config.spider.failureBackoff, max: config.spider.maxFailureBackoff },
    });
    out.write((json ? JSON.stringify(view, null, 2) : formatDirectory(view)) + '\n');
  } finally {
    await store.close();
  }
  return 0;
}
