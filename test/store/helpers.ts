// Shared helpers of the store tests: temporary stores and fake events (the store does not
// verify signatures, so ids and signatures are random hex).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NostrEvent } from '../../src/nostr/event.js';
import type { Filter } from '../../src/nostr/filter.js';
import { openStore, type OpenStoreOptions } from '../../src/store/index.js';
import type { EventStore, QueryOptions, WriteResult } from '../../src/store/types.js';

export const hex = (bytes = 32): string => randomBytes(bytes).toString('hex');

export function tmpDir(): string {
  return mkdtempSync(join(tmpdir(), 'orbweaver-store-'));
}

export async function withStore<T>(fn: (store: EventStore, dir: string) => Promise<T>, opts: Partial<OpenStoreOptions> = {}): Promise<T> {
  const dir = tmpDir();
  const store = await openStore({ dir, mapSize: 256 * 1024 ** 2, ...opts });
  try {
    return await fn(store, dir);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

let counter = 0;
/** A fake event; `id` defaults to random hex. */
export function ev(p: Partial<NostrEvent> = {}): NostrEvent {
  return {
    id: p.id ?? hex(),
    pubkey: p.pubkey ?? hex(),
    created_at: p.created_at ?? 1_700_000_000 + counter++,
    kind: p.kind ?? 1,
    tags: p.tags ?? [],
    content: p.content ?? 'hello',
    sig: p.sig ?? hex(64),
  };
}

/** An id that sorts at `rank` (0-255) among ids made with other ranks. */
export const idWithRank = (rank: number): string => rank.toString(16).padStart(2, '0') + hex(31);

export const put = (store: EventStore, e: NostrEvent): Promise<WriteResult> => store.write(e, JSON.stringify(e));

export const Q: QueryOptions = { defaultLimit: 500, maxLimit: 500 };

/** Query and return ids. */
export async function ids(store: EventStore, filters: Parameters<EventStore['query']>[0], opts: Partial<QueryOptions> = {}): Promise<string[]> {
  const out = await store.query(filters, { ...Q, ...opts });
  return out.map((j) => (JSON.parse(j) as NostrEvent).id);
}

export const newestFirst = (a: NostrEvent, b: NostrEvent): number =>
  b.created_at - a.created_at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** NIP-45, step by step: offset from the filter's first tag value, then for each event's pubkey... */
export function oracleRegisters(f: Filter, events: Array<Pick<NostrEvent, 'pubkey'>>): string {
  const value = f.tags![0]![1][0]!;
  const offset = 8 + Number.parseInt(value[32]!, 16); // a hex id or pubkey is used as it is
  const regs = new Array<number>(256).fill(0);
  for (const e of events) {
    const pk = Buffer.from(e.pubkey, 'hex');
    const ri = pk[offset]!; // "the byte at position offset of the event pubkey"
    let zeros = 0; // "leading zero bits starting at position offset+1" (the next 7 bytes)
    for (let bit = 0; bit < 56; bit++) {
      const byte = pk[offset + 1 + (bit >> 3)]!;
      if (byte & (0x80 >> (bit & 7))) break;
      zeros++;
    }
    regs[ri] = Math.max(regs[ri]!, zeros + 1);
  }
  return Buffer.from(regs).toString('hex');
}


/** A small deterministic PRNG (mulberry32, the benchmarks' own), so a failure can be replayed from its seed. */
export { prng as rng } from '../../bench/lib/events.js';
