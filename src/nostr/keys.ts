// Keys as operators write them in config: hex or NIP-19 (npub / nsec). Pure: no I/O.
import { decode } from 'nostr-tools/nip19';
import { isHex64 } from './hex.js';

/** A pubkey given as hex (any case) or npub, as lowercase hex; null when it is neither. */
export function parsePubkey(s: string): string | null {
  const t = s.trim();
  if (isHex64(t.toLowerCase())) return t.toLowerCase();
  if (t.startsWith('npub1')) {
    try {
      const d = decode(t as `npub1${string}`);
      if (d.type === 'npub' && isHex64(d.data)) return d.data;
    } catch { /* fall through */ }
  }
  return null;
}

/** A secret key given as 64 hex characters or nsec; throws (naming `what`) on anything else. */
export function parseSecretKey(s: string, what = 'spider.workerKey'): Uint8Array {
  const t = s.trim();
  if (isHex64(t.toLowerCase())) return Uint8Array.from(Buffer.from(t, 'hex'));
  if (t.startsWith('nsec1')) {
    try {
      const d = decode(t as `nsec1${string}`);
      if (d.type === 'nsec') return d.data;
    } catch { /* fall through */ }
  }
  throw new Error(`${what}: expected 64 hex characters or an nsec`);
}
