// How verify.ts and repair.ts read the store: a stored event parsed as the indexer indexes it, a
// database read forward in chunks (each its own short read, yielding between them), entry counts
// and a progress meter.
import { addressOf, dTag, isAddressable } from '../../nostr/kinds.js';
import { decodeHeader, jsonOf, type Header } from '../../store/codec.js';
import { addrKey, EMPTY } from '../../store/keys.js';
import type { BinDb, Dbs } from '../../store/schema.js';

export interface Progress {
  phase: string;
  done: number;
  total: number;
  /** per second, over the phase */
  rate: number;
}

/** The graph's databases as a new object: graph.ts keeps its memory of pubkey ids per object. */
export const freshGraph = (dbs: Dbs): Dbs['graph'] => ({ ...dbs.graph });

export const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
export const hex = (b: Uint8Array): string => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');
export const short = (h: string): string => h.slice(0, 16) + '…';

export interface Parsed {
  serial: number;
  h: Header;
  /** what the indexer indexes: the header's fields, the stored JSON's tags and content */
  ev: { pubkey: string; created_at: number; kind: number; tags: string[][]; content?: string };
  /** the JSON did not parse: indexed by its header alone */
  unreadable: boolean;
}

export function parseStored(serial: number, value: Buffer): Parsed {
  const h = decodeHeader(value);
  let tags: string[][] = [];
  let content: string | undefined;
  let unreadable = false;
  try {
    const j = JSON.parse(jsonOf(value)) as { tags?: unknown; content?: unknown };
    if (Array.isArray(j.tags)) tags = j.tags as string[][];
    if (typeof j.content === 'string') content = j.content;
  } catch {
    unreadable = true;
  }
  return { serial, h, ev: { pubkey: h.pubkey, created_at: h.created_at, kind: h.kind, tags, content }, unreadable };
}

/** The address key of a replaceable or addressable event, or null (as the writer computes it, txn.ts). */
export function addrKeyOf(ev: { kind: number; pubkey: string; tags: string[][] }): Buffer | null {
  if (addressOf(ev) === null) return null;
  return addrKey(ev.kind, ev.pubkey, isAddressable(ev.kind) ? dTag(ev) : '');
}

export const describe = (p: Parsed): string => `event ${short(p.h.id)} kind ${p.h.kind} serial ${p.serial}`;

/** Reads a db forward in chunks (each its own read), yielding between chunks; `fn` returning false stops. */
export async function scan(db: BinDb, values: boolean, fn: (key: Buffer, value: Buffer) => boolean | void, chunk = 2000): Promise<void> {
  let last: Buffer | undefined;
  for (;;) {
    const opts = { start: last, exclusiveStart: last !== undefined, limit: chunk };
    const rows: Array<{ key: Buffer; value: Buffer }> = [];
    if (values) for (const r of db.getRange(opts)) rows.push(r);
    else for (const key of db.getKeys(opts)) rows.push({ key, value: EMPTY });
    for (const r of rows) if (fn(r.key, r.value) === false) return;
    if (rows.length < chunk) return;
    last = rows[rows.length - 1]!.key;
    await tick();
  }
}


/** Calls onProgress at most every progressMs. */
export class Meter {
  private last = Date.now();
  private started = Date.now();
  private phase = '';
  constructor(private readonly opts: { onProgress?: (p: Progress) => void; progressMs?: number }) {}
  start(phase: string): void {
    this.phase = phase;
    this.started = Date.now();
  }
  tick(done: number, total: number, force = false): void {
    if (!this.opts.onProgress) return;
    const now = Date.now();
    if (!force && now - this.last < (this.opts.progressMs ?? 3000)) return;
    this.last = now;
    const s = Math.max(0.001, (now - this.started) / 1000);
    this.opts.onProgress({ phase: this.phase, done, total, rate: Math.round(done / s) });
  }
}
