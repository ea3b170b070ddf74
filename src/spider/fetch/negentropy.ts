// NIP-77 instead of paging, for one kind of one relay: the remote's set of the kind is reconciled
// against the home's (the store's negentropyItems) with the sync client (src/remote/reconcile.ts), and
// exactly the ids the home lacks are fetched, in batches of a page, through the spider's own page
// checks and admission (page.ts and admit.ts: shape, size, the filter asked, home lookup, one
// signature check). Nothing is trusted that paging would not trust: the remote only chooses which ids
// we ask for. Whatever goes wrong — NEG-ERR, a NOTICE instead of an answer, silence past idleTimeout,
// garbage, a set too big even for one second — ends the attempt with null, and the caller pages the
// kind as before (ids fetched meanwhile are then duplicates, dropped before any signature check).
//
// Memory: the home's records for one session are capped (HOME_MAX_RECORDS; a bigger set is split
// by time, as `orbweaver sync` does); ids are not remembered across rounds (a repeat is a duplicate at
// admission); at most MAX_QUEUED ids wait for their fetch before the next round is sent.
import { emptyStats, reconcileFilter, Seen, SyncError } from '../../remote/reconcile.js';
import type { Filter } from '../../nostr/filter.js';
import type { NegentropyItems } from '../../store/negentropy.js';
import { FetchError, newKindFetch, pageLimit, request, type FetchContext, type KindFetch } from './paging.js';
import type { Nip11Info } from '../../remote/nip11.js';
import type { Quirks } from '../../directory/types.js';

/** The home's set, read from the store the home writes into. */
export interface HomeItems {
  /** (created_at, id) records of a filter: store.negentropyItems */
  items(f: Filter, opts: { maxItems: number; signal: AbortSignal }): Promise<NegentropyItems>;
  /** the home holds this id by now, or another fetch is handing it on (checked just before each fetch by id) */
  holds(id: string): boolean;
}

export type NegentropyMode = 'listed' | 'probe' | 'off';

/** Records of the home's set per session (36 bytes each): a bigger set is reconciled in time slices. */
export const HOME_MAX_RECORDS = 200_000;
/** Largest message we send, bytes before hex: keeps NEG-MSG under the common 128 KiB frame limit (strfry's). */
const FRAME_SIZE_LIMIT = 60_000;
/** ids learnt and not fetched yet before the reconciliation waits */
const MAX_QUEUED = 5_000;
/** REQs by id in flight at once (each holds a page slot) */
const FETCHES = 2;

/**
 * Whether to try NIP-77 on this relay. A relay whose NIP-11 lists 77 is tried every run (a failure
 * costs one idleTimeout, then paging); one that answered NEG-OPEN before is tried again; with
 * 'probe' an unknown relay is tried once — what it did is remembered in quirks.negentropy.
 */
export function triesNegentropy(mode: NegentropyMode, nip11: Nip11Info | null, quirks: Quirks): boolean {
  if (mode === 'off') return false;
  if (nip11?.supported_nips?.includes(77) || quirks.negentropy === true) return true;
  return mode === 'probe' && quirks.negentropy === undefined;
}

/** Reports every id: a repeat (the protocol may report one twice) is a duplicate at admission, and nothing grows per id. */
class Unremembered extends Seen {
  override fresh(ids: string[]): string[] {
    return ids;
  }
}

/**
 * Reconciles one kind with the relay and fetches what the home lacks. Returns the finished
 * KindFetch (complete, cursor [0, now]), or null when the relay did not do NIP-77 for it (the kind
 * is then paged). `failed` is shared by the kinds of one relay: after one failure the others page.
 */
export async function syncKind(ctx: FetchContext, kind: number, now: number, failed: { reason?: string }, since?: number): Promise<KindFetch | null> {
  const home = ctx.home;
  if (!home || failed.reason !== undefined) return null;
  const k = newKindFetch(kind, undefined);
  const stats = emptyStats();
  const url = ctx.client.target.url;
  const queue: string[] = [];
  let homeCount = 0;
  let active = 0;
  let fetchError: unknown = null;
  let wake: (() => void) | null = null;
  const notify = () => { const w = wake; wake = null; w?.(); };
  const batch = pageLimit(ctx);
  const pump = () => {
    while (queue.length > 0 && active < FETCHES && fetchError === null) {
      // Ids learnt earlier may have reached the home since (from another relay fetched at once).
      const ids = queue.splice(0, batch).filter((id) => !home.holds(id));
      if (ids.length === 0) continue;
      active++;
      fetchIds(ctx, k, ids).catch((e: unknown) => { fetchError ??= e; }).finally(() => { active--; pump(); notify(); });
    }
  };
  const settle = async (until: () => boolean) => {
    while (!until() && fetchError === null) await new Promise<void>((r) => { wake = r; });
    if (fetchError !== null) throw fetchError;
  };
  try {
    await reconcileFilter(ctx.client, since === undefined ? { kinds: [kind] } : { kinds: [kind], since }, {
      frameSizeLimit: FRAME_SIZE_LIMIT,
      timeout: ctx.opts.idleTimeout,
      localItems: async (part) => {
        const items = await home.items(part, { maxItems: HOME_MAX_RECORDS, signal: ctx.signal });
        homeCount += items.count;
        return items;
      },
      now,
      signal: ctx.signal,
      onNeed: async (ids) => {
        queue.push(...ids);
        pump();
        if (queue.length > MAX_QUEUED) await settle(() => queue.length <= MAX_QUEUED / 2);
      },
    }, stats, new Unremembered());
    await settle(() => queue.length === 0 && active === 0);
  } catch (e) {
    if (!(e instanceof SyncError || e instanceof FetchError)) throw e;
    // let the fetches in flight end (they hold page slots) before the kind is paged
    while (active > 0) await new Promise<void>((r) => { wake = r; });
    ctx.counts.nip77Fallbacks++;
    ctx.counts.nip77Bytes += stats.bytesUp + stats.bytesDown;
    failed.reason = e.message;
    // a relay that answered NIP-77 before keeps its mark when this run only timed out or was cut off
    if (!(ctx.quirks.negentropy === true && e instanceof SyncError && (e.kind === 'timeout' || e.kind === 'closed'))) ctx.quirks.negentropy = false;
    ctx.log.info({ url, kind, error: e.message, need: stats.need, rounds: stats.rounds }, 'spider: NIP-77 failed; paging the kind instead');
    return null;
  }
  ctx.quirks.negentropy = true;
  ctx.counts.nip77Kinds++;
  ctx.counts.nip77Ids += stats.need;
  ctx.counts.nip77Bytes += stats.bytesUp + stats.bytesDown;
  k.synced = true;
  k.complete = true;
  // what the relay holds of the kind (the monitor's events per kind): the home's set, less what
  // only the home has, plus what only the relay has
  k.events = Math.max(0, homeCount - stats.have + stats.need);
  k.cursor = { lo: since ?? 0, hi: now };
  ctx.log.debug({ url, kind, need: stats.need, have: stats.have, rounds: stats.rounds, sessions: stats.sessions, bytes: stats.bytesUp + stats.bytesDown }, 'spider: kind reconciled with NIP-77');
  return k;
}

/**
 * REQs by ids through the page path (each window admitted as it comes); ids the relay does not send
 * (deleted since) are left. A page cut by its bytes or deadline asks again for the ids it did not
 * bring, as long as each page brings some.
 */
async function fetchIds(ctx: FetchContext, k: KindFetch, ids: string[]): Promise<void> {
  for (let want = ids; want.length > 0;) {
    if (ctx.counts.fetched >= ctx.opts.maxEventsPerRelay) throw new FetchError(`event cap (${ctx.opts.maxEventsPerRelay}) reached`);
    const page = await request(ctx, { kinds: [k.kind], ids: want, limit: want.length }, k);
    page.release();
    // silence is not "deleted since": the kind is paged instead of being called complete
    if (page.timedOut && !page.eose) throw new FetchError(`no answer to a REQ by ids within ${ctx.opts.idleTimeout} ms`);
    if (!page.cut) return;
    if (page.events.length === 0) throw new FetchError(`a REQ by ids was cut (${page.cut}) before it brought anything`);
    const got = new Set(page.events.map((e) => e.id));
    want = want.filter((id) => !got.has(id));
  }
}
