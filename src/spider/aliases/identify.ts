// One relay, one crawl. Before a hop's relays are crawled, the URLs of one server (host and port, as
// politeness counts them: the same server under other paths) that may reach one relay are asked what
// they answer (remote/identity.ts), each at most once per run, and grouped (group.ts): each relay is
// crawled under its canonical URL only, the other URLs recorded as its aliases
// (directory/records.ts). A URL alone on its host in
// the run, with no alias on record, is crawled at once without being asked anything. A URL the
// directory records as an alias, shown within `recheck`, is folded into its relay without asking
// again. Asking takes the host's politeness gate like a crawl: one visit at a time per server.
import type { Logger } from 'pino';
import type { RelayDirectory, RelayRecord } from '../../directory/records.js';
import type { WorkItem } from '../../directory/types.js';
import type { RelayAnswer } from '../../remote/identity.js';
import { hostOf, type HostGate } from '../hosts.js';
import { groupRelays, type Member } from './group.js';

export interface IdentifyDeps {
  directory: RelayDirectory;
  /** the run's politeness per server (shared with the crawl) */
  gate: HostGate;
  /** what one URL answers (address checks and timeouts are the caller's; never throws) */
  ask: (url: string) => Promise<RelayAnswer>;
  /** the crawl item of a relay at `hop`; null when it is not crawled now (our own, refused, failure backoff) */
  itemFor: (rec: RelayRecord, hop: number) => WorkItem | null;
  /** ms an alias shown by its answers is trusted without asking again */
  recheck: number;
  signal: AbortSignal;
  log: Logger;
}

/** What identifying one host's URLs gave. */
export interface HostResult {
  /** its relays to crawl now, each under its canonical URL */
  items: WorkItem[];
  /** URLs of the hop folded into a relay found under another URL */
  folded: number;
  /** relays not crawled now (failure backoff) */
  skipped: number;
}

/** One host's URLs to identify before their crawl, and what to crawl if identifying fails. */
export interface HostTask {
  host: string;
  items: WorkItem[];
  run(): Promise<HostResult>;
}

// Another port is another server, never asked about this one's URLs: a host's relays on other ports
// (or ws:// beside wss://) stay apart, as they would without this; that keeps the probes to the
// server the crawl visits anyway.
const hostName = hostOf;

/** The answer as one comparable key: null unless both the document and the probe said something. */
const keyOf = (a: RelayAnswer | undefined): string | null => (a && a.nip11 !== null && a.answer !== null ? `${a.nip11}/${a.answer}` : null);

/** The identities of one run: the answers gathered, and the relays crawled per host so far. */
export class RunIdentities {
  private readonly answers = new Map<string, RelayAnswer>();
  /** by host name: the canonical URLs crawled (or queued) in this run, in order */
  private readonly crawled = new Map<string, string[]>();
  /** URLs asked, URLs folded into another relay, URLs split off the relay they were recorded with */
  readonly counts = { asked: 0, folded: 0, split: 0 };

  constructor(private readonly d: IdentifyDeps) {}

  /** A hop's items: those crawled at once (nothing on their host to tell apart), and per host the URLs to identify first. */
  plan(items: WorkItem[]): { now: WorkItem[]; hosts: HostTask[] } {
    const byHost = new Map<string, WorkItem[]>();
    for (const it of items) {
      const h = hostName(it.url);
      const list = byHost.get(h);
      if (list) list.push(it); else byHost.set(h, [it]);
    }
    const now: WorkItem[] = [];
    const hosts: HostTask[] = [];
    for (const [host, list] of byHost) {
      const lone = list.length === 1 && !this.crawled.has(host) && this.d.directory.get(list[0]!.url)?.aliasOf === undefined;
      if (lone) {
        now.push(list[0]!);
        this.crawled.set(host, [list[0]!.url]);
      } else {
        hosts.push({ host, items: list, run: () => this.identify(host, list) });
      }
    }
    return { now, hosts };
  }

  /** Marks a host's items as crawled without identifying them (identifying failed: they are crawled as before). */
  crawlAsIs(host: string, items: WorkItem[]): void {
    const list = this.crawled.get(host) ?? [];
    for (const it of items) if (!list.includes(it.url)) list.push(it.url);
    this.crawled.set(host, list);
  }

  private async identify(host: string, named: WorkItem[]): Promise<HostResult> {
    const { directory, log } = this.d;
    const now = Date.now();
    const hop = named[0]!.hop;
    const crawledHere = this.crawled.get(host) ?? [];
    const urls = new Set(named.map((it) => it.url));
    for (const it of named) { const to = directory.get(it.url)?.aliasOf; if (to !== undefined) urls.add(to); }
    for (const c of crawledHere) urls.add(c);
    const recs = new Map([...urls].map((u) => [u, directory.get(u)]));
    // an alias shown recently goes with its relay unasked; everything else answers, if there is anything to compare
    const fresh = (r: RelayRecord | undefined) => r?.aliasOf !== undefined && urls.has(r.aliasOf) && now - (r.aliasCheckedAt ?? 0) < this.d.recheck;
    const toAsk = [...urls].filter((u) => !fresh(recs.get(u)));
    if (toAsk.length > 1) for (const u of toAsk) if (!this.answers.has(u) && !this.d.signal.aborted) await this.askOne(u);

    const members: Member[] = [...urls].map((url) => {
      const rec = recs.get(url);
      const a = this.answers.get(url);
      const at = crawledHere.indexOf(url);
      return {
        url, key: keyOf(a), silent: a !== undefined && !a.asked && a.nip11 === null, aliasOf: rec?.aliasOf,
        named: (rec?.aliases?.length ?? 0) > 0, crawled: at >= 0 ? at : undefined,
      };
    });
    const out: HostResult = { items: [], folded: 0, skipped: 0 };
    const groups = groupRelays(members);
    for (const g of groups) {
      let rec = recs.get(g.canonical);
      const split = rec?.aliasOf !== undefined;
      if (g.confirmed.length || g.kept.length || split) rec = await directory.recordRelay(g.canonical, g.confirmed, g.kept, now);
      if (split) this.counts.split++;
      const folded = [...g.confirmed, ...g.kept].filter((u) => named.some((it) => it.url === u)).length;
      out.folded += folded;
      this.counts.folded += folded;
      if (crawledHere.includes(g.canonical)) continue;
      // a relay named only through an alias is found at this hop too
      if (!named.some((it) => it.url === g.canonical) && rec) rec = await directory.discovered(g.canonical, hop, rec.referrers, rec.mentions);
      const item = rec ? this.d.itemFor(rec, hop) : named.find((it) => it.url === g.canonical) ?? null;
      if (!item) { out.skipped++; continue; }
      out.items.push(item);
      crawledHere.push(g.canonical);
    }
    this.crawled.set(host, crawledHere);
    log.info({ host, urls: urls.size, asked: toAsk.length > 1 ? toAsk.length : 0, relays: groups.length, groups: groups.filter((g) => g.confirmed.length + g.kept.length > 0).map((g) => ({ url: g.canonical, confirmed: g.confirmed.length, kept: g.kept.length })) }, 'spider: host identified');
    return out;
  }

  private async askOne(url: string): Promise<void> {
    const server = hostOf(url);
    await this.d.gate.acquire(server, this.d.signal);
    try {
      this.answers.set(url, await this.d.ask(url));
      this.counts.asked++;
    } finally {
      this.d.gate.release(server);
    }
  }
}
