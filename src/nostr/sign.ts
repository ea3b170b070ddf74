// Signing events with a key this process holds: NIP-85 assertions, NIP-66 monitor events, NIP-42
// AUTH to a home relay. BIP-340 Schnorr over the NIP-01 id. Backends, fastest first: bcrypto's
// native libsecp256k1 (built at npm install; ~0.13 ms a signature here), else nostr-tools'
// JavaScript (~3-7 ms a signature here, public key derived again each time: 100,000 NIP-85
// assertions were minutes of the main thread). No I/O beyond loading the backend.
import { createRequire } from 'node:module';
import { createHash, randomBytes } from 'node:crypto';
import { finalizeEvent } from 'nostr-tools/pure';
import { serializeForId, type NostrEvent } from './event.js';

export interface EventTemplate {
  kind: number;
  created_at: number;
  tags: string[][];
  content: string;
}

interface NativeSchnorr {
  native: number;
  sign(msg: Buffer, key: Buffer, aux?: Buffer): Buffer;
  publicKeyCreate(key: Buffer): Buffer;
}

const require = createRequire(import.meta.url);
let schnorr: NativeSchnorr | null | undefined;

/** bcrypto's native Schnorr, or null when it is not built (bcrypto would then be pure JS: slower than nostr-tools). */
function nativeSchnorr(): NativeSchnorr | null {
  if (schnorr !== undefined) return schnorr;
  try {
    const s = (require('bcrypto') as { schnorr: NativeSchnorr }).schnorr;
    schnorr = s && s.native === 2 ? s : null;
  } catch {
    schnorr = null;
  }
  return schnorr;
}

/** Public keys of the secret keys signed with, derived once per key object. */
const pubkeys = new WeakMap<Uint8Array, string>();

/** Which backend signEvent uses on this machine. */
export const signerBackend = (): 'native' | 'js' => (nativeSchnorr() ? 'native' : 'js');

/** The template signed with `secretKey`: a complete event (id, pubkey, sig) whose tags are copies. */
export function signEvent(t: EventTemplate, secretKey: Uint8Array): NostrEvent {
  const tags = t.tags.map((x) => [...x]);
  const s = nativeSchnorr();
  if (!s) {
    const e = finalizeEvent({ kind: t.kind, created_at: t.created_at, tags, content: t.content }, secretKey);
    return { id: e.id, pubkey: e.pubkey, created_at: e.created_at, kind: e.kind, tags: e.tags, content: e.content, sig: e.sig };
  }
  const key = Buffer.from(secretKey.buffer, secretKey.byteOffset, secretKey.byteLength);
  let pubkey = pubkeys.get(secretKey);
  if (pubkey === undefined) pubkeys.set(secretKey, (pubkey = s.publicKeyCreate(key).toString('hex')));
  const ev = { pubkey, created_at: t.created_at, kind: t.kind, tags, content: t.content };
  const id = createHash('sha256').update(serializeForId(ev)).digest();
  // fresh auxiliary randomness per signature, as BIP-340 recommends (nostr-tools does the same)
  const sig = s.sign(id, key, randomBytes(32)).toString('hex');
  return { id: id.toString('hex'), pubkey, created_at: ev.created_at, kind: ev.kind, tags, content: ev.content, sig };
}
