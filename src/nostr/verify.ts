// Id and signature checks. The id is sha256 over the NIP-01 serialization; the signature is BIP-340
// Schnorr. Backends, fastest first: bcrypto's native libsecp256k1 (compiled at npm install, ~49 µs),
// then nostr-wasm (~270 µs). No I/O beyond loading the backend.
import { createRequire } from 'node:module';
import { createHash } from 'node:crypto';
import { serializeForId, type NostrEvent } from './event.js';

export type VerifierBackend = 'native' | 'wasm';

export interface EventVerifier {
  readonly backend: VerifierBackend;
  /** null when id and signature are right, else the refusal message with its `invalid:` prefix. */
  check(ev: NostrEvent): string | null;
  /** The same check from the NIP-01 serialization (what the verification pool sends). */
  checkSerialized(serialized: string, id: string, pubkey: string, sig: string): string | null;
}

const require = createRequire(import.meta.url);

/** Builds both entry points from one schnorr(hash, sig, pubkey) function. */
function checkWith(backend: VerifierBackend, schnorr: (msg: Buffer, sig: Buffer, pub: Buffer) => boolean): EventVerifier {
  const checkSerialized = (serialized: string, id: string, pubkey: string, sig: string): string | null => {
    const hash = createHash('sha256').update(serialized).digest();
    if (hash.toString('hex') !== id) return 'invalid: event id does not match its content';
    let good = false;
    try { good = schnorr(hash, Buffer.from(sig, 'hex'), Buffer.from(pubkey, 'hex')); } catch { good = false; }
    return good ? null : 'invalid: signature verification failed';
  };
  return { backend, checkSerialized, check: (ev) => checkSerialized(serializeForId(ev), ev.id, ev.pubkey, ev.sig) };
}

/** bcrypto's native binding, or null when it is not built (bcrypto then silently uses pure JS). */
export function loadNativeVerifier(): EventVerifier | null {
  try {
    const { schnorr } = require('bcrypto') as { schnorr: { native: number; verify(m: Buffer, s: Buffer, k: Buffer): boolean } };
    if (!schnorr || schnorr.native !== 2) return null;
    return checkWith('native', (m, s, k) => schnorr.verify(m, s, k));
  } catch {
    return null;
  }
}

export async function loadWasmVerifier(): Promise<EventVerifier> {
  const { initNostrWasm } = await import('nostr-wasm');
  const nw = await initNostrWasm();
  // nostr-wasm checks a whole event (id and signature) and throws when either is wrong; it has no
  // entry point for a bare hash, so the id is checked here first for the precise message.
  const checkEvent = (ev: NostrEvent, serialized: string): string | null => {
    if (createHash('sha256').update(serialized).digest('hex') !== ev.id) return 'invalid: event id does not match its content';
    try {
      nw.verifyEvent(ev);
      return null;
    } catch {
      return 'invalid: signature verification failed';
    }
  };
  return {
    backend: 'wasm',
    check: (ev) => checkEvent(ev, serializeForId(ev)),
    checkSerialized(serialized, id, pubkey, sig) {
      const [, , created_at, kind, tags, content] = JSON.parse(serialized) as [0, string, number, number, string[][], string];
      return checkEvent({ id, pubkey, sig, created_at, kind, tags, content }, serialized);
    },
  };
}

/** The fastest backend available, unless `prefer` names one (tests exercise both). */
export async function loadVerifier(prefer: VerifierBackend | 'auto' = 'auto'): Promise<EventVerifier> {
  if (prefer !== 'wasm') {
    const native = loadNativeVerifier();
    if (native) return native;
    if (prefer === 'native') throw new Error('native verifier (bcrypto) is not built on this machine');
  }
  return loadWasmVerifier();
}
