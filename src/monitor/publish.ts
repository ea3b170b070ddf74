// Where the monitor's events go: signed with the monitor key, through our own ingest path first (so
// clients REQ them here; `spider --once` uses the command sink: the relay that owns the data
// directory, or the store in-process), and then to spider.monitorRelays, each through the workers'
// delivery (retried until the relay decides, for a bounded time). A remote relay that is down
// costs a log line per cycle, never the cycle.
import type { Logger } from 'pino';
import { signEvent } from '../nostr/sign.js';
import type { NostrEvent } from '../nostr/event.js';
import type { IngestStatus } from '../ingest/types.js';
import { homeSink, type HomeSink } from '../remote/deliver.js';
import type { EventTemplate } from './nip66.js';

export interface PublisherOptions {
  secretKey: Uint8Array;
  /** our ingest path (or the command sink) */
  put: (ev: NostrEvent) => Promise<IngestStatus>;
  relays: string[];
  connectTimeout: number;
  log: Logger;
}

export interface Publisher {
  /** Signs `t` and hands it to our ingest path (awaited) and the monitor relays (in the background). */
  publish(t: EventTemplate): Promise<{ event: NostrEvent; status: IngestStatus }>;
  /** Waits for the deliveries to the monitor relays under way. */
  flush(): Promise<{ delivered: number; failed: number }>;
  close(): Promise<void>;
}

export function createPublisher(o: PublisherOptions): Publisher {
  const sinks = new Map<string, HomeSink>();
  let pending: Array<Promise<boolean>> = [];
  const failures = new Map<string, string>();
  const sinkFor = (url: string) => {
    let s = sinks.get(url);
    if (!s) {
      s = homeSink({ url, connectTimeout: o.connectTimeout, okTimeout: 10_000, window: 50, deliveryTimeout: 30_000, log: o.log });
      sinks.set(url, s);
    }
    return s;
  };
  return {
    async publish(t) {
      const event = signEvent(t, o.secretKey);
      let status: IngestStatus;
      try { status = await o.put(event); } catch { status = 'rejected'; }
      for (const url of o.relays) {
        if (failures.has(url)) continue; // down this cycle: tried again after flush()
        pending.push(sinkFor(url).put(event).then(() => true, (e: Error) => {
          if (!failures.has(url)) o.log.warn({ relay: url, err: e.message }, 'monitor: could not publish to a monitor relay');
          failures.set(url, e.message);
          return false;
        }));
      }
      return { event, status };
    },
    async flush() {
      const done = await Promise.all(pending);
      pending = [];
      failures.clear();
      return { delivered: done.filter(Boolean).length, failed: done.filter((x) => !x).length };
    },
    async close() {
      await Promise.all([...sinks.values()].map((s) => s.close()));
      await Promise.allSettled(pending);
      pending = [];
    },
  };
}
