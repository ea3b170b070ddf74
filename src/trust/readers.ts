// Personalized ranks for search (docs/search.md, "Ranked for one reader"): the reader-rank.ts of
// a pubkey, computed on the graph the last pass kept (trust.keepGraph), within trust.readerWalks
// and trust.readerBudget, one at a time (they share their scratch arrays), kept for the
// trust.readerCache most recent readers until the next pass. null whenever it cannot be had — no
// kept graph yet, the reader in no list or following no one — and search then orders by the
// global (or rooted) rank, as without observer:.
import { setImmediate as tick } from 'node:timers/promises';
import { createHash } from 'node:crypto';
import type { ReaderTrust } from '../nostr/search-query.js';
import type { RankStore } from '../store/ranks.js';
import type { KeptGraph } from './kept-graph.js';
import { listIndex, ReaderScratch, readerRank } from './reader-rank.js';

/**
 * The reader's most trusted pubkeys listed best first: search reads their profiles as candidates,
 * so the namesake a reader's network follows is found even where the index's window and the
 * global list of the most trusted do not reach it (about 1 ms of reads per search at 256).
 */
const READ_BY_TRUST = 256;

export interface ReaderOptions {
  damping: number;
  readerWalks: number;
  readerBudget: number;
  readerCache: number;
  readerKeep: number;
}

export interface ReaderStats {
  computed: number;
  cached: number;
  fellBack: number;
  /** the last computation: walks taken and how long it took */
  lastWalks?: number;
  lastMs?: number;
}

/** The graph of one pass, as personalized ranks read it. */
interface PassGraph {
  generation: number;
  kept: KeptGraph;
  at: Int32Array;
  nodes: number;
}

export class ReaderRanks {
  private graph: PassGraph | undefined;
  /** reader pubkey -> its rank for the current generation (Map order: least recently used first) */
  private readonly cache = new Map<string, ReaderTrust>();
  private readonly inflight = new Map<string, Promise<ReaderTrust | null>>();
  private queue: Promise<unknown> = Promise.resolve();
  private scratch = new ReaderScratch(0);
  readonly stats: ReaderStats = { computed: 0, cached: 0, fellBack: 0 };

  constructor(
    private readonly ranks: RankStore,
    private readonly o: ReaderOptions,
  ) {}

  /** A pass finished: its kept graph is what the next readers' ranks walk (the cache is for the older one). */
  passed(generation: number, kept: KeptGraph | undefined, nodes: number): void {
    this.cache.clear();
    this.graph = kept ? { generation, kept, at: listIndex(kept.follows), nodes } : undefined;
  }

  /** The reader's trust, computed or cached; null: order by the global rank. */
  get(reader: string): Promise<ReaderTrust | null> {
    const have = this.cache.get(reader);
    if (have) {
      this.cache.delete(reader);
      this.cache.set(reader, have);
      this.stats.cached++;
      return Promise.resolve(have);
    }
    const running = this.inflight.get(reader);
    if (running) return running;
    const p = (this.queue = this.queue.then(() => this.compute(reader), () => this.compute(reader)));
    const out = p.then((r) => r, () => null).finally(() => this.inflight.delete(reader));
    this.inflight.set(reader, out);
    return out;
  }

  private async compute(reader: string): Promise<ReaderTrust | null> {
    const g = this.graph;
    const id = g ? this.ranks.idOfPubkey(reader) : undefined;
    if (!g || id === undefined) {
      this.stats.fellBack++;
      return null;
    }
    const t0 = performance.now();
    this.scratch.fit(this.ranks.pubkeyIdLimit());
    // the same walks for the same reader and pass: an answer does not change between two searches
    const seed = createHash('sha256').update(`${reader}|${g.generation}`).digest().readUInt32BE(0);
    const r = await readerRank(g.kept.follows, g.at, id, { damping: this.o.damping, walks: this.o.readerWalks, deadline: t0 + this.o.readerBudget, keep: this.o.readerKeep, top: READ_BY_TRUST, nodes: g.nodes, seed }, this.scratch, () => tick());
    this.stats.lastMs = performance.now() - t0;
    if (!r) {
      this.stats.fellBack++;
      return null;
    }
    this.stats.computed++;
    this.stats.lastWalks = r.walks;
    const out: ReaderTrust = { ids: r.ids, trust: r.trust, top: r.top };
    if (this.graph === g && this.o.readerCache > 0) {
      this.cache.set(reader, out);
      while (this.cache.size > this.o.readerCache) this.cache.delete(this.cache.keys().next().value!);
    }
    return out;
  }
}
