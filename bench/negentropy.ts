// negentropy: bytes on the wire for an incremental NIP-77 sync against a relay that holds p% events
// the local store lacks, against a full paging fetch of the same set (the spider's way: pages of
// REQ with until, deduplicated by id). Both go through a local TCP proxy that counts every byte in
// both directions, so the figures are wire bytes (WebSocket framing and HTTP upgrade included) for
// any relay, ours or strfry.
//
// The local side is an orbweaver store in a temporary directory holding the data set minus p% of
// it, written before any measurement: the newest p% (--new-where newest: what a daily incremental
// run meets, new events arrive at the end of the timeline) or every (100/p)-th event (spread: the
// worst case for range-based reconciliation, every range holds a difference). The sync is `orbweaver sync`'s code path
// (src/sync: reconcile + fetch by id in batched REQs); fetched events are counted, not stored, so
// each repeat starts from the same local set.
import net from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { COMMON_OPTS, flag, num, str, type Opts } from './lib/args.js';
import { DATASET_OPTS, LOAD_OPTS, type Bench } from './lib/bench.js';
import { BenchError, publishAll } from './lib/client.js';
import { eventFrames, loadDataset, type NostrEvent } from './lib/events.js';
import { round } from './lib/histogram.js';
import { emit, log, machine, table, waitForQuiet } from './lib/report.js';
import { pagedFetch } from './spider-fetch.js';
import { openStore } from '../src/store/index.js';
import type { EventStore } from '../src/store/types.js';
import { configSchema } from '../src/config/schema.js';
import { parseFilter } from '../src/nostr/filter.js';
import { connectRemote } from '../src/sync/sync.js';
import { emptyStats, reconcileFilter } from '../src/remote/reconcile.js';
import { pageBytes } from '../src/config/spider.js';
import { emptyFetchCounts, IdFetcher } from '../src/sync/fetch-ids.js';
import type { EventSink } from '../src/ingest/sink.js';

/** A TCP forwarder to the relay that counts bytes each way. */
async function countingProxy(target: URL): Promise<{ url: string; bytes(): { up: number; down: number }; reset(): void; close(): void }> {
  let up = 0;
  let down = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const remote = net.connect(Number(target.port || 80), target.hostname);
    sockets.add(client).add(remote);
    client.on('data', (d) => { up += d.length; });
    remote.on('data', (d) => { down += d.length; });
    client.pipe(remote);
    remote.pipe(client);
    const end = () => { client.destroy(); remote.destroy(); sockets.delete(client); sockets.delete(remote); };
    client.on('error', end).on('close', end);
    remote.on('error', end).on('close', end);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: `ws://127.0.0.1:${port}${target.pathname === '/' ? '' : target.pathname}`,
    bytes: () => ({ up, down }),
    reset: () => { up = 0; down = 0; },
    close: () => { for (const s of sockets) s.destroy(); server.close(); },
  };
}

interface SyncRun {
  need: number;
  fetched: number;
  rounds: number;
  negBytesUp: number;
  negBytesDown: number;
  secs: number;
}

async function incrementalSync(url: string, store: EventStore, filterJson: Record<string, unknown>, frame: number): Promise<SyncRun> {
  const config = configSchema.parse({ negentropy: { syncFrameSizeLimit: frame } });
  const t0 = performance.now();
  const client = await connectRemote(url, config);
  const counts = emptyFetchCounts();
  const countingSink: EventSink = { kind: 'remote', put: async () => 'stored', close: async () => {} };
  const filter = parseFilter(filterJson);
  const fetcher = new IdFetcher({
    client, sink: countingSink, filters: [filter], batch: config.negentropy.syncBatch, concurrency: 2, timeout: 30_000,
    deadline: config.spider.pageDeadline, maxBytes: pageBytes(config.spider), counts,
  });
  const stats = emptyStats();
  try {
    await reconcileFilter(client, filter, {
      frameSizeLimit: frame,
      timeout: 30_000,
      localItems: (f) => store.negentropyItems(f, { maxItems: config.negentropy.maxRecords }),
      now: Math.floor(Date.now() / 1000),
      onNeed: (ids) => fetcher.add(ids),
    }, stats);
    await fetcher.drained();
  } finally {
    client.close();
  }
  return { need: stats.need, fetched: counts.received, rounds: stats.rounds, negBytesUp: stats.bytesUp, negBytesDown: stats.bytesDown, secs: (performance.now() - t0) / 1000 };
}

export const negentropy: Bench = {
  name: 'negentropy',
  summary: 'wire bytes of an incremental NIP-77 sync (local store lacks p% of the set) against a full paging fetch',
  options: [
    ...COMMON_OPTS,
    ...DATASET_OPTS,
    ...LOAD_OPTS,
    { name: 'new-pct', type: 'number', default: 1, help: 'percent of the set the local store lacks (the relay\'s "new" events)' },
    { name: 'new-where', type: 'string', default: 'newest', help: 'which events the local store lacks: newest (the newest p%) or spread (every (100/p)-th)' },
    { name: 'frame', type: 'int', default: 60_000, help: 'negentropy frame size limit of the syncing side, bytes' },
    { name: 'page-limit', type: 'int', default: 500, help: 'limit per REQ page of the paging fetch' },
    { name: 'repeat', type: 'int', default: 3, help: 'runs of each method; the median time is reported (bytes do not vary)' },
  ],
  async run(o: Opts) {
    const url = str(o, 'url');
    const target = new URL(url);
    if (target.protocol !== 'ws:') throw new BenchError('the byte-counting proxy forwards plain ws:// only');
    const ds = await loadDataset({ count: num(o, 'count'), authors: num(o, 'authors'), seed: str(o, 'seed'), spanSec: num(o, 'span') }, flag(o, 'regen'));
    if (flag(o, 'load')) {
      log(`negentropy: loading ${ds.events.length} events into ${url}`);
      const r = await publishAll(url, eventFrames(ds.events), ds.events.map((e) => e.id), { connections: num(o, 'load-connections'), inflight: num(o, 'load-inflight'), timeoutMs: 600_000, progress: true });
      log(`  loaded: ${r.stored} stored, ${r.duplicates} already there, ${r.rejectedTotal} rejected, ${r.missing} missing`);
    }
    const pct = num(o, 'new-pct');
    const where = str(o, 'new-where');
    if (where !== 'newest' && where !== 'spread') throw new BenchError('--new-where must be newest or spread');
    const every = pct > 0 ? Math.max(1, Math.round(100 / pct)) : Infinity;
    const missing = Math.round((ds.events.length * pct) / 100);
    const byAge = [...ds.events].sort((a, b) => a.created_at - b.created_at || (a.id < b.id ? -1 : 1));
    const newest = new Set(byAge.slice(byAge.length - missing).map((e) => e.id));
    const dir = mkdtempSync(join(tmpdir(), 'orbweaver-bench-neg-'));
    const store = await openStore({ dir, mapSize: 8 * 1024 ** 3 });
    const proxy = await countingProxy(target);
    try {
      // the local side: the set minus every `every`-th event, written before any clock starts
      const local: NostrEvent[] = where === 'newest' ? ds.events.filter((e) => !newest.has(e.id)) : ds.events.filter((_, i) => (i + 1) % every !== 0);
      log(`  local store: ${local.length} of ${ds.events.length} events (${ds.events.length - local.length} new on the relay)`);
      const writes: Array<Promise<unknown>> = [];
      for (const e of local) writes.push(store.write(e, JSON.stringify(e)));
      await Promise.all(writes);

      const filter = { authors: ds.pubkeys };
      const repeat = Math.max(1, num(o, 'repeat'));
      const frame = num(o, 'frame');
      const full = [];
      let fullBytes = { up: 0, down: 0 };
      for (let i = 0; i < repeat; i++) {
        await waitForQuiet(num(o, 'quiet-wait'));
        proxy.reset();
        const r = await pagedFetch(proxy.url, filter, num(o, 'page-limit'), ds, undefined);
        fullBytes = proxy.bytes();
        full.push(r.secs);
        log(`  paging fetch run ${i + 1}: ${r.events} events, ${r.pages} pages, ${fullBytes.up + fullBytes.down} bytes, ${r.secs.toFixed(2)} s`);
      }
      const inc: SyncRun[] = [];
      let incBytes = { up: 0, down: 0 };
      for (let i = 0; i < repeat; i++) {
        await waitForQuiet(num(o, 'quiet-wait'));
        proxy.reset();
        inc.push(await incrementalSync(proxy.url, store, filter, frame));
        incBytes = proxy.bytes();
        const r = inc[i]!;
        log(`  negentropy sync run ${i + 1}: need ${r.need}, fetched ${r.fetched}, ${r.rounds} rounds, ${incBytes.up + incBytes.down} bytes, ${r.secs.toFixed(2)} s`);
      }
      const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
      const r = inc[0]!;
      const fullTotal = fullBytes.up + fullBytes.down;
      const incTotal = incBytes.up + incBytes.down;
      const ratio = incTotal / fullTotal;
      emit({
        bench: 'negentropy', label: str(o, 'label') || undefined, url, time: new Date().toISOString(),
        store_events: ds.events.length, new_pct: pct, new_where: where, new_events: ds.events.length - local.length, frame,
        full_bytes: fullTotal, full_bytes_up: fullBytes.up, full_bytes_down: fullBytes.down, full_secs: round(med(full)),
        sync_bytes: incTotal, sync_bytes_up: incBytes.up, sync_bytes_down: incBytes.down, sync_secs: round(med(inc.map((x) => x.secs))),
        negentropy_payload_up: r.negBytesUp, negentropy_payload_down: r.negBytesDown, rounds: r.rounds, need: r.need, fetched: r.fetched,
        ratio: round(ratio, 4), goal_met: ratio <= 0.05, machine: machine(),
      });
      table(`negentropy: ${ds.events.length} events, ${pct}% new on the relay (${where}), frame ${frame}`, [
        { method: 'full paging fetch', bytes: fullTotal, 'up / down': `${fullBytes.up} / ${fullBytes.down}`, 's (median)': round(med(full), 3) },
        { method: 'negentropy sync + fetch by id', bytes: incTotal, 'up / down': `${incBytes.up} / ${incBytes.down}`, 's (median)': round(med(inc.map((x) => x.secs)), 3) },
        { method: `ratio (goal <= 5%)`, bytes: `${(ratio * 100).toFixed(2)}%`, 'up / down': `${r.rounds} rounds, need ${r.need}`, 's (median)': '' },
      ]);
    } finally {
      proxy.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
