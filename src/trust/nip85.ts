// NIP-85 trusted assertions (nostr-protocol/nips 85.md as of 999f9bf, docs/trust.md): one kind
// 30382 event per pubkey ranked at least trust.nip85MinRank (the most trusted followers first, at
// most trust.nip85Max), d = the pubkey, with `rank` (0-100) and `followers` (the follow lists naming
// it: what this relay's NIP-45 COUNT {"kinds":[3],"#p":[pk]} answers), and a kind 0 of the service
// key saying who runs it and what the algorithm is (85.md, "Service provider discoverability").
// Signed by the service key and written through our ingest path, so they are stored, replaced
// (addressable: newest wins) and served like any event. What was last published per pubkey is
// kept in its own table, so a pass republishes only assertions whose values changed, and each new
// version is newer than the last (created_at strictly increases per pubkey).
import { isAbsolute, join, basename, dirname } from 'node:path';
import type { RootDatabase } from 'lmdb';
import { dataDirKey, type FileKey } from '../lib/key-file.js';
import type { NostrEvent } from '../nostr/event.js';
import { signHere, type SignBatch } from './sign-thread.js';
import type { IngestStatus } from '../ingest/types.js';
import type { PassResult } from './pass.js';
import { sortedDesc } from './sort.js';

export const ASSERTION_KIND = 30382;
/** assertions signed in one batch (one message to the signing thread) */
const SIGN_BATCH = 250;
/**
 * assertions in the ingest path at once: it acknowledges after a durable commit, so what is in
 * flight is what one commit can hold (100 in flight made 1,000 commits of 100,000 assertions)
 */
const IN_FLIGHT = 4000;
/** the user tags this relay computes (NIP-11 and docs name them) */
export const ASSERTED_TAGS = ['rank', 'followers'] as const;

/** The service key: trust.nip85Key, or trust-<mode>.key in the data directory (one key per algorithm). */
export function serviceKey(configured: string, dataDir: string, mode: 'rooted' | 'global'): FileKey {
  const file = configured === '' ? join(dataDir, `trust-${mode}.key`) : isAbsolute(configured) ? configured : join(dataDir, configured);
  return dataDirKey(dirname(file), basename(file), 'the NIP-85 service key');
}

/**
 * What NIP-11 says of the provider (field "nip85"), so a client can put the key in its kind 10040
 * list: ["30382:rank", pubkey, relay] and ["30382:followers", pubkey, relay].
 */
export function nip85Info(pubkey: string, mode: 'rooted' | 'global', config: { trust: { nip85MinRank: number; nip85Max: number }; publicUrl?: string }): Record<string, unknown> {
  return {
    pubkey,
    kinds: [ASSERTION_KIND],
    tags: [...ASSERTED_TAGS],
    algorithm: mode === 'rooted' ? 'pagerank over follows, personalised to the operator\'s roots, mutes counting against' : 'global pagerank over follows, mutes counting against',
    min_rank: config.trust.nip85MinRank,
    max_assertions: config.trust.nip85Max,
    ...(config.publicUrl ? { relay: config.publicUrl } : {}),
  };
}

export interface AssertionTemplate {
  kind: number;
  created_at: number;
  tags: string[][];
  content: string;
}

/**
 * The service key's kind 0 (85.md asks providers to sign one per key): who controls the key and
 * what the algorithm is, `website` the relay's public address (as https), `picture` its icon.
 */
export function serviceProfile(mode: 'rooted' | 'global', config: { info: { name: string; icon: string }; publicUrl?: string; trust: { globalSeeds: number } }, createdAt: number): AssertionTemplate {
  const site = config.publicUrl ? config.publicUrl.replace(/^ws(s?):\/\//, 'http$1://') : undefined;
  const seeds = config.trust.globalSeeds;
  const algorithm = mode === 'rooted'
    ? 'PageRank over follow lists, personalised to the relay operator\'s trusted roots; mutes count against'
    : seeds > 0 ? `PageRank over follow lists, personalised to the ${seeds} most followed list holders; mutes count against` : 'PageRank over follow lists; mutes count against';
  const profile = {
    name: `${config.info.name} web of trust (${mode})`,
    about: `NIP-85 trusted assertions (kind 30382: rank 0-100, followers) by the relay ${config.info.name}${config.publicUrl ? ` (${config.publicUrl})` : ''}, run by its operator, computed from the follow and mute lists it stores. Algorithm: ${algorithm}. One key per algorithm: the ${mode === 'rooted' ? 'global' : 'rooted'} rank, when published, has its own.`,
    ...(site ? { website: site } : {}),
    ...(config.info.icon ? { picture: config.info.icon } : {}),
  };
  return { kind: 0, created_at: createdAt, tags: [], content: JSON.stringify(profile) };
}

export function assertion(pubkey: string, rank: number, followers: number, createdAt: number): AssertionTemplate {
  return { kind: ASSERTION_KIND, created_at: createdAt, content: '', tags: [['d', pubkey], ['rank', String(rank)], ['followers', String(followers)]] };
}

export interface PublishReport {
  published: number;
  unchanged: number;
  failed: number;
  /** the relay was stopping: the rest waits for the next pass (what was published stays recorded) */
  interrupted?: boolean;
}

export class AssertionPublisher {
  private readonly db;

  constructor(
    env: RootDatabase,
    private readonly key: FileKey,
    private readonly put: (ev: NostrEvent) => Promise<IngestStatus>,
    /** signs a batch of assertions: on the signing thread in the relay (sign-thread.ts) */
    private readonly sign: SignBatch = signHere,
  ) {
    // pubkey (32) -> rank (1) | followers (4) | created_at (4) as last published by this key
    this.db = env.openDB<Buffer, Buffer>({ name: `trust.nip85.${key.pubkey.slice(0, 16)}`, keyEncoding: 'binary', encoding: 'binary' });
  }

  get pubkey(): string {
    return this.key.pubkey;
  }

  /**
   * Publishes the service key's profile when its content differs from `current` (the stored
   * one's): true when it was stored.
   */
  async publishProfile(template: AssertionTemplate, current: string | undefined): Promise<boolean> {
    if (current === template.content) return false;
    const [ev] = await this.sign([template], this.key.secretKey);
    const status = await this.put(ev!).catch(() => 'rejected' as IngestStatus);
    return status === 'stored' || status === 'duplicate';
  }

  /**
   * Publishes the changed assertions of a pass; `pause` between events keeps the relay responsive.
   * An aborted `signal` stops it between batches (a shutdown must not wait for 100,000 signatures);
   * what is already in the ingest path is awaited, so the record matches what was stored.
   */
  async publish(r: PassResult, minRank: number, max: number, pause: () => Promise<void>, signal?: AbortSignal): Promise<PublishReport> {
    // the most followed first (trusted followers, as search orders people), so that the people
    // clients look up most have theirs within seconds of a pass, whatever mutes did to their score;
    // sorted in slices that yield (a comparison sort of 200,000 held the event loop ~150 ms)
    const picked = await sortedDesc(r.trusted, r.score, (i) => r.rank[i]! >= minRank, max, pause);
    const report: PublishReport = { published: 0, unchanged: 0, failed: 0 };
    const now = Math.floor(Date.now() / 1000);
    let seen = 0;
    const inFlight = new Set<Promise<void>>();
    // changed assertions are signed SIGN_BATCH at a time on the signing thread, then handed to
    // the ingest path with up to IN_FLIGHT waiting for their commit
    let batch: Array<{ k: Buffer; rank: number; followers: number; createdAt: number; template: AssertionTemplate }> = [];
    const flush = async () => {
      const part = batch;
      batch = [];
      const events = await this.sign(part.map((b) => b.template), this.key.secretKey);
      part.forEach((b, j) => {
        const p: Promise<void> = this.one(events[j]!, b.k, b.rank, b.followers, b.createdAt, report).finally(() => inFlight.delete(p));
        inFlight.add(p);
      });
      while (inFlight.size > IN_FLIGHT) await Promise.race(inFlight);
    };
    for (const i of picked) {
      if (signal?.aborted) break;
      if (++seen % 1000 === 0) await pause();
      const k = Buffer.from(r.ids.key(i));
      const rank = r.rank[i]!;
      const followers = r.followers[i]!;
      const last = this.db.getBinary(k);
      if (last && last.length === 9 && last[0] === rank && last.readUInt32BE(1) === followers) {
        report.unchanged++;
        continue;
      }
      const createdAt = Math.max(now, last && last.length === 9 ? last.readUInt32BE(5) + 1 : 0);
      batch.push({ k, rank, followers, createdAt, template: assertion(r.ids.hex(i), rank, followers, createdAt) });
      if (batch.length >= SIGN_BATCH) await flush();
    }
    if (signal?.aborted) report.interrupted = true;
    else if (batch.length > 0) await flush();
    await Promise.all(inFlight);
    return report;
  }

  private async one(ev: NostrEvent, k: Buffer, rank: number, followers: number, createdAt: number, report: PublishReport): Promise<void> {
    let status: IngestStatus;
    try { status = await this.put(ev); } catch { status = 'rejected'; }
    if (status !== 'stored' && status !== 'duplicate') {
      report.failed++;
      return;
    }
    const v = Buffer.allocUnsafe(9);
    v[0] = rank;
    v.writeUInt32BE(followers, 1);
    v.writeUInt32BE(createdAt, 5);
    await this.db.put(k, v);
    report.published++;
  }
}
