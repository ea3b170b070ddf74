// The directory spider's public surface (started beside the relay by src/app/app.ts, and by src/cli.ts).
export { createSpider, crawlOptions, type Spider, type SpiderDeps, type SpiderConfig } from './spider.js';
export { spiderCommand, SPIDER_USAGE, localRelayUrl } from './cli.js';
export { crawlRelay, type CrawlDeps, type CrawlOptions } from './crawl.js';
export { RelayDirectory, type RelayRecord } from './directory.js';
export { MemoryQueue, type WorkQueue, type Lease } from './queue.js';
export { RedisQueue, type QueueItem, type ResultEnvelope } from './queue-redis.js';
export { workerCommand, WORKER_USAGE } from './worker-cli.js';
export { runWorker } from './worker.js';
export { homeSink } from './deliver.js';
export { ingestSink, type EventSink } from './sink.js';
export { formatSummary, metricsText, type SpiderStatus, type SpiderSummary, type HopSummary } from './status.js';
export type { WorkItem, WorkResult, Quirks, Cursors, KindCursor, FetchCounts } from './types.js';
export { normalizeRelayUrl, resolveTarget, isSpecialAddress } from './url.js';
