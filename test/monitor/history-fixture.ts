// A data directory with 30 days of monitor history, for the /directory page's test and the docs'
// screenshot: fake relays on loopback of several kinds (strfry-, nostr-rs-relay- and khatru-like
// NIP-11 documents, one wanting AUTH, a silent one, a dead address), their directory records with
// crawl counts, one snapshot every 6 hours with varied round-trip times and outages, and a few
// candidates. The relay started on it with the monitor on adds one live check per relay.
import { pino } from 'pino';
import { openStore } from '../../src/store/index.js';
import { RelayDirectory } from '../../src/directory/records.js';
import { CandidateStore } from '../../src/directory/candidates.js';
import { MonitorHistory } from '../../src/monitor/history.js';
import { FakeRelay, deadUrl } from '../fixtures/fake-relay.js';
import { tempDir } from '../helpers/relay-process.js';
import { zeroCounts } from '../../src/directory/types.js';
import type { Snapshot } from '../../src/monitor/types.js';

const DAY = 86_400_000;
const STEP = 6 * 3_600_000;

export interface HistoryFixture {
  dataDir: string;
  relays: FakeRelay[];
  urls: { alpha: string; beta: string; gamma: string; silent: string; dead: string };
  close(): Promise<void>;
}

/** A deterministic wobble (no Math.random: the same picture every run). */
const wave = (i: number, base: number, amp: number) => Math.round(base + amp * (0.5 + 0.5 * Math.sin(i / 3.1)) + ((i * 37) % 11));

export async function historyFixture(): Promise<HistoryFixture> {
  const alpha = await new FakeRelay({ nip11: { name: 'Alpha', software: 'git+https://github.com/hoytech/strfry.git', version: '1.0.4', supported_nips: [1, 2, 4, 9, 11, 22, 28, 40, 70, 77] } }).start();
  const beta = await new FakeRelay({ nip11: { name: 'Beta search', software: 'https://git.sr.ht/~gheartsfield/nostr-rs-relay', version: '0.9.0', supported_nips: [1, 2, 9, 11, 12, 15, 16, 20, 22, 33, 40, 42, 50] } }).start();
  const gamma = await new FakeRelay({ behaviour: 'auth', nip11: { name: 'Gamma members', software: 'https://github.com/fiatjaf/khatru', version: '0.17.0', supported_nips: [1, 11, 42, 70], limitation: { auth_required: true } } }).start();
  const silent = await new FakeRelay({ behaviour: 'silent' }).start();
  const dead = await deadUrl();
  const urls = { alpha: alpha.url, beta: beta.url, gamma: gamma.url, silent: silent.url, dead };

  const dataDir = tempDir('orbweaver-directory-');
  const store = await openStore({ dir: dataDir, mapSize: 1 << 30, logger: pino({ level: 'silent' }) });
  const directory = new RelayDirectory(store.env);
  const history = new MonitorHistory(store.env);
  const candidates = new CandidateStore(store.env);
  const now = Date.now();
  const hops: Record<string, number> = { [alpha.url]: 0, [beta.url]: 1, [gamma.url]: 1, [silent.url]: 2, [dead]: -1 };
  for (const [url, hop] of Object.entries(hops)) {
    await directory.discovered(url, hop, ['seed'], 3, now - 30 * DAY);
    const counts = { ...zeroCounts(), fetched: url === dead ? 0 : 40 + hop * 10, stored: url === dead ? 0 : 30 };
    if (hop >= 0) await directory.applyResult({ url, hop, outcome: url === silent.url ? 'failed' : 'ok', error: url === silent.url ? 'kind 0: no answer' : undefined, nip11: null, quirks: {}, cursors: {}, counts, links: {}, ignoredLists: 0, startedAt: now - DAY, durationMs: 900 });
    if (url !== dead) await history.noteCrawl(url, { '0': 120 - hop * 20, '3': 60, '10000': 8, '10002': 45 }, now - DAY);
  }
  const pattern: Record<string, (i: number, ageDays: number) => Snapshot['on']> = {
    [alpha.url]: () => true,
    [beta.url]: (_i, age) => !(age > 9 && age < 10.5),
    [gamma.url]: (i) => i % 9 !== 4,
    [silent.url]: () => false,
    [dead]: (_i, age) => age > 2,
  };
  const rtt: Record<string, [number, number]> = { [alpha.url]: [18, 25], [beta.url]: [60, 40], [gamma.url]: [110, 90], [silent.url]: [0, 0], [dead]: [35, 20] };
  for (const url of Object.keys(hops)) {
    for (let i = 0, t = now - 30 * DAY + STEP; t < now; i++, t += STEP) {
      const on = pattern[url](i, (now - t) / DAY);
      const [base, amp] = rtt[url];
      const s: Snapshot = on ? { t, on, o: wave(i, base, amp), r: wave(i + 5, Math.round(base / 2), Math.round(amp / 2)) } : { t, on, e: 'open: connect ECONNREFUSED' };
      await history.addSnapshot(url, s);
    }
  }
  const sighting = (url: string, source: string) => candidates.add(new Map([[url, new Map([[source, 2]])]]), new Map([[url, { url, source, event: 'e'.repeat(64), pubkey: 'p'.repeat(64) }]]), 100, now);
  await sighting('wss://nostr.example.org', 'kind 3 content');
  await sighting('wss://relay.example.net', 'NIP-66 30166');
  await sighting('wss://outbox.example.com', 'r tag of kind 10002');
  await store.close();
  return {
    dataDir, relays: [alpha, beta, gamma, silent], urls,
    async close() { await Promise.all([alpha, beta, gamma, silent].map((r) => r.close())); },
  };
}
