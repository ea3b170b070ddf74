// The directory spider's public surface (started beside the relay by src/app/app.ts, and alone by
// src/app/standalone-spider.ts and src/app/worker.ts).
export { createSpider, type Spider, type SpiderDeps, type SpiderConfig } from './spider.js';
export { crawlOptions } from './fetch/options.js';
export { crawlRelay, type CrawlDeps, type CrawlOptions } from './fetch/crawl.js';
export { MemoryQueue, type WorkQueue, type Lease } from './queue/memory.js';
export { RedisQueue, type QueueItem, type ResultEnvelope } from './queue/redis.js';
export { runWorker } from './queue/worker.js';
export { formatSummary, metricsText, type SpiderStatus, type SpiderSummary, type HopSummary } from './status.js';
