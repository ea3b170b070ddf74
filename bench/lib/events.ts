// Event generation for the benchmarks. Everything here happens BEFORE any clock starts: keys are
// derived from a seed, events are signed (native bcrypto when it is built, else nostr-wasm), and
// the signed set is cached under os.tmpdir() keyed by its parameters, so later runs start at once.
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { mkdirSync, readFileSync, renameSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { initNostrWasm } from 'nostr-wasm';
import { setNostrWasm, finalizeEvent, getPublicKey, verifyEvent } from 'nostr-tools/wasm';
import { log } from './report.js';

// The project's own event and filter types and matching: the benchmark checks what a relay should
// deliver with the same rules the relay implements (src/nostr), not a second copy of them.
export type { NostrEvent } from '../../src/nostr/event.js';
export type { WireFilter as Filter } from '../../src/nostr/filter.js';
import type { NostrEvent } from '../../src/nostr/event.js';
import { matchFilter, parseFilter, type WireFilter } from '../../src/nostr/filter.js';

export interface Template {
  kind: number;
  created_at: number;
  tags: string[][];
  content: string;
}

// ---------------------------------------------------------------------------------------------
// Signing

interface BcryptoSchnorr {
  sign(msg: Buffer, key: Buffer, aux?: Buffer): Buffer;
  publicKeyCreate(key: Buffer): Buffer;
}

export interface Signer {
  name: string;
  pubkey(sk: Uint8Array): string;
  sign(t: Template, sk: Uint8Array, pubkey: string): NostrEvent;
}

let signerPromise: Promise<Signer> | undefined;

/** The fastest signer available: bcrypto's native Schnorr (~20k/s), else nostr-wasm (~2.5k/s). */
export function getSigner(): Promise<Signer> {
  signerPromise ??= (async () => {
    setNostrWasm(await initNostrWasm()); // also used to check a sample of native signatures
    try {
      const require = createRequire(import.meta.url);
      const bcrypto = require('bcrypto') as { native?: number; schnorr: BcryptoSchnorr };
      if (bcrypto.native === 2) {
        const { schnorr } = bcrypto;
        return {
          name: 'bcrypto (native libsecp256k1)',
          pubkey: (sk) => schnorr.publicKeyCreate(Buffer.from(sk)).toString('hex'),
          sign: (t, sk, pubkey) => {
            const ser = JSON.stringify([0, pubkey, t.created_at, t.kind, t.tags, t.content]);
            const idBuf = createHash('sha256').update(ser).digest();
            const sig = schnorr.sign(idBuf, Buffer.from(sk)).toString('hex');
            return { id: idBuf.toString('hex'), pubkey, created_at: t.created_at, kind: t.kind, tags: t.tags, content: t.content, sig };
          },
        };
      }
    } catch {
      // bcrypto not installed or not built: fall through to wasm
    }
    return {
      name: 'nostr-wasm',
      pubkey: (sk) => getPublicKey(sk),
      sign: (t, sk) => {
        const e = finalizeEvent({ kind: t.kind, created_at: t.created_at, tags: t.tags, content: t.content }, sk);
        return { id: e.id, pubkey: e.pubkey, created_at: e.created_at, kind: e.kind, tags: e.tags, content: e.content, sig: e.sig };
      },
    };
  })();
  return signerPromise;
}

/** Deterministic secret key number `i` of a named key set. */
export function deriveKey(seed: string, set: string, i: number): Uint8Array {
  return new Uint8Array(createHash('sha256').update(`orbweaver-bench|${seed}|${set}|${i}`).digest());
}

/** Deterministic 64-hex string (not necessarily a valid point): filler pubkeys and ids. */
export function fakeHex(seed: string, set: string, i: number): string {
  return createHash('sha256').update(`orbweaver-bench-fake|${seed}|${set}|${i}`).digest('hex');
}

export interface KeyPair {
  sk: Uint8Array;
  pubkey: string;
}

export async function makeKeys(seed: string, set: string, n: number): Promise<KeyPair[]> {
  const signer = await getSigner();
  const out: KeyPair[] = [];
  for (let i = 0; i < n; i++) {
    const sk = deriveKey(seed, set, i);
    out.push({ sk, pubkey: signer.pubkey(sk) });
  }
  return out;
}

/** Signs templates with the given keys, reporting progress; checks a few with nostr-tools. */
export async function signAll(items: { t: Template; key: KeyPair }[], what: string): Promise<NostrEvent[]> {
  const signer = await getSigner();
  const started = performance.now();
  const out: NostrEvent[] = new Array(items.length);
  let lastLog = started;
  for (let i = 0; i < items.length; i++) {
    const { t, key } = items[i]!;
    out[i] = signer.sign(t, key.sk, key.pubkey);
    if ((i & 255) === 0) {
      const now = performance.now();
      if (now - lastLog > 2000) {
        lastLog = now;
        log(`  signing ${what}: ${i}/${items.length}`);
      }
    }
  }
  for (let i = 0; i < Math.min(out.length, 8); i++) {
    if (!verifyEvent({ ...out[i]! } as Parameters<typeof verifyEvent>[0])) throw new Error(`self-check failed: event ${i} signed by ${signer.name} does not verify`);
  }
  const secs = (performance.now() - started) / 1000;
  log(`  signed ${items.length} ${what} with ${signer.name} in ${secs.toFixed(1)} s (before the clock)`);
  return out;
}

// ---------------------------------------------------------------------------------------------
// The data set: N events by A authors, kind 1 with every tenth kind 7, one `t` tag
// (bench0..bench49) and one `p` tag each, created_at spread evenly over the last `spanSec` seconds.

export interface DatasetParams {
  count: number;
  authors: number;
  seed: string;
  spanSec: number;
}

export interface Dataset {
  params: DatasetParams;
  /** unix seconds when the set was generated (created_at values end just before it) */
  generatedAt: number;
  pubkeys: string[];
  events: NostrEvent[];
  minCreatedAt: number;
  maxCreatedAt: number;
  cacheFile: string;
}

export const TAG_VALUES = 50;
const CACHE_VERSION = 1;
const WORDS = 'lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua nostr relay bench event note'.split(' ');

export function cacheDir(): string {
  const dir = join(tmpdir(), 'orbweaver-bench');
  mkdirSync(dir, { recursive: true });
  return dir;
}

function filler(i: number, len: number): string {
  let s = '';
  let k = i;
  while (s.length < len) {
    s += WORDS[k % WORDS.length] + ' ';
    k = (k * 1103515245 + 12345) >>> 0;
  }
  return s.slice(0, len).trimEnd();
}

export function datasetTemplate(i: number, p: DatasetParams, base: number, pubkeys: string[]): { t: Template; author: number } {
  const author = i % p.authors;
  const kind = i % 10 === 9 ? 7 : 1;
  const created_at = base + Math.floor(((i + 0.5) * p.spanSec) / p.count);
  const tags = [
    ['t', `bench${i % TAG_VALUES}`],
    ['p', pubkeys[(i * 7 + 3) % p.authors]!],
  ];
  const content = kind === 7 ? '+' : `bench ${p.seed}/${i}: ${filler(i, 120 + ((i * 37) % 240))}`;
  return { t: { kind, created_at, tags, content }, author };
}

/** Loads the data set from the cache, or generates, signs and caches it. */
export async function loadDataset(p: DatasetParams, regen = false): Promise<Dataset> {
  const key = `ds-v${CACHE_VERSION}-n${p.count}-a${p.authors}-span${p.spanSec}-seed-${createHash('sha256').update(p.seed).digest('hex').slice(0, 12)}`;
  const file = join(cacheDir(), `${key}.jsonl`);
  const cached = regen ? null : readCachedSet(file, CACHE_VERSION, p.count, 'data set');
  if (cached) return finish(p, cached.generatedAt, cached.pubkeys, cached.events, file);
  const generatedAt = Math.floor(Date.now() / 1000);
  const base = generatedAt - p.spanSec - 1;
  const keys = await makeKeys(p.seed, 'authors', p.authors);
  const pubkeys = keys.map((k) => k.pubkey);
  const items = [];
  for (let i = 0; i < p.count; i++) {
    const { t, author } = datasetTemplate(i, p, base, pubkeys);
    items.push({ t, key: keys[author]! });
  }
  log(`  generating data set: ${p.count} events by ${p.authors} authors (seed ${p.seed})`);
  const events = await signAll(items, 'data set events');
  writeCachedSet(file, { version: CACHE_VERSION, generatedAt, pubkeys, params: p }, events);
  return finish(p, generatedAt, pubkeys, events, file);
}

/** A cached, signed event set: a JSON head line, then one event per line. */
export interface CachedSet {
  generatedAt: number;
  pubkeys: string[];
  events: NostrEvent[];
}

/** The set cached in `file`, or null when it is missing or was written by another version or size. */
export function readCachedSet(file: string, version: number, count: number, what: string): CachedSet | null {
  if (!existsSync(file)) return null;
  const started = performance.now();
  const lines = readFileSync(file, 'utf8').split('\n');
  const head = JSON.parse(lines[0]!) as { version: number; generatedAt: number; pubkeys: string[] };
  const events: NostrEvent[] = [];
  for (let i = 1; i < lines.length; i++) if (lines[i]) events.push(JSON.parse(lines[i]!) as NostrEvent);
  if (head.version !== version || events.length !== count) {
    log(`  cache ${file} is stale: regenerating`);
    return null;
  }
  log(`  ${what}: ${events.length} pre-signed events from cache ${file} (${((performance.now() - started) / 1000).toFixed(1)} s)`);
  return { generatedAt: head.generatedAt, pubkeys: head.pubkeys, events };
}

/** Writes a set to the cache (through a temporary file, so a reader never sees half of it). */
export function writeCachedSet(file: string, head: { version: number; generatedAt: number; pubkeys: string[]; params: object }, events: NostrEvent[]): void {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, [JSON.stringify(head), ...events.map((e) => JSON.stringify(e))].join('\n') + '\n');
  renameSync(tmp, file);
  log(`  cached in ${file}`);
}

function finish(params: DatasetParams, generatedAt: number, pubkeys: string[], events: NostrEvent[], cacheFile: string): Dataset {
  let minCreatedAt = Infinity;
  let maxCreatedAt = -Infinity;
  for (const e of events) {
    if (e.created_at < minCreatedAt) minCreatedAt = e.created_at;
    if (e.created_at > maxCreatedAt) maxCreatedAt = e.created_at;
  }
  return { params, generatedAt, pubkeys, events, minCreatedAt, maxCreatedAt, cacheFile };
}

/** Pre-serialized `["EVENT",{...}]` frames, built before the clock starts. */
export function eventFrames(events: NostrEvent[]): Buffer[] {
  return events.map((e) => Buffer.from(`["EVENT",${JSON.stringify(e)}]`));
}

// ---------------------------------------------------------------------------------------------
// Filter matching (client side: expected fan-out deliveries)

/** Whether a relay should deliver `e` to a subscription with filter `f` (NIP-01 rules). */
export const matches = (f: WireFilter, e: NostrEvent): boolean => matchFilter(parseFilter(f), e);

/** Small deterministic PRNG (mulberry32) so query mixes are reproducible. */
export { prng } from '../../src/lib/prng.js';

export function readJsonFile<T>(file: string): T {
  return JSON.parse(readFileSync(file, 'utf8')) as T;
}
