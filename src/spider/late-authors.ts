// The run's last pass over relays that answer only REQs naming authors. Such a relay is asked for
// the authors the spider knows when it crawls it (fetch/by-authors.ts), but the run goes on learning
// authors: from relays crawled after it in the same hop, and from later hops. Without this pass the
// events those authors keep only there would wait for the next run — or, with a book that starts
// empty every run (`orbweaver spider` beside the relay, workers), for ever. So results that asked by
// author are held here instead of being recorded at once; after the last hop, each relay whose
// sweep did not reach the book's end is asked once more, for the authors after it only, and its
// directory record is written once, with both. Redis workers keep books of their own, whose
// positions mean nothing to the coordinator: their results are recorded at once, without this pass.
import { addCounts, type HopSummary, type WorkItem, type WorkResult } from '../directory/types.js';

export class LateAuthors {
  private readonly held = new Map<string, { hop: HopSummary; result: WorkResult }>();

  /** Holds a result whose crawl asked by author (recorded by take()); false for any other. */
  hold(hop: HopSummary, r: WorkResult): boolean {
    if (r.authorsAt === undefined) return false;
    this.held.set(r.url, { hop, result: r });
    return true;
  }

  /** The relay lists' links of a held result (the next hop is found from them before it is recorded). */
  links(url: string): Record<string, number> | undefined {
    return this.held.get(url)?.result.links;
  }

  /** The last pass: one item per held relay whose sweep ended before `end`, the book's end now. */
  items(end: number, kinds: number[], allowPrivate: boolean): WorkItem[] {
    const out: WorkItem[] = [];
    for (const { result: r } of this.held.values()) {
      if (r.authorsAt! >= end) continue;
      out.push({
        url: r.url, hop: r.hop, kinds, discover: false, quirks: r.quirks, cursors: r.cursors, nip11: r.nip11, allowPrivate,
        lateAuthors: r.authorsAt,
      });
    }
    return out;
  }

  /** Folds a last-pass result into its relay's; returns the hop whose figures it adds to. */
  fold(late: WorkResult): HopSummary | undefined {
    const h = this.held.get(late.url);
    if (!h) return undefined;
    h.result = merge(h.result, late);
    return h.hop;
  }

  /** The held results (with their last pass), to be recorded; the holder is empty after. */
  take(): WorkResult[] {
    const out = [...this.held.values()].map((h) => h.result);
    this.held.clear();
    return out;
  }
}

/** One crawl of a relay and its last pass, as one result: counts added, the last pass's quirks (per-run figures added). */
function merge(first: WorkResult, late: WorkResult): WorkResult {
  const counts = { ...first.counts };
  addCounts(counts, late.counts);
  const kinds: Record<string, number> = { ...first.kinds };
  for (const [k, n] of Object.entries(late.kinds ?? {})) kinds[k] = (kinds[k] ?? 0) + n;
  // the last pass started from the crawl's quirks, less the figures each crawl counts afresh
  const quirks = { ...late.quirks };
  for (const f of ['rateLimited', 'invalid', 'outsideWindow'] as const) {
    const n = (first.quirks[f] ?? 0) + (late.quirks[f] ?? 0);
    if (n) quirks[f] = n;
  }
  if (first.quirks.flooded) quirks.flooded = true;
  const error = [first.error, late.error && `last pass for late authors: ${late.error}`].filter(Boolean).join('; ').slice(0, 500);
  return {
    ...first,
    outcome: first.outcome === 'ok' && late.outcome !== 'ok' ? 'partial' : first.outcome,
    ...(error ? { error } : {}),
    nip11: late.nip11 ?? first.nip11,
    quirks, cursors: late.cursors, counts, kinds,
    durationMs: first.durationMs + late.durationMs,
    authorsAt: late.authorsAt ?? first.authorsAt,
  };
}
