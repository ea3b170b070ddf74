// Every message between a store's writer thread (writer-thread.ts, main side) and the worker that
// runs its batched writer (writer-worker.ts), declared once and imported by both sides.
import type { SearchOptions } from './search/schema.js';
import type { DiskState } from '../lib/disk-guard.js';
import type { WriteResult } from './types.js';

/** workerData: how the worker opens its handle of the store (the main thread's options, no spool). */
export interface WriterInit {
  dir: string;
  mapSize?: number;
  readAhead?: boolean;
  minFreeBytes?: number;
  maxBatch?: number;
  maxBatchEntries?: number;
  maxBatchMs?: number;
  search?: SearchOptions;
}

/**
 * One write, numbered by the main thread. An event goes as its canonical JSON only: the worker
 * parses it again (~17 µs for a follow list), which costs less than cloning the parsed object. A
 * list of a graph kind whose tags are all graph tags may come with its members, read where its
 * signature was checked (EventStore.write): the worker then parses it without its tags.
 */
export type WriterOp =
  | { t: 'e'; id: number; json: string; members?: string }
  | { t: 'r'; id: number; eventId: string }
  | { t: 's'; id: number; now: number }
  | { t: 'h'; id: number; key: Uint8Array; version: number; registers: Uint8Array };

export type ToWriter = { t: 'ops'; ops: WriterOp[] } | { t: 'close' };

/** The answer to one op: its value, or the message of the error it failed with. */
export type OpDone = { id: number; value: WriteResult | boolean | number } | { id: number; error: string };

export type FromWriter =
  | { t: 'ready' }
  | { t: 'failed'; error: string }
  /** answers of ops whose transactions committed (or failed), with the worker's disk state after them */
  | { t: 'done'; done: OpDone[]; disk: DiskState | null }
  | { t: 'log'; level: 'info' | 'warn'; obj: Record<string, unknown>; msg: string }
  | { t: 'closed' };
