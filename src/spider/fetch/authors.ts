// Authors the spider knows of (authors of events it fetched, pubkeys followed or muted in kind 3 /
// 10000 lists, seeds): the candidates for splitting a stuck second by author, and the authors a relay
// that answers only REQs naming authors is asked for (by-authors.ts). At internet scale that is
// millions of pubkeys, so they live in LMDB (a named database in the store's environment, kept
// across runs), with a Bloom filter in front so a pubkey seen before costs no write; memory stays
// constant whatever their number. Workers, which have no store, give it a scratch environment.
//
// Each author has a position: the book numbers them in the order it learns them (a second database
// maps position -> pubkey). A sweep over the book in that order sees the authors learnt while it runs
// (they come after it), and "the authors learnt since position p" is one range read.
import type { Database, RootDatabase } from 'lmdb';
import type { NostrEvent } from '../../nostr/event.js';
import { HexBloom } from './bloom.js';
import { openNamedDb } from '../../store/named-db.js';
import { isHex64 } from '../../nostr/hex.js';

/** most p tags taken from one list */
const MAX_TAGS = 10_000;

const position = (n: number): Buffer => {
  const b = Buffer.allocUnsafe(4);
  b.writeUInt32BE(n);
  return b;
};

export class AuthorBook {
  /** pubkey (32 bytes) -> its position (4 bytes; empty for authors kept before positions existed, given one on load) */
  private readonly db: Database<Buffer, Buffer>;
  /** position -> pubkey */
  private readonly order: Database<Buffer, Buffer>;
  /** 16 Mbit (2 MiB): ~0.4% false "known" at a million authors, which only leaves one out of splits and sweeps */
  private readonly bloom = new HexBloom(24, 3);
  private loaded = false;
  /** the position the next author learnt gets */
  private next = 0;

  /**
   * `scratch`: a book that starts empty with its process (workers, `orbweaver spider` beside the
   * relay), so it knows only the authors of this process's crawls: it learns them from the events
   * the home already held too (crawl.ts), where a lasting book learnt them when the home stored them.
   */
  constructor(env: RootDatabase, name = 'spider-authors', readonly scratch = false) {
    this.db = openNamedDb<Buffer, Buffer>(env, { name, keyEncoding: 'binary', encoding: 'binary' });
    this.order = openNamedDb<Buffer, Buffer>(env, { name: `${name}-order`, keyEncoding: 'binary', encoding: 'binary' });
  }

  /**
   * The Bloom filter learns what earlier runs stored, once, so they are not written again; the
   * positions continue after theirs, and authors kept without one are given one now.
   */
  private load(): void {
    if (this.loaded) return;
    this.loaded = true;
    for (const { key } of this.order.getRange({ reverse: true, limit: 1 })) this.next = key.readUInt32BE(0) + 1;
    for (const { key, value } of this.db.getRange()) {
      if (key.length !== 32) continue;
      this.bloom.addBytes(key);
      if (value.length !== 4) this.place(key);
    }
  }

  /** Gives a pubkey (32 bytes) the next position. Not awaited: lmdb-js batches these writes on its writer thread. */
  private place(key: Buffer): void {
    const at = position(this.next++);
    this.db.put(key, at).catch(() => { /* a lost hint, not a lost event */ });
    this.order.put(at, key).catch(() => {});
  }

  /** Remembers a pubkey (64 lowercase hex; anything else is ignored). */
  add(pubkey: string): void {
    this.load();
    if (this.bloom.has(pubkey) || !isHex64(pubkey)) return;
    this.bloom.add(pubkey);
    this.place(Buffer.from(pubkey, 'hex'));
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

  /** The position after the last author learnt: every author learnt later is at or past it. */
  get end(): number {
    this.load();
    return this.next;
  }

  /** Up to `max` authors from position `from` on, in the order they were learnt, and the position after the last one returned. */
  async slice(from: number, max: number): Promise<{ authors: string[]; next: number }> {
    this.load();
    await this.order.committed; // the positions given so far are readable
    const authors: string[] = [];
    let next = from;
    for (const { key, value } of this.order.getRange({ start: position(from), limit: max })) {
      authors.push(value.toString('hex'));
      next = key.readUInt32BE(0) + 1;
    }
    return { authors, next };
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
