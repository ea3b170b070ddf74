// `orbweaver spider [--once] [--json] [--relay URL | --local]`: one crawl (or a crawl every interval)
// against the configured data directory. When our relay is running (ws://host:port from config, or
// --relay), events are published to it over NIP-01 EVENT so they take its ingest path and reach its
// live subscribers; otherwise the store is opened here and the in-process ingest path is used.
import { createLogger } from '../relay/logger.js';
import type { Config } from '../config/schema.js';
import { localRelayUrl, openCommandSink, SinkError, type CommandSink } from '../app/command-sink.js';
import { createSpider } from './spider.js';
import { formatSummary } from './status.js';

export { localRelayUrl } from '../app/command-sink.js';

export const SPIDER_USAGE = `usage: orbweaver spider [--once] [--json] [--relay ws://host:port | --local]

  --once           one crawl, print its summary, exit (0: finished, 1: no relay reached, 2: error)
  --json           print the summary as JSON
  --relay <url>    publish fetched events to this relay (default: ws://<host>:<port> from config,
                   when it answers)
  --local          do not look for a running relay: open the store and ingest in this process
without --once the spider runs every spider.interval until SIGINT/SIGTERM.
Settings: spider.* in relay.config.json or ORBWEAVER_SPIDER_* (see \`orbweaver config --env\`).`;

export async function spiderCommand(config: Config, argv: string[], out: NodeJS.WritableStream = process.stdout): Promise<number> {
  let once = false, json = false, local = false;
  let relayUrl: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--once') once = true;
    else if (a === '--json') json = true;
    else if (a === '--local') local = true;
    else if (a === '--relay') relayUrl = argv[++i];
    else if (a.startsWith('--relay=')) relayUrl = a.slice(8);
    else if (a === '--help' || a === '-h') { out.write(SPIDER_USAGE + '\n'); return 0; }
    else { process.stderr.write(`unknown option ${a}\n${SPIDER_USAGE}\n`); return 2; }
  }
  const logger = createLogger(config.logLevel);
  const ownUrl = localRelayUrl(config);
  let opened: CommandSink;
  try {
    // the spider's own records (directory, cursors) live beside the events of the relay's store: writable
    opened = await openCommandSink(config, logger, { relayUrl, local, writable: true, label: 'spider' });
  } catch (e) {
    if (!(e instanceof SinkError)) throw e;
    logger.error({ relay: relayUrl, err: e.message }, 'spider: the relay given with --relay does not answer');
    return 2;
  }
  const { sink, store } = opened;
  const spider = createSpider({
    config: config.spider, store, sink, logger,
    selfPubkey: config.info.pubkey || undefined,
    selfUrls: [ownUrl, ...(config.publicUrl ? [config.publicUrl] : [])],
  });
  let code = 0;
  try {
    if (once) {
      const summary = await spider.runOnce();
      out.write((json ? JSON.stringify(summary, null, 2) : formatSummary(summary)) + '\n');
      code = summary.relays.total > 0 && summary.relays.reached === 0 ? 1 : 0;
    } else {
      spider.start();
      await new Promise<void>((resolve) => {
        const stop = () => resolve();
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
      await spider.stop();
    }
  } catch (e) {
    logger.error({ err: e }, 'spider: run failed');
    code = 2;
  } finally {
    await spider.stop();
    await opened.close();
    logger.flush?.();
  }
  return code;
}
