// Hop 0: the seeds (configured pubkeys plus the follows of admin pubkeys) and the relays their kind
// 10002 lists name. The local store is asked first; bootstrap relays are asked only for what is
// missing, and what they return goes through the ingest path like any fetched event.
import type { Logger } from 'pino';
import { parsePubkey } from '../../nostr/keys.js';
import type { EventStore } from '../../store/types.js';
import type { NostrEvent } from '../../nostr/event.js';
import type { EventVerifier } from '../../nostr/verify.js';
import { RelayClient } from '../../remote/client.js';
import { runPage } from '../fetch/page.js';
import type { EventSink } from '../../ingest/sink.js';
import { Admitter, type KnownCheck } from '../fetch/admit.js';
import { MAX_PENDING_EVENTS } from '../fetch/crawl.js';
import type { IngestStatus } from '../../ingest/types.js';
import { relaysInList, RELAY_LIST_KIND } from './relay-lists.js';
import { resolveTarget, type Target } from '../../remote/url.js';
import type { FetchCounts } from '../../directory/types.js';
import { isHex64 } from '../../nostr/hex.js';

export interface SeedDeps {
  store: EventStore;
  sink: EventSink;
  verifier: EventVerifier;
  log: Logger;
  bootstrapRelays: string[];
  allowPrivate: boolean;
  connectTimeout: number;
  idleTimeout: number;
  /** a page's deadline and bytes (remote/read.ts) */
  pageDeadline: number;
  maxPageBytes: number;
  maxEventBytes: number;
  counts: FetchCounts;
  known: KnownCheck;
  inFlight: Map<string, Promise<IngestStatus>>;
  signal?: AbortSignal;
  resolve?: (url: string, allowPrivate: boolean) => Promise<Target>;
  /** bootstrap relays that could not be asked, with the reason (the run's summary) */
  failures?: Array<{ url: string; error: string }>;
}

/** The newest stored event of `kind` per author, from the local store. */
async function localLatest(store: EventStore, kind: number, authors: string[]): Promise<Map<string, NostrEvent>> {
  const out = new Map<string, NostrEvent>();
  for (let i = 0; i < authors.length; i += 500) {
    const batch = authors.slice(i, i + 500);
    const rows = await store.query([{ kinds: [kind], authors: batch, limit: batch.length * 2 }], { defaultLimit: 500, maxLimit: batch.length * 2 });
    for (const json of rows) keepNewest(out, JSON.parse(json) as NostrEvent);
  }
  return out;
}

function keepNewest(m: Map<string, NostrEvent>, ev: NostrEvent): void {
  const prev = m.get(ev.pubkey);
  if (!prev || ev.created_at > prev.created_at || (ev.created_at === prev.created_at && ev.id < prev.id)) m.set(ev.pubkey, ev);
}

/** Asks the bootstrap relays for the newest `kind` event of authors the store lacks; hands them on. */
async function fromBootstrap(d: SeedDeps, kind: number, authors: string[], found: Map<string, NostrEvent>): Promise<void> {
  for (const url of d.bootstrapRelays) {
    const missing = authors.filter((a) => !found.has(a));
    if (missing.length === 0 || d.signal?.aborted) return;
    let client: RelayClient | undefined;
    try {
      const target = await (d.resolve ?? resolveTarget)(url, d.allowPrivate);
      client = await RelayClient.connect(target, { connectTimeout: d.connectTimeout, maxFrame: d.maxEventBytes + 1024, maxPayload: Math.max(1 << 20, d.maxEventBytes * 4) }, d.signal);
      // The same checks and hand-on as a crawl's pages (fetch/admit.ts).
      const admitter = new Admitter({ verifier: d.verifier, sink: d.sink, known: d.known, inFlight: d.inFlight, counts: d.counts, maxPending: MAX_PENDING_EVENTS });
      for (let i = 0; i < missing.length; i += 200) {
        const batch = missing.slice(i, i + 200);
        // one event per author of a replaceable kind; room for relays that keep old versions too
        const page = await runPage(client, {
          filter: { kinds: [kind], authors: batch, limit: batch.length * 2 },
          exclusive: false, idleTimeout: d.idleTimeout, deadline: d.pageDeadline, maxBytes: d.maxPageBytes, maxEventBytes: d.maxEventBytes, signal: d.signal,
          admit: async (evs) => {
            const ok = await admitter.admit(evs);
            for (const ev of ok) keepNewest(found, ev);
            return ok;
          },
          keep: false,
        });
        const bad = Object.values(page.invalid).reduce((a, b) => a + b, 0);
        d.counts.invalid += bad;
        if (page.closed || page.hostile) break;
      }
      await admitter.drain();
      d.log.info({ url, kind, asked: missing.length, found: missing.filter((a) => found.has(a)).length }, 'spider: bootstrap relay asked');
    } catch (e) {
      d.log.warn({ url, err: (e as Error).message }, 'spider: bootstrap relay failed');
      if (d.failures && d.failures.length < 50) d.failures.push({ url, error: (e as Error).message });
    } finally {
      if (client) d.counts.bytes += client.bytesIn;
      client?.close();
    }
  }
}

export interface Seeds {
  pubkeys: string[];
  /** relay URL -> seeds whose lists name it */
  relays: Map<string, number>;
  /** seeds with no relay list found anywhere */
  withoutList: number;
}

export async function resolveSeeds(d: SeedDeps, seeds: string[], admins: string[], maxTags: number): Promise<Seeds> {
  const bad = [...seeds, ...admins].filter((s) => parsePubkey(s) === null);
  if (bad.length) d.log.warn({ bad }, 'spider: ignoring seed/admin entries that are neither hex pubkeys nor npubs');
  const set = new Set(seeds.map(parsePubkey).filter((x): x is string => x !== null));
  const adminKeys = [...new Set(admins.map(parsePubkey).filter((x): x is string => x !== null))];
  if (adminKeys.length) {
    const follows = await localLatest(d.store, 3, adminKeys);
    await fromBootstrap(d, 3, adminKeys, follows);
    for (const a of adminKeys) set.add(a);
    for (const ev of follows.values()) for (const t of ev.tags) if (t[0] === 'p' && isHex64(t[1] ?? '')) set.add(t[1]);
  }
  const pubkeys = [...set];
  const lists = await localLatest(d.store, RELAY_LIST_KIND, pubkeys);
  await fromBootstrap(d, RELAY_LIST_KIND, pubkeys, lists);
  const relays = new Map<string, number>();
  for (const ev of lists.values()) for (const u of relaysInList(ev, maxTags) ?? []) relays.set(u, (relays.get(u) ?? 0) + 1);
  return { pubkeys, relays, withoutList: pubkeys.length - lists.size };
}
