// Id and signature checks. The id is sha256 over the NIP-01 serialization; the signature is BIP-340
// Schnorr. Backends, fastest first: the system's libsecp256k1 through native/schnorr (built at npm
// install where libsecp256k1-dev is installed; ~40 µs for an author seen recently, whose key it
// keeps parsed, ~45 otherwise), bcrypto's bundled libsecp256k1 (compiled at npm install, ~50 µs),
// then nostr-wasm (~270 µs). No I/O beyond loading the backend.
import { createRequire } from 'node:module';
import { hash } from 'node:crypto';
import { canonical, serializeForId, signedPartsOf, type NostrEvent, type SignedParts } from './event.js';

/** `libsecp256k1`: native/schnorr over the system library; `native`: bcrypto; `wasm`: nostr-wasm. */
export type VerifierBackend = 'libsecp256k1' | 'native' | 'wasm';

export interface EventVerifier {
  readonly backend: VerifierBackend;
  /**
   * null when id and signature are right, else the refusal message with its `invalid:` prefix.
   * A passed check is remembered for that very object (verifiedJson below).
   */
  check(ev: NostrEvent): string | null;
  /**
   * The same check from the event's canonical JSON, JSON.stringify(canonical(ev)) (what the ingest
   * path has made already and the verification pool sends): the preimage is cut out of it.
   */
  checkJson(json: string): string | null;
}

// The proof of a check, for the ingest path: each event object that passed check() in this process,
// with the canonical JSON it had when it passed. Only a passed check adds to it (nothing else can
// reach the map), it is keyed by the object itself (no flag a caller could set), and the JSON is
// kept so that an object changed after its check proves nothing: the ingest path compares it with
// the JSON it makes of the event it is about to store, and checks again when they differ.
const proven = new WeakMap<object, string>();

/** The canonical JSON `ev` had when it passed a check in this process, or undefined. */
export function verifiedJson(ev: unknown): string | undefined {
  return typeof ev === 'object' && ev !== null ? proven.get(ev) : undefined;
}

/** Records a passed check of `ev` (null) and hands the result through. */
function remember(ev: NostrEvent, result: string | null): string | null {
  if (result === null) proven.set(ev, JSON.stringify(canonical(ev)));
  return result;
}

const partsOfEvent = (ev: NostrEvent): SignedParts => ({ preimage: serializeForId(ev), id: ev.id, pubkey: ev.pubkey, sig: ev.sig });
/** JSON that is not laid out canonically still gets a right answer, the slow way. */
const partsOfJson = (json: string): SignedParts => signedPartsOf(json) ?? partsOfEvent(JSON.parse(json) as NostrEvent);

const require = createRequire(import.meta.url);

/** Builds both entry points from one schnorr(hash, sig, pubkey) function. */
function checkWith(backend: VerifierBackend, schnorr: (msg: Buffer, sig: Buffer, pub: Buffer) => boolean): EventVerifier {
  const checkParts = ({ preimage, id, pubkey, sig }: SignedParts): string | null => {
    const digest = hash('sha256', preimage, 'buffer');
    if (digest.toString('hex') !== id) return 'invalid: event id does not match its content';
    let good = false;
    try { good = schnorr(digest, Buffer.from(sig, 'hex'), Buffer.from(pubkey, 'hex')); } catch { good = false; }
    return good ? null : 'invalid: signature verification failed';
  };
  return { backend, check: (ev) => remember(ev, checkParts(partsOfEvent(ev))), checkJson: (json) => checkParts(partsOfJson(json)) };
}

/**
 * native/schnorr (the optional dependency orbweaver-schnorr), or null where it was not built: npm
 * skips it when libsecp256k1-dev or a compiler is missing, and the next backend is used.
 */
export function loadSystemVerifier(): EventVerifier | null {
  try {
    const { verify } = require('orbweaver-schnorr') as { verify(m: Buffer, s: Buffer, k: Buffer): boolean };
    return typeof verify === 'function' ? checkWith('libsecp256k1', verify) : null;
  } catch {
    return null;
  }
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
    if (hash('sha256', serialized, 'hex') !== ev.id) return 'invalid: event id does not match its content';
    try {
      nw.verifyEvent(ev);
      return null;
    } catch {
      return 'invalid: signature verification failed';
    }
  };
  return {
    backend: 'wasm',
    check: (ev) => remember(ev, checkEvent(ev, serializeForId(ev))),
    checkJson(json) {
      const { preimage, id, pubkey, sig } = partsOfJson(json);
      const [, , created_at, kind, tags, content] = JSON.parse(preimage) as [0, string, number, number, string[][], string];
      return checkEvent({ id, pubkey, sig, created_at, kind, tags, content }, preimage);
    },
  };
}

/** The fastest backend available, unless `prefer` names one (tests exercise each). */
export async function loadVerifier(prefer: VerifierBackend | 'auto' = 'auto'): Promise<EventVerifier> {
  if (prefer === 'auto' || prefer === 'libsecp256k1') {
    const system = loadSystemVerifier();
    if (system) return system;
    if (prefer === 'libsecp256k1') throw new Error('verifier: libsecp256k1 (native/schnorr) is not built on this machine: install libsecp256k1-dev and run npm install again, or set verifier to auto');
  }
  if (prefer !== 'wasm') {
    const native = loadNativeVerifier();
    if (native) return native;
    if (prefer === 'native') throw new Error('verifier: native (bcrypto) is not built on this machine: install g++, make and python3 and run npm install again, or set verifier to auto');
  }
  return loadWasmVerifier();
}
