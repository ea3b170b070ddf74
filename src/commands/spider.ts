// `orbweaver spider [--once] [--json] [--relay URL | --local]`: one crawl (or a crawl every interval)
// against the configured data directory. Events go through the one ingest path: to the relay that
// owns the data directory (or the one given with --relay) over NIP-01 EVENT, so they reach its live
// subscribers, else into the store in this process (app/command-sink.ts decides).
import { loggerFor } from '../lib/logger.js';
import type { Config } from '../config/schema.js';
import { SinkError } from '../app/command-sink.js';
import { nothingToCrawl, openStandaloneSpider, type StandaloneSpider } from '../app/standalone-spider.js';
import { formatSummary, nothingCrawled } from '../spider/status.js';
import type { CycleSummary } from '../monitor/monitor.js';
import { unknownOption } from '../config/suggest.js';

export const SPIDER_USAGE = `usage: orbweaver spider [--once] [--json] [--relay ws://host:port | --local] [--data dir]

  --once           one crawl, print its summary, exit (0: finished, 1: no relay found or none
                   reached, 2: configuration or other error)
  --json           print the summary as JSON
  --relay <url>    publish fetched events to this relay
  --local          do not publish to a running relay: open the store and ingest in this process
By default the events go to the relay that owns the data directory (it records its URL there while
it runs); when no relay owns it, the store is opened in this process.
Without --once the spider runs at once and then every spider.interval until SIGINT/SIGTERM.
Settings: spider.* in relay.config.json or ORBWEAVER_SPIDER_* (see \`orbweaver config --env\`).`;

const OPTIONS = ['--once', '--json', '--relay', '--local'];

export async function spiderCommand(config: Config, argv: string[], out: NodeJS.WritableStream = process.stdout): Promise<number> {
  let once = false, json = false, local = false;
  let relayUrl: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--once') once = true;
    else if (a === '--json') json = true;
    else if (a === '--local') local = true;
    else if (a === '--relay') {
      relayUrl = argv[++i];
      if (!relayUrl) { process.stderr.write('orbweaver spider: --relay needs a ws:// or wss:// URL\n'); return 2; }
    }
    else if (a.startsWith('--relay=')) relayUrl = a.slice(8);
    else if (a === '--help' || a === '-h') { out.write(SPIDER_USAGE + '\n'); return 0; }
    else { process.stderr.write(`orbweaver: ${unknownOption(a, OPTIONS, 'spider')}\n`); return 2; }
  }
  const logger = loggerFor(config);
  const problem = nothingToCrawl(config.spider);
  if (problem) {
    logger.warn(problem);
    logger.flush();
    return 2;
  }
  // Listening before the spider opens (and logs 'spider started'): a SIGTERM that arrives while it
  // starts stops it cleanly instead of killing the process with the store open.
  const stopSignal = once ? null : new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  let opened: StandaloneSpider;
  try {
    opened = await openStandaloneSpider(config, logger, { relayUrl, local, once });
  } catch (e) {
    if (!(e instanceof SinkError)) throw e;
    logger.error(`spider: ${e.message}`);
    logger.flush();
    return 2;
  }
  const { spider, monitor } = opened;
  let code = 0;
  try {
    if (once) {
      const summary = await spider.runOnce();
      const checked: CycleSummary | undefined = monitor ? await monitor.runOnce() : undefined;
      if (json) out.write(JSON.stringify(checked ? { ...summary, monitor: { pubkey: monitor!.pubkey, ...checked } } : summary, null, 2) + '\n');
      else out.write(formatSummary(summary) + (checked ? '\n' + formatCycle(checked, monitor!.pubkey) : '') + '\n');
      // the spider has logged why (nothingCrawled): the exit code says it to scripts
      if (nothingCrawled(summary)) code = 1;
    } else {
      // runs at once, then every interval; the scheduler's timer keeps the process alive between runs
      spider.start();
      monitor?.start();
      await stopSignal;
      logger.info('spider: stopping');
    }
  } catch (e) {
    logger.error({ err: e }, 'spider: run failed');
    code = 2;
  } finally {
    await opened.close();
    logger.flush();
  }
  return code;
}

/** The monitor's lines after a `spider --once` summary. */
export function formatCycle(c: CycleSummary, pubkey: string): string {
  const f = c.finder;
  return [
    `monitor (${pubkey.slice(0, 16)}…): ${c.checked} relays checked, ${c.online} online, ${c.published} kind 30166 published${c.announced ? ', kind 10166 and 0 announced' : ''}${c.refused ? `, ${c.refused} refused by the address rules` : ''}`,
    f ? `finder: ${f.events} events read${f.fullScan ? ' (full scan)' : ''}, ${f.added} new candidates, ${f.updated} seen again, ${f.known} already in the directory` : '',
    c.delivered || c.deliveryFailures ? `monitor relays: ${c.delivered} delivered, ${c.deliveryFailures} failed` : '',
  ].filter(Boolean).join('\n');
}
