// A relay that answers only REQs naming authors: it refuses {"kinds":[k]} (CLOSED, or a NOTICE,
// saying it needs authors or that the filter is too broad; paging.ts AuthorsRefusal). On the network
// such relays hold events no other relay has, and a spider that asks only by kind gets none of them.
// Their kinds are paged by batches of the authors the spider knows — the AuthorBook (authors.ts):
// authors of the events it fetched (relay lists among them), the people follow and mute lists name,
// the seeds — each batch as one window over the whole time range, newest to oldest like any other
// (paging.ts pageWindow: caps, bounds, stuck seconds and second 0 hold as they do by kind). What is
// learnt is kept (quirks.authorsRequired): the next run asks by author from its first REQ.
//
// Why the whole time range every run, not a cursor: the book grows from run to run, and a cursor
// by time would leave out the older events of authors learnt since. For replaceable kinds (most of
// the directory's) a batch is one page anyway: a batch holds no more authors than a page holds events.
//
// The sweep goes through the book in the order it learnt the authors, from where the last sweep
// was cut (quirks.authorsFrom) to the end — authors learnt meanwhile, from this relay's own follow
// lists among others, come after and are asked too — and then wraps round to where it began. The
// end it reached is reported (KindFetch.authorsAt): the spider asks the authors learnt after it in
// one more pass at the end of the run (late-authors.ts, item.lateAuthors: no wrap).
import { AuthorsCapRefusal, fetchKind, FetchError, newKindFetch, pageLimit, pageWindow, type FetchContext, type KindFetch } from './paging.js';
import type { KindCursor } from '../../directory/types.js';

/**
 * One kind of the relay: paged by kind as usual, or by authors where the relay requires them (known
 * from an earlier run, or learnt from this kind's refusal). `lateAuthors`: only the authors from that
 * position of the book on (the run's last pass). `since`: a live catch-up (WorkItem.since), which
 * asks every author for the events since then only (the next crawl asks authors learnt meanwhile
 * for their older ones).
 */
export async function fetchKindOrByAuthors(ctx: FetchContext, kind: number, cur: KindCursor | undefined, now: number, lateAuthors?: number, since?: number): Promise<KindFetch> {
  if (lateAuthors === undefined && !ctx.quirks.authorsRequired) {
    const k = await fetchKind(ctx, kind, cur, now);
    if (k.needsAuthors === undefined) return k;
    ctx.log.info({ url: ctx.client.target.url, kind, reason: k.needsAuthors }, 'spider: filter without authors refused; asking by author');
    const byAuthors = await sweep(ctx, kind, cur, now, undefined, since, k.needsAuthors);
    byAuthors.events += k.events;
    byAuthors.eose += k.eose;
    return byAuthors;
  }
  return sweep(ctx, kind, cur, now, lateAuthors, since);
}

/** Pages the kind by batches of the book's authors (see above); `refusal`: why paging by kind failed, for the error if this fails too. */
async function sweep(ctx: FetchContext, kind: number, cur: KindCursor | undefined, now: number, lateAuthors: number | undefined, since: number | undefined, refusal?: string): Promise<KindFetch> {
  const k = newKindFetch(kind, cur);
  const book = ctx.authors;
  const end = book.end;
  const resume = ctx.quirks.authorsFrom;
  // a position from another book (a scratch one, or one started afresh) may lie past this one's end
  const start = lateAuthors ?? (resume !== undefined && resume < end ? resume : 0);
  let pos = start;
  let asked = 0;
  // authors per REQ: no more than a page holds events (a replaceable kind keeps one per author),
  // nor than the relay takes in one filter (quirks.maxAuthors)
  const batch = () => Math.max(1, Math.min(ctx.opts.splitBatch, pageLimit(ctx), ctx.quirks.maxAuthors ?? Infinity));
  const ask = async (authors: string[]): Promise<void> => {
    try {
      await pageWindow(ctx, k, since, now, { lowest: Infinity }, authors);
    } catch (e) {
      // Too many authors in one filter for this relay: halve the batch, remember it, ask both halves.
      // (What the refused batch fetched before is asked again: copies, dropped before any signature check.)
      if (!(e instanceof AuthorsCapRefusal) || authors.length < 2) throw e;
      const half = Math.ceil(authors.length / 2);
      ctx.quirks.maxAuthors = Math.min(ctx.quirks.maxAuthors ?? Infinity, half);
      ctx.log.debug({ url: ctx.client.target.url, kind, maxAuthors: ctx.quirks.maxAuthors }, 'spider: too many authors in one filter, halving');
      await ask(authors.slice(0, half));
      await ask(authors.slice(half));
      return;
    }
    asked += authors.length;
    if (!ctx.quirks.authorsRequired) {
      ctx.quirks.authorsRequired = true;
      ctx.log.info({ url: ctx.client.target.url, kind }, 'spider: relay answers REQs naming authors; asking it by author from now on');
    }
  };
  try {
    // From `start` to the end of the book, however far it grows meanwhile ...
    for (;;) {
      const { authors, next } = await book.slice(pos, batch());
      if (authors.length === 0) break;
      await ask(authors);
      pos = next;
    }
    k.authorsAt = pos;
    // ... then from its beginning to `start` (the run's last pass asks only what came after).
    if (lateAuthors === undefined) {
      for (pos = 0; pos < start;) {
        const { authors, next } = await book.slice(pos, Math.min(batch(), start - pos));
        if (authors.length === 0) break;
        await ask(authors);
        pos = next;
      }
    }
    if (asked === 0 && lateAuthors === undefined) throw new FetchError('no author is known yet to ask for');
    k.complete = true;
    // every known author's events up to now; the cursor of the run's last pass stays the crawl's, and
    // a catch-up's is not kept (it changes no record)
    if (lateAuthors === undefined && since === undefined) k.cursor = { lo: 0, hi: now };
  } catch (e) {
    if (!(e instanceof FetchError)) throw e;
    k.error = refusal && !ctx.quirks.authorsRequired ? `${refusal}; by author: ${e.message}` : e.message;
    k.authorsCut = pos;
  }
  ctx.log.debug({ url: ctx.client.target.url, kind, from: start, asked, events: k.events, error: k.error }, 'spider: kind asked by author');
  return k;
}
