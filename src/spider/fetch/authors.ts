// Authors the spider knows of (authors of events it fetched, pubkeys followed or muted in kind 3 /
// 10000 lists, seeds): the candidates for splitting a stuck second by author. At internet scale
// that is millions of pubkeys, so they live in LMDB (a named database in the store's environment,
// kept across runs), with a Bloom filter in front so a pubkey seen before costs no write; memory
// stays constant whatever their number. Workers, which have no store, give it a scratch environment.
import type { Database, RootDatabase } from 'lmdb';
import type { NostrEvent } from '../../nostr/event.js';
import { HexBloom } from './bloom.js';
import { openNamedDb } from '../../store/named-db.js';
import { isHex64 } from '../../nostr/hex.js';

const EMPTY = Buffer.alloc(0);
/** most p tags taken from one list */
const MAX_TAGS = 10_000;

export class AuthorBook {
  private readonly db: Database<Buffer, Buffer>;
  /** 16 Mbit (2 MiB): ~0.4% false "known" at a million authors, which only leaves one out of splits */
  private readonly bloom = new HexBloom(24, 3);
  private loaded = false;

  constructor(env: RootDatabase, name = 'spider-authors') {
    this.db = openNamedDb<Buffer, Buffer>(env, { name, keyEncoding: 'binary', encoding: 'binary' });
  }

  /** The Bloom filter learns what earlier runs stored, once, so they are not written again. */
  private load(): void {
    if (this.loaded) return;
    this.loaded = true;
    for (const key of this.db.getKeys()) if (key.length === 32) this.bloom.addBytes(key);
  }

  /** Remembers a pubkey (64 lowercase hex; anything else is ignored). */
  add(pubkey: string): void {
    this.load();
    if (this.bloom.has(pubkey) || !isHex64(pubkey)) return;
    this.bloom.add(pubkey);
    // Not awaited: lmdb-js batches these writes on its writer thread.
    this.db.put(Buffer.from(pubkey, 'hex'), EMPTY).catch(() => { /* a lost hint, not a lost event */ });
  }

  /** The event's author, and the pubkeys a follow or mute list names. */
  addFrom(ev: NostrEvent): void {
    this.add(ev.pubkey);
    if (ev.kind !== 3 && ev.kind !== 10000) return;
    let n = 0;
    for (const t of ev.tags) {
      if (t[0] === 'p' && typeof t[1] === 'string' && t[1].length === 64) this.add(t[1]);
      if (++n >= MAX_TAGS) break;
    }
  }

  /** Up to `max` known authors (in key order) that `skip` does not rule out. */
  async candidates(max: number, skip?: (pubkey: string) => boolean): Promise<string[]> {
    const out: string[] = [];
    if (max <= 0) return out;
    await this.db.committed; // the writes queued so far are visible
    for (const key of this.db.getKeys()) {
      if (key.length !== 32) continue;
      const pk = key.toString('hex');
      if (skip?.(pk)) continue;
      out.push(pk);
      if (out.length >= max) break;
    }
    return out;
  }
}
