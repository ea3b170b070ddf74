// The contract between the event store and the rest of the relay.
import type { RootDatabase } from 'lmdb';
import type { RankStore } from './ranks.js';
import type { NostrEvent } from '../nostr/event.js';
import type { Filter } from '../nostr/filter.js';
import type { Precheck, PrecheckEvent } from './precheck.js';
import type { EventFrames, Framing } from '../nostr/frames.js';
import type { NegentropyItemOptions, NegentropyItems } from './negentropy.js';

/**
 * What the store decided for one event, inside its write transaction.
 * - stored: new and committed; the caller broadcasts it.
 * - duplicate: an event with this id is already stored (OK true, "duplicate: ...").
 * - replaced: a replaceable/addressable event older than (or tie-losing to) the stored version: not stored.
 * - deleted: blocked by a NIP-09 tombstone (id deleted by its author, or address deleted at/after created_at).
 * - invalid: the store refuses it (e.g. already expired).
 */
export type WriteStatus = 'stored' | 'duplicate' | 'replaced' | 'deleted' | 'invalid';

export interface WriteResult {
  status: WriteStatus;
  /** OK flag to send: true for stored and duplicate. */
  ok: boolean;
  /** '' for stored, else the NIP-01 prefixed message for OK. */
  message: string;
  /** ids removed by this write (older replaceable version, events deleted by a kind 5). */
  removed?: string[];
  /** the stored event's serial: serials grow with every commit (see QueryOptions.seen) */
  serial?: number;
}

/**
 * What a query saw, so a live subscription can tell which new events its scan already covered.
 * `upTo`: every event with a serial at or below it was committed and visible when the scan began
 * (serials are allocated in commit order). `newer`: ids in the results with a larger serial
 * (committed while the scan ran). A live event is covered iff serial <= upTo or its id is in newer.
 */
export interface SeenSerials {
  upTo: number;
  newer: Set<string>;
}

/**
 * A scan's stop flag, polled once per step of queryYieldEvery index entries. `charge`, when
 * present, is told the work a scan does outside its steps — planning and opening one cursor per
 * index range (planner.ts planCost) — in index entries, so a read budget counts it too.
 */
export interface ScanSignal {
  readonly aborted: boolean;
  charge?(entries: number): void;
  /** index entries the scan may still read, when the signal keeps a budget (large index-only COUNTs are extrapolated past it) */
  readonly budgetLeft?: number;
}

export interface QueryOptions {
  /** applied to filters without a limit */
  defaultLimit: number;
  /** larger limits are clamped to this */
  maxLimit: number;
  /** set to true to stop a running scan (connection closed, CLOSE received) */
  signal?: ScanSignal;
  /** unix seconds; events whose NIP-40 expiration is at or before it are not returned (default: now) */
  now?: number;
  /** filled in by query(): what the scan covered (for live subscriptions) */
  seen?: SeenSerials;
  /**
   * queryFrames: the caller sends the frames itself and may be lent a kept answer's (EventFrames.lent,
   * frames.ts lentFrame); it must release them (releaseFrames, QueryRunner.release) when sent.
   */
  lend?: boolean;
  /**
   * Bytes of frames a REQ answer reads before it stops (after the match that reaches it): the
   * frames then carry `cut`, the continuation (EventFrames.cut). A kept answer larger than this is
   * not given. Absent: the whole answer. A NIP-50 search is never cut.
   */
  maxBytes?: number;
  /**
   * NIP-67 `more`: a scan that reaches its limit reads a few entries on for one more match, so that
   * EventFrames.limited can say the limit left matches out. Only where `more` is sent (nip67 on): it
   * is a read past the answer.
   */
  peekMore?: boolean;
}

/** A COUNT's answer. */
export interface CountResult {
  count: number;
  /** an estimate: an index-only count larger than the read budget, extrapolated (query.ts) */
  approximate?: boolean;
  /** NIP-45 HyperLogLog registers (256), for the counts the store keeps them for (counters.ts) */
  hll?: Uint8Array;
  /** stale registers recomputed for this answer: hand them to EventStore.refreshHll to store them */
  refresh?: HllRefresh[];
}

export interface HllRefresh {
  key: Uint8Array;
  version: number;
  registers: Uint8Array;
}

import type { DiskState } from '../lib/disk-guard.js';

export interface StoreStats {
  events: number;
  /** bytes used by the LMDB data file */
  bytes: number;
  /** entries per index, by index name */
  indexes: Record<string, number>;
}

export interface EventStore {
  /** The LMDB root, so other modules (spider directory, policy lists) open their own named dbs in the same env. */
  readonly env: RootDatabase;
  /** Trust ranks (ranks.ts): the follow and mute lists they are computed from, and the results. */
  readonly ranks: RankStore;
  /** REQ answers this handle gave from the answers it keeps (answer-cache.ts) since it opened. */
  answersKept(): number;
  /**
   * Queue an already verified, non-ephemeral event for the batched writer. `json` is the event's
   * canonical JSON text (kept as stored so it is sent without re-serializing). Resolves once the
   * batch holding it has committed durably, with the decision taken inside that transaction.
   * `ev` null: the writer parses `json` itself (see writesFromJson). `members`: the event is a list
   * of a graph kind whose every tag is a graph tag, and these are its members as
   * store/graph-json.ts graphOnlyMembers read them from `json` (a signature-check thread did); the
   * writer then parses the event without its tags.
   */
  write(ev: NostrEvent | null, json: string, members?: string): Promise<WriteResult>;
  /**
   * write() answered through a callback, exactly once: `done(err)` where the promise would reject,
   * `done(null, result)` where it would resolve. The relay's EVENT path waits this way (no promise
   * per event in flight).
   */
  writeThen(ev: NostrEvent | null, json: string, done: (err: Error | null, result?: WriteResult) => void, members?: string): void;
  /**
   * The writer parses each event's JSON itself (it runs on a thread of its own), so a caller need
   * not keep the parsed event while the write waits: ingest.ts then holds only the JSON text.
   */
  readonly writesFromJson: boolean;
  /**
   * Stored events matching any of the filters: each filter's limit applied on its own (newest first,
   * lower id first on ties), the union de-duplicated and sorted newest first / lower id first.
   * Returns the events' JSON texts. Never returns expired or deleted events. Long scans yield.
   */
  query(filters: Filter[], opts: QueryOptions): Promise<string[]>;
  /**
   * The same results as ready messages: each event's JSON bytes between `framing.prefix` and
   * `framing.suffix`, back to back in one transferable buffer (nostr/frames.ts), no string per event.
   */
  queryFrames(filters: Filter[], opts: QueryOptions, framing: Framing): Promise<EventFrames>;
  /** Number of stored events matching any of the filters (each counted once; limits ignored). */
  count(filters: Filter[], opts?: Pick<QueryOptions, 'signal' | 'now'>): Promise<number>;
  /** count() with the NIP-45 HLL registers where the store maintains them. */
  countResult(filters: Filter[], opts?: Pick<QueryOptions, 'signal' | 'now'>): Promise<CountResult>;
  /** Stores HLL registers recomputed by a countResult() (of this or another handle on the store). */
  refreshHll(refresh: HllRefresh[]): Promise<void>;
  /** Streams every match of one filter newest first without a limit, in constant memory (export). */
  iterate(filter: Filter, opts?: Pick<QueryOptions, 'signal' | 'now'>): AsyncIterable<string>;
  /**
   * NIP-77: (created_at, id) of every event matching the filter, ascending, as packed negentropy
   * records, without decoding events (store/negentropy.ts). More than opts.maxItems matches give
   * overLimit and no records. The filter's limit keeps the newest events, as for REQ.
   */
  negentropyItems(filter: Filter, opts: NegentropyItemOptions & Pick<QueryOptions, 'signal' | 'now'>): Promise<NegentropyItems>;
  /** One event by id, or undefined. */
  get(id: string): NostrEvent | undefined;
  /** Whether get(id) would find it, without reading the event (a few LMDB gets, no copy). */
  has(id: string): boolean;
  /**
   * What write() would decide without writing, when that needs no write: 'duplicate' (the id is
   * stored), 'deleted' (a tombstone blocks it), 'replaced' (a newer version of its address is
   * stored); null when only write() can tell (it would probably be stored). A read-only lookup
   * (a few LMDB gets) for skipping work, e.g. signature checks, on events the store would not take.
   */
  precheck(ev: PrecheckEvent): Precheck;
  /** Delete events whose expiration is at or before `now` (unix seconds). Returns how many. */
  sweepExpired(now?: number): Promise<number>;
  /** Delete one event by id and tombstone it (operator ban). Returns whether it existed. */
  remove(id: string): Promise<boolean>;
  stats(): StoreStats;
  /** Free space against the write reserve (lib/disk-guard.ts), measured now; null for a read-only store. */
  disk(): DiskState | null;
  close(): Promise<void>;
}
