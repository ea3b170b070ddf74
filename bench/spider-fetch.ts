// spider-fetch: a complete fetch of K events from one relay the way a spider does it — page
// backwards with `until` (inclusive, deduplicated by id) until a page brings nothing new — measured
// in events/s, and the same fetch done by the nostr-fetch library (fetchAllEvents) for comparison.
//
// nostr-fetch is not a dependency of this project: install it in a scratch directory outside the
// repository and pass that directory, e.g.
//   mkdir -p /tmp/nf && cd /tmp/nf && npm init -y && npm install nostr-fetch
//   npm run bench -- spider-fetch --url ws://127.0.0.1:7447 --nostr-fetch-dir /tmp/nf
import { setMaxListeners } from 'node:events';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import WebSocket from 'ws';
import { COMMON_OPTS, flag, num, str, type Opts } from './lib/args.js';
import { DATASET_OPTS, LOAD_OPTS, type Bench } from './lib/bench.js';
import { connect, msgType, publishAll, sendBatch } from './lib/client.js';
import { eventFrames, loadDataset, type Dataset, type NostrEvent } from './lib/events.js';
import { round } from './lib/histogram.js';
import { CpuSampler, emit, log, machine, table, waitForQuiet, type CpuReading } from './lib/report.js';

interface FetchRun {
  events: number;
  complete: number;
  pages: number;
  secs: number;
  cpu: CpuReading;
}

/** Our own fetcher: one connection, pages of `pageLimit` going back with an inclusive `until`. */
export async function pagedFetch(url: string, filter: Record<string, unknown>, pageLimit: number, ds: Dataset, pid: number | undefined): Promise<FetchRun> {
  const cpu = new CpuSampler(pid);
  const t0 = performance.now();
  const ws = await connect(url);
  const seen = new Map<string, NostrEvent>();
  let pages = 0;
  let until: number | undefined;
  const maxPages = Math.ceil(ds.events.length / pageLimit) * 4 + 20; // bounded even against a relay that ignores until
  for (;;) {
    if (pages >= maxPages) {
      log(`  stopped after ${pages} pages (the relay keeps sending new events: does it honour until?)`);
      break;
    }
    const sid = `p${pages}`;
    const page = await new Promise<{ fresh: number; oldest: number }>((resolve, reject) => {
      let fresh = 0;
      let oldest = Infinity;
      const timer = setTimeout(() => reject(new Error(`page ${pages}: no EOSE within 30 s`)), 30_000);
      const onMsg = (data: Buffer): void => {
        const t = msgType(data);
        if (t === 'EVENT') {
          const ev = (JSON.parse(data.toString()) as [string, string, NostrEvent])[2];
          if (!seen.has(ev.id)) {
            seen.set(ev.id, ev);
            fresh++;
          }
          if (ev.created_at < oldest) oldest = ev.created_at;
        } else if (t === 'EOSE' || t === 'CLOSED') {
          clearTimeout(timer);
          ws.removeListener('message', onMsg);
          if (t === 'CLOSED') log(`  ${data.toString().slice(0, 200)}`);
          resolve({ fresh, oldest });
        }
      };
      ws.on('message', onMsg);
      const f = until === undefined ? { ...filter, limit: pageLimit } : { ...filter, until, limit: pageLimit };
      sendBatch(ws, [JSON.stringify(['REQ', sid, f])]);
    });
    pages++;
    sendBatch(ws, [`["CLOSE","${sid}"]`]);
    if (page.fresh === 0) break;
    until = page.oldest;
  }
  const secs = (performance.now() - t0) / 1000;
  ws.terminate();
  let complete = 0;
  for (const e of ds.events) if (seen.has(e.id)) complete++;
  return { events: seen.size, complete, pages, secs, cpu: cpu.read() };
}

interface NostrFetcherLike {
  fetchAllEvents(relays: string[], filter: Record<string, unknown>, time: Record<string, number>, opts: Record<string, unknown>): Promise<NostrEvent[]>;
  shutdown(): void;
}
interface NostrFetchModule {
  NostrFetcher: { init(opts: Record<string, unknown>): NostrFetcherLike };
}

async function loadNostrFetch(dir: string): Promise<NostrFetchModule | string> {
  const entry = join(dir, 'node_modules', 'nostr-fetch', 'dist', 'index.mjs');
  if (!existsSync(entry)) return `nostr-fetch not found at ${entry} (install it there: cd ${dir} && npm install nostr-fetch)`;
  // nostr-fetch adds one abort listener per page to a shared AbortSignal: silence Node's leak warning
  setMaxListeners(10_000);
  return (await import(pathToFileURL(entry).href)) as NostrFetchModule;
}

class NoDeflateWebSocket extends WebSocket {
  constructor(url: string, protocols?: string | string[]) {
    super(url, protocols, { perMessageDeflate: false });
  }
}

async function nostrFetchRun(mod: NostrFetchModule, url: string, filter: Record<string, unknown>, pageLimit: number, verify: boolean, ds: Dataset, pid: number | undefined): Promise<FetchRun> {
  const cpu = new CpuSampler(pid);
  const t0 = performance.now();
  const fetcher = mod.NostrFetcher.init({ webSocketConstructor: NoDeflateWebSocket, minLogLevel: 'none' });
  const evs = await fetcher.fetchAllEvents([url], filter, {}, { skipVerification: !verify, limitPerReq: pageLimit });
  const secs = (performance.now() - t0) / 1000;
  fetcher.shutdown();
  const got = new Set(evs.map((e) => e.id));
  let complete = 0;
  for (const e of ds.events) if (got.has(e.id)) complete++;
  return { events: evs.length, complete, pages: -1, secs, cpu: cpu.read() };
}

function median(runs: FetchRun[]): FetchRun {
  return [...runs].sort((a, b) => a.secs - b.secs)[Math.floor(runs.length / 2)]!;
}

export const spiderFetch: Bench = {
  name: 'spider-fetch',
  summary: 'complete paged fetch (until + dedupe) of K events, events/s; compared with nostr-fetch when --nostr-fetch-dir is given',
  options: [
    ...COMMON_OPTS,
    ...DATASET_OPTS,
    ...LOAD_OPTS,
    { name: 'page-limit', type: 'int', default: 500, help: 'limit per REQ page (for both fetchers; the relay may clamp it)' },
    { name: 'repeat', type: 'int', default: 3, help: 'runs of each fetcher; the median is reported' },
    { name: 'nostr-fetch-dir', type: 'string', default: '', help: 'directory holding node_modules/nostr-fetch (installed outside this repo); without it the comparison is skipped' },
    { name: 'nf-verify', type: 'bool', default: false, help: 'also run nostr-fetch with its signature verification on (slow: noble, pure JS)' },
  ],
  async run(o: Opts) {
    const url = str(o, 'url');
    const pid = o.pid as number | undefined;
    const ds = await loadDataset({ count: num(o, 'count'), authors: num(o, 'authors'), seed: str(o, 'seed'), spanSec: num(o, 'span') }, flag(o, 'regen'));
    if (flag(o, 'load')) {
      log(`spider-fetch: loading ${ds.events.length} events into ${url}`);
      const r = await publishAll(url, eventFrames(ds.events), ds.events.map((e) => e.id), { connections: num(o, 'load-connections'), inflight: num(o, 'load-inflight'), timeoutMs: 600_000, progress: true });
      log(`  loaded: ${r.stored} stored, ${r.duplicates} already there, ${r.rejectedTotal} rejected, ${r.missing} missing`);
    }
    const filter = { authors: ds.pubkeys };
    const pageLimit = num(o, 'page-limit');
    const repeat = Math.max(1, num(o, 'repeat'));
    const rows: Record<string, string | number>[] = [];
    const report = (fetcher: string, runs: FetchRun[], note?: string): void => {
      const m = median(runs);
      const eps = m.events / m.secs;
      emit({
        bench: 'spider-fetch',
        label: str(o, 'label') || undefined,
        url,
        time: new Date().toISOString(),
        fetcher,
        filter: `{"authors":[${ds.pubkeys.length} authors]}`,
        page_limit: pageLimit,
        store_events: ds.events.length,
        events: m.events,
        complete: m.complete,
        pages: m.pages >= 0 ? m.pages : undefined,
        secs: round(m.secs),
        events_per_s: Math.round(eps),
        runs: runs.map((r) => round(r.secs, 3)),
        note,
        ...m.cpu,
        machine: machine(),
      });
      rows.push({ fetcher, events: m.events, 'of the set': `${m.complete}/${ds.events.length}`, 's (median)': round(m.secs, 3), 'events/s': Math.round(eps), 'client CPU%': m.cpu.client_cpu_pct, 'relay CPU%': m.cpu.relay_cpu_pct ?? '-' });
    };

    const ours: FetchRun[] = [];
    for (let i = 0; i < repeat; i++) {
      await waitForQuiet(num(o, 'quiet-wait'));
      ours.push(await pagedFetch(url, filter, pageLimit, ds, pid));
      log(`  paged fetch run ${i + 1}: ${ours[i]!.events} events in ${ours[i]!.secs.toFixed(3)} s, ${ours[i]!.pages} pages`);
    }
    report('bench paged fetch (until, dedupe by id, no verification)', ours);

    const dir = str(o, 'nostr-fetch-dir');
    if (!dir) {
      log('nostr-fetch comparison skipped: pass --nostr-fetch-dir DIR (nostr-fetch installed outside the repo, see bench/README.md)');
    } else {
      const mod = await loadNostrFetch(dir);
      if (typeof mod === 'string') log(`nostr-fetch comparison skipped: ${mod}`);
      else {
        for (const verify of flag(o, 'nf-verify') ? [false, true] : [false]) {
          const runs: FetchRun[] = [];
          for (let i = 0; i < (verify ? 1 : repeat); i++) {
            await waitForQuiet(num(o, 'quiet-wait'));
            runs.push(await nostrFetchRun(mod, url, filter, pageLimit, verify, ds, pid));
            log(`  nostr-fetch${verify ? ' (verifying)' : ''} run ${i + 1}: ${runs[i]!.events} events in ${runs[i]!.secs.toFixed(3)} s`);
          }
          report(verify ? 'nostr-fetch fetchAllEvents (verifying signatures)' : 'nostr-fetch fetchAllEvents (skipVerification)', runs);
        }
      }
    }
    table(`spider-fetch: complete fetch of ${ds.events.length} events, page limit ${pageLimit}`, rows);
  },
};
