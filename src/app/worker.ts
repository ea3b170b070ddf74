// A spider worker process (`orbweaver worker`): the Redis queue, the delivery to the home relay
// (NIP-01 EVENT after NIP-42 AUTH with the worker's key) and the worker loop over them, wired here;
// the command reads its flags and calls runWorkerProcess.
import type { Config } from '../config/schema.js';
import type { Logger } from '../lib/logger.js';
import { homeSink, pubkeyOf } from '../remote/deliver.js';
import { RedisQueue } from '../spider/queue/redis.js';
import { runWorker } from '../spider/queue/worker.js';
import { heapLimitMb, oldSpaceMb } from './heap-limit.js';

export interface WorkerProcessOptions {
  redis: string;
  /** the home relay the events are published to */
  home: string;
  concurrency: number;
  name?: string;
  secretKey?: Uint8Array;
}

/** Runs until `stop` fires; resolves with the exit code (0 stopped, 1 failed). */
export async function runWorkerProcess(config: Config, logger: Logger, o: WorkerProcessOptions, stop: AbortSignal): Promise<number> {
  const { redis, home, concurrency, secretKey } = o;
  const queue = new RedisQueue({ url: redis, prefix: config.spider.queueKey, leaseTtl: config.spider.leaseTtl, maxAttempts: config.spider.maxAttempts, log: logger, name: o.name });
  const sink = homeSink({
    url: home, authUrl: config.publicUrl || home, secretKey, connectTimeout: Math.min(config.spider.connectTimeout, 5000),
    okTimeout: 30_000, window: 200, deliveryTimeout: config.spider.deliveryTimeout, log: logger,
  });
  logger.info({ redis: redis.replace(/\/\/[^@/]*@/, '//***@'), queueKey: config.spider.queueKey, home, concurrency, name: queue.name, pubkey: secretKey ? pubkeyOf(secretKey) : null, oldSpaceMb: oldSpaceMb(), heapLimitMb: heapLimitMb(), pid: process.pid },
    secretKey ? 'orbweaver worker started' : 'orbweaver worker started WITHOUT a key (spider.workerKey): the home relay sees an anonymous client');
  try {
    const stats = await runWorker({ config: config.spider, queue, sink, log: logger, concurrency }, stop);
    logger.info(stats, 'orbweaver worker stopped');
    return 0;
  } catch (e) {
    logger.error({ err: e }, 'worker failed');
    return 1;
  } finally {
    await sink.close();
    await queue.close();
  }
}
