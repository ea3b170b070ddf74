// Catch-up of a live remote after a disconnect: the spider's own fetch of one relay (crawlRelay:
// NIP-77 where the remote offers it, else paging from a cursor), limited to the directory kinds
// created since the last event seen there. No second copy of the fetch code: this only builds the
// work item — cursors at `from` so paging starts there (less the spider's lookback), `since` so
// NIP-77 reconciles only that range — and never changes the directory's records (a catch-up is not
// a crawl). At most `concurrency` catch-ups run at once, each within its own budget.
import type { Logger } from 'pino';
import { crawlRelay, sharedState, type CrawlOptions } from '../fetch/crawl.js';
import { Slots } from '../fetch/slots.js';
import { storeKnown } from '../fetch/admit.js';
import { AuthorBook } from '../fetch/authors.js';
import type { HomeItems } from '../fetch/negentropy.js';
import type { EventSink } from '../../ingest/sink.js';
import type { EventStore } from '../../store/types.js';
import type { RelayDirectory } from '../../directory/records.js';
import type { EventVerifier } from '../../nostr/verify.js';
import type { Target } from '../../remote/url.js';
import type { CatchUp } from './remote.js';

export interface CatchUpDeps {
  store: EventStore;
  sink: EventSink;
  directory: RelayDirectory;
  verifier: () => Promise<EventVerifier>;
  opts: CrawlOptions;
  kinds: number[];
  concurrency: number;
  log: Logger;
  resolve?: (url: string, allowPrivate: boolean) => Promise<Target>;
}

export function catchUpper(d: CatchUpDeps): CatchUp {
  const shared = sharedState(new AuthorBook(d.store.env), d.concurrency);
  const slots = new Slots(d.concurrency);
  const home: HomeItems | undefined = d.sink.kind === 'ingest'
    ? { items: (f, o) => d.store.negentropyItems(f, o), holds: (id) => d.store.has(id) }
    : undefined;
  return async (url, from, signal) => {
    const release = await slots.take(signal);
    if (!release) return 0;
    try {
      const rec = d.directory.get(url);
      const cursors = Object.fromEntries(d.kinds.map((k) => [String(k), { lo: 0, hi: from }]));
      const r = await crawlRelay({
        url, hop: rec?.hop ?? 0, kinds: d.kinds, discover: false, quirks: rec?.quirks ?? {}, cursors, nip11: rec?.nip11 ?? null,
        since: Math.max(0, from - d.opts.lookback),
      }, {
        verifier: await d.verifier(), sink: d.sink, known: storeKnown(d.store), log: d.log, opts: d.opts, shared, signal, resolve: d.resolve, home,
      });
      if (r.outcome !== 'ok') throw new Error(r.error ?? r.outcome);
      d.log.debug({ url, from, stored: r.counts.stored, fetched: r.counts.fetched, nip77: r.counts.nip77Kinds > 0 }, 'live: caught up');
      return r.counts.stored;
    } finally {
      release();
    }
  };
}
