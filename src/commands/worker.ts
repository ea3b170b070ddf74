// `orbweaver worker --redis redis://host:6379/0 --relay ws://home-relay:7447`: a spider worker on any
// machine (docs/scaling.md). Settings come from the same config as the relay (spider.*: timeouts,
// allowPrivate, leaseTtl, maxAttempts, workerKey, deliveryTimeout); the flags override spider.redis,
// the home relay URL and the number of relays fetched at once.
import { loggerFor } from '../lib/logger.js';
import { unknownOption } from '../config/suggest.js';
import type { Config } from '../config/schema.js';
import { localRelayUrl } from '../app/command-sink.js';
import { runWorkerProcess } from '../app/worker.js';
import { parseSecretKey } from '../nostr/keys.js';

export const WORKER_USAGE = `usage: orbweaver worker [--redis redis://host:6379/0] [--relay ws://home-relay:7447] [--concurrency n] [--name id]

  --redis <url>       the queue (default: spider.redis / ORBWEAVER_SPIDER_REDIS); key prefix spider.queueKey
  --relay <url>       the home relay the events are published to (default: ws://<host>:<port> from config)
  --concurrency <n>   relays fetched at once by this worker (default: spider.concurrency)
  --name <id>         shown in lease owner tokens and logs (default: hostname:pid)
The worker authenticates to the home relay (NIP-42) with ORBWEAVER_SPIDER_WORKER_KEY (hex or nsec);
list its pubkey in the relay's ORBWEAVER_SPIDER_WORKER_PUBKEYS. Stops on SIGINT/SIGTERM, giving
unfinished items back to the queue.`;

export async function workerCommand(config: Config, argv: string[], signal?: AbortSignal): Promise<number> {
  let redis = config.spider.redis;
  let relay: string | undefined;
  let concurrency = config.spider.concurrency;
  let name: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const [flag, inline] = a.includes('=') ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] : [a, undefined];
    const val = () => inline ?? argv[++i];
    if (flag === '--redis') redis = val() ?? '';
    else if (flag === '--relay') relay = val();
    else if (flag === '--concurrency') concurrency = Number(val());
    else if (flag === '--name') name = val();
    else if (flag === '--help' || flag === '-h') { process.stdout.write(WORKER_USAGE + '\n'); return 0; }
    else { process.stderr.write(`orbweaver: ${unknownOption(a, ['--redis', '--relay', '--concurrency', '--name'], 'worker')}\n`); return 2; }
  }
  if (!redis) { process.stderr.write(`orbweaver worker: --redis (or ORBWEAVER_SPIDER_REDIS) is required\n${WORKER_USAGE}\n`); return 2; }
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 64) { process.stderr.write('orbweaver worker: --concurrency must be 1..64\n'); return 2; }
  const home = relay ?? localRelayUrl(config);
  const logger = loggerFor(config).child({ component: 'spider-worker' });
  let secretKey: Uint8Array | undefined;
  if (config.spider.workerKey) {
    try { secretKey = parseSecretKey(config.spider.workerKey); } catch (e) { process.stderr.write(`orbweaver worker: ${(e as Error).message}\n`); return 2; }
  }
  const stop = new AbortController();
  const onSignal = () => { logger.info('worker stopping: finishing or giving back the items in progress'); stop.abort(); };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  signal?.addEventListener('abort', onSignal, { once: true });
  try {
    return await runWorkerProcess(config, logger, { redis, home, concurrency, name, secretKey }, stop.signal);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    logger.flush?.();
  }
}
