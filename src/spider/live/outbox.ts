// Outbox refresh (NIP-65 outbox model): pubkeys whose relay list we hold is old, or names write
// relays the spider has never fetched, get their directory events fetched from their own write
// relays — where they publish — in small batched REQs (`authors` chunks), politely (one relay at a
// time per worker, spider.pause between two REQs, at most spider.concurrency relays at once).
// Every event goes through the spider's page checks and admission (page.ts, admit.ts) to the one
// ingest path; nothing here decides what is true.
//
// Memory per round: the pubkeys chosen (outboxPubkeys) grouped by relay, and a bounded set of
// pubkeys refreshed recently so the next rounds move on to others.
import type { Logger } from 'pino';
import type { EventStore } from '../../store/types.js';
import type { EventSink } from '../../ingest/sink.js';
import type { RelayDirectory } from '../../directory/records.js';
import type { EventVerifier } from '../../nostr/verify.js';
import { RelayClient } from '../../remote/client.js';
import { resolveTarget, type Target } from '../../remote/url.js';
import { runPage } from '../fetch/page.js';
import { Admitter, storeKnown } from '../fetch/admit.js';
import { MAX_PENDING_EVENTS } from '../fetch/crawl.js';
import { zeroCounts, type FetchCounts } from '../../directory/types.js';
import type { IngestStatus } from '../../ingest/types.js';
import { writeRelays } from './select.js';
import { sleep } from '../../lib/sleep.js';

export interface OutboxOptions {
  kinds: number[];
  /** ms: a relay list older than this marks its author stale */
  stale: number;
  maxPubkeys: number;
  batch: number;
  relaysPerPubkey: number;
  maxTags: number;
  concurrency: number;
  /** ms between two REQs to one relay */
  pause: number;
  connectTimeout: number;
  idleTimeout: number;
  /** a page's deadline and bytes (remote/read.ts) */
  pageDeadline: number;
  maxPageBytes: number;
  maxEventBytes: number;
  allowPrivate: boolean;
}

export interface OutboxDeps {
  store: EventStore;
  sink: EventSink;
  directory: RelayDirectory;
  verifier: () => Promise<EventVerifier>;
  log: Logger;
  /** relays never asked (ours, unsafe, failing) */
  excluded: (url: string) => boolean;
  resolve?: (url: string, allowPrivate: boolean) => Promise<Target>;
}

/** Pubkeys refreshed recently, remembered up to this many (then the expired ones, or all, forgotten). */
const RECENT_MAX = 100_000;

export interface OutboxRound { pubkeys: number; relays: number; counts: FetchCounts }

export class OutboxRefresh {
  /** pubkey -> when it was last refreshed (ms); skipped for `stale` after that */
  private readonly recent = new Map<string, number>();
  private readonly inFlight = new Map<string, Promise<IngestStatus>>();

  constructor(private readonly d: OutboxDeps, private readonly o: OutboxOptions) {}

  /** Relay URL -> pubkeys to ask there, for at most maxPubkeys stale or uncrawled pubkeys. */
  async plan(signal: AbortSignal): Promise<Map<string, string[]>> {
    const o = this.o;
    const staleBefore = Math.floor((Date.now() - o.stale) / 1000);
    const byRelay = new Map<string, string[]>();
    let taken = 0;
    const now = Date.now();
    if (this.recent.size >= RECENT_MAX) {
      for (const [p, at] of this.recent) if (now - at >= o.stale) this.recent.delete(p);
      if (this.recent.size >= RECENT_MAX / 2) this.recent.clear();
    }
    const recentlyDone = (p: string) => { const at = this.recent.get(p); return at !== undefined && now - at < o.stale; };
    for await (const json of this.d.store.iterate({ kinds: [10002] }, { signal })) {
      if (taken >= o.maxPubkeys || signal.aborted) break;
      let ev: { pubkey?: unknown; tags?: unknown; created_at?: unknown };
      try { ev = JSON.parse(json) as typeof ev; } catch { continue; }
      if (typeof ev.pubkey !== 'string' || typeof ev.created_at !== 'number' || recentlyDone(ev.pubkey)) continue;
      // an alias is asked as the relay it reaches: one relay is not asked twice for one pubkey
      const relays = [...new Set((writeRelays(ev.tags, o.maxTags) ?? []).map((u) => this.d.directory.relayOf(u)))].filter((u) => !this.d.excluded(u));
      if (relays.length === 0) continue;
      const uncrawled = relays.some((u) => this.d.directory.get(u)?.lastSuccess === undefined);
      if (ev.created_at >= staleBefore && !uncrawled) continue;
      // uncrawled relays first: there the pubkey's news has never been looked for
      relays.sort((a, b) => Number(this.d.directory.get(a)?.lastSuccess !== undefined) - Number(this.d.directory.get(b)?.lastSuccess !== undefined));
      for (const u of relays.slice(0, o.relaysPerPubkey)) {
        const list = byRelay.get(u);
        if (list) list.push(ev.pubkey); else byRelay.set(u, [ev.pubkey]);
      }
      this.recent.set(ev.pubkey, now);
      taken++;
    }
    return byRelay;
  }

  async round(signal: AbortSignal): Promise<OutboxRound> {
    const plan = await this.plan(signal);
    const counts = zeroCounts();
    const pubkeys = new Set<string>();
    for (const ps of plan.values()) for (const p of ps) pubkeys.add(p);
    const relays = [...plan.keys()];
    let next = 0;
    await Promise.all(Array.from({ length: Math.min(this.o.concurrency, relays.length) }, async () => {
      while (next < relays.length && !signal.aborted) {
        const url = relays[next++]!;
        await this.ask(url, plan.get(url)!, counts, signal);
      }
    }));
    this.d.log.info({ pubkeys: pubkeys.size, relays: relays.length, fetched: counts.fetched, stored: counts.stored, invalid: counts.invalid }, 'live: outbox refresh done');
    return { pubkeys: pubkeys.size, relays: relays.length, counts };
  }

  /** One relay: the authors in chunks, each REQ through the page checks and admission. */
  private async ask(url: string, authors: string[], counts: FetchCounts, signal: AbortSignal): Promise<void> {
    const o = this.o;
    let client: RelayClient | undefined;
    try {
      const target = await (this.d.resolve ?? resolveTarget)(url, o.allowPrivate);
      client = await RelayClient.connect(target, { connectTimeout: o.connectTimeout, maxFrame: o.maxEventBytes + 1024, maxPayload: Math.max(1 << 20, o.maxEventBytes * 4) }, signal);
      const admitter = new Admitter({ verifier: await this.d.verifier(), sink: this.d.sink, known: storeKnown(this.d.store), inFlight: this.inFlight, counts, maxPending: MAX_PENDING_EVENTS });
      for (let i = 0; i < authors.length && !signal.aborted; i += o.batch) {
        if (i > 0) await sleep(o.pause, signal);
        const batch = authors.slice(i, i + o.batch);
        // replaceable kinds: at most one event per (author, kind); a few more for relays that keep old versions
        const page = await runPage(client, {
          filter: { kinds: o.kinds, authors: batch, limit: batch.length * o.kinds.length * 2 },
          exclusive: false, idleTimeout: o.idleTimeout, deadline: o.pageDeadline, maxBytes: o.maxPageBytes, maxEventBytes: o.maxEventBytes, signal,
          admit: (evs) => admitter.admit(evs), keep: false,
        });
        counts.invalid += Object.values(page.invalid).reduce((a, b) => a + b, 0);
        if (page.closed !== undefined || page.flooded || page.hostile) break;
      }
      await admitter.drain();
    } catch (e) {
      this.d.log.debug({ url, err: (e as Error).message }, 'live: outbox relay failed');
    } finally {
      if (client) counts.bytes += client.bytesIn;
      client?.close();
    }
  }
}
