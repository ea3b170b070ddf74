// nip85-start: how soon after a relay starts do the most followed get their NIP-85 assertions, when
// are all of them out, and how long is the relay's main thread held meanwhile? Start the relay
// (trust.nip85 on) on a store and this bench together; it
//
//   - reads the data set's follow lists once (--file, the JSONL the store was imported from) for
//     the --top most followed pubkeys, cached beside the file (run it with --prepare first, so the
//     relay does not share the CPU with that read);
//   - probes GET /healthz every --probe ms: a reply late by more than the probe interval means the
//     main thread (where uWS answers HTTP) was held; reports the longest and how many passed 100 ms;
//   - asks {"kinds":[30382],"authors":[service key],"#d":[the most followed]} every second (the
//     shape Amethyst asks) until each has its assertion, and times that query;
//   - reads /status.json until the trust section reports a finished publication.
//
// Times are from the relay's startedAt (status.json). One line of JSON at the end.
import { createReadStream, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { flag, num, str, UsageError, type Opts } from './lib/args.js';
import type { Bench } from './lib/bench.js';
import { BenchError, connect, type WebSocket } from './lib/client.js';
import { emit, log, machine } from './lib/report.js';

async function mostFollowed(file: string, top: number): Promise<string[]> {
  const cache = `${file}.top${top}.json`;
  if (existsSync(cache)) return JSON.parse(readFileSync(cache, 'utf8')) as string[];
  // the newest list of each author (a data set may hold replacements), then followers per pubkey
  const lists = new Map<string, { at: number; tags: string[] }>();
  for await (const line of createInterface({ input: createReadStream(file) })) {
    if (!line.includes('"kind":3,')) continue;
    const e = JSON.parse(line) as { kind: number; pubkey: string; created_at: number; tags: string[][] };
    if (e.kind !== 3) continue;
    const had = lists.get(e.pubkey);
    if (!had || had.at < e.created_at) lists.set(e.pubkey, { at: e.created_at, tags: [...new Set(e.tags.filter((t) => t[0] === 'p' && /^[0-9a-f]{64}$/.test(t[1] ?? '')).map((t) => t[1]!))] });
  }
  const count = new Map<string, number>();
  for (const [a, l] of lists) for (const p of l.tags) if (p !== a) count.set(p, (count.get(p) ?? 0) + 1);
  const out = [...count.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, top).map((x) => x[0]);
  writeFileSync(cache, JSON.stringify(out));
  return out;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function reqOnce(ws: WebSocket, filter: object, n: number): Promise<Array<{ tags: string[][] }>> {
  const sid = `n${n}`;
  const out: Array<{ tags: string[][] }> = [];
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { ws.off('message', on); reject(new BenchError('no EOSE within 30 s')); }, 30_000);
    const on = (data: Buffer) => {
      const m = JSON.parse(data.toString()) as unknown[];
      if (m[1] !== sid) return;
      if (m[0] === 'EVENT') out.push(m[2] as { tags: string[][] });
      else if (m[0] === 'EOSE' || m[0] === 'CLOSED') {
        clearTimeout(timer);
        ws.off('message', on);
        if (m[0] === 'EOSE') ws.send(JSON.stringify(['CLOSE', sid]));
        resolve(out);
      }
    };
    ws.on('message', on);
    ws.send(JSON.stringify(['REQ', sid, filter]));
  });
}

export const nip85Start: Bench = {
  name: 'nip85-start',
  summary: 'NIP-85 after a start: the most followed\'s assertions, all of them, and how long the main thread was held (a /healthz probe)',
  options: [
    { name: 'url', type: 'string', help: 'relay just started with trust.nip85 on' },
    { name: 'file', type: 'string', help: 'the JSONL the store was imported from (for the most followed)' },
    { name: 'top', type: 'int', default: 10, help: 'most followed pubkeys to wait for' },
    { name: 'probe', type: 'int', default: 20, help: 'ms between /healthz probes' },
    { name: 'timeout', type: 'int', default: 900, help: 'seconds to wait at most' },
    { name: 'prepare', type: 'bool', default: false, help: 'only read --file for the most followed (cached beside it) and exit' },
  ],
  async run(o: Opts) {
    const file = str(o, 'file');
    if (!file) throw new UsageError('nip85-start needs --file (the data set the store holds)');
    const top = await mostFollowed(file, num(o, 'top'));
    if (flag(o, 'prepare')) return void log(`  the ${top.length} most followed of ${file} cached`);
    const url = str(o, 'url');
    const http = url.replace(/^ws/, 'http');
    // the probe: a late reply is a held main thread
    const every = num(o, 'probe');
    const stalls: Array<{ ms: number; at: number }> = []; // at: Date.now() of the late reply
    let worst = 0;
    let worstAt = 0;
    let probing = true;
    const probe = (async () => {
      while (probing) {
        const t0 = performance.now();
        try { await (await fetch(`${http}/healthz`)).arrayBuffer(); } catch { /* not listening yet */ }
        const ms = performance.now() - t0;
        if (ms > worst) {
          worst = ms;
          worstAt = Date.now();
        }
        if (ms > 100) stalls.push({ ms: Math.round(ms), at: Date.now() });
        await sleep(Math.max(0, every - ms));
      }
    })();
    const deadline = Date.now() + num(o, 'timeout') * 1000;
    let startedAt = 0;
    let svc: string | undefined;
    while (Date.now() < deadline && (!startedAt || !svc)) {
      try {
        const st = await (await fetch(`${http}/status.json`)).json() as { startedAt?: number | string };
        startedAt = typeof st.startedAt === 'string' ? Date.parse(st.startedAt) : st.startedAt ?? 0;
        const info = await (await fetch(http, { headers: { accept: 'application/nostr+json' } })).json() as { nip85?: { pubkey: string } };
        svc = info.nip85?.pubkey;
        if (!svc) throw new BenchError('the relay has no NIP-85 service key: start it with ORBWEAVER_TRUST_NIP85=true');
      } catch (e) {
        if (e instanceof BenchError) throw e;
        await sleep(200);
      }
    }
    const ws = await connect(url);
    const found = new Map<string, number>();
    const queryMs: number[] = [];
    let allAt = 0;
    let published = '';
    for (let n = 0; Date.now() < deadline && (found.size < top.length || !allAt); n++) {
      if (found.size < top.length) {
        const t0 = performance.now();
        const evs = await reqOnce(ws, { kinds: [30382], authors: [svc], '#d': top }, n);
        queryMs.push(performance.now() - t0);
        for (const e of evs) {
          const d = e.tags.find((t) => t[0] === 'd')?.[1];
          if (d && !found.has(d)) found.set(d, Date.now() - startedAt);
        }
      }
      if (!allAt) {
        const st = await (await fetch(`${http}/status.json`)).json() as { sections?: Array<{ title: string; rows: string[][] }> };
        const row = st.sections?.find((s) => s.title === 'Trust ranking')?.rows.find((r) => r[0] === 'NIP-85 last publication');
        if (row && row[1] !== 'none yet') {
          allAt = Date.now() - startedAt;
          published = row[1]!;
        }
      }
      await sleep(1000);
    }
    // the same query once the publication is over (what a client sees on a relay at rest): the
    // times above overlap the pass, which shares the main thread by design
    const idleMs: number[] = [];
    if (allAt) for (let n = 0; n < 30; n++) {
      const t0 = performance.now();
      await reqOnce(ws, { kinds: [30382], authors: [svc], '#d': top }, 1_000_000 + n);
      idleMs.push(performance.now() - t0);
    }
    probing = false;
    await probe;
    ws.close();
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
    const firsts = [...found.values()].sort((a, b) => a - b);
    const s = (ms: number | undefined) => (ms === undefined ? '-' : `${(ms / 1000).toFixed(1)} s`);
    log(`  the ${top.length} most followed: ${found.size} asserted, the first at ${s(firsts[0])}, the last at ${s(firsts[firsts.length - 1])} after start`);
    log(`  every assertion out at ${s(allAt || undefined)} (${published || 'not finished'})`);
    // before the first assertion the pass is running; after it, mostly the publication
    const split = firsts[0] === undefined ? Infinity : startedAt + firsts[0];
    const inPass = stalls.filter((x) => x.at < split);
    const maxOf = (xs: Array<{ ms: number }>) => xs.reduce((m, x) => Math.max(m, x.ms), 0);
    log(`  main thread: longest /healthz reply ${worst.toFixed(0)} ms (at ${s(worstAt - startedAt)}), ${stalls.length} replies over 100 ms (${inPass.length} before the first assertion, longest ${maxOf(inPass)} ms; ${stalls.length - inPass.length} after, longest ${maxOf(stalls.filter((x) => x.at >= split))} ms)`);
    log(`  the Amethyst-shaped query (${top.length} d values): median ${median(queryMs)?.toFixed(1)} ms during the pass, ${median(idleMs)?.toFixed(1) ?? '-'} ms after it`);
    emit({ bench: 'nip85-start', url, machine: machine(), results: { top: top.length, asserted: found.size, firstS: (firsts[0] ?? NaN) / 1000, lastOfTopS: (firsts[firsts.length - 1] ?? NaN) / 1000, allS: allAt / 1000, published, longestStallMs: Math.round(worst), stallsOver100ms: stalls.length, stallsBeforeFirst: inPass.length, stalls: stalls.slice(0, 50).map((x) => [x.ms, Number(((x.at - startedAt) / 1000).toFixed(1))]), queryMedianMs: median(queryMs), idleQueryMedianMs: median(idleMs) } });
  },
};
