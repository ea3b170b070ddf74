// The Nostr event and its structural checks. Pure: no I/O.
import { createHash } from 'node:crypto';

export interface NostrEvent {
  id: string;
  pubkey: string;
  created_at: number;
  kind: number;
  tags: string[][];
  content: string;
  sig: string;
}

const HEX64 = /^[0-9a-f]{64}$/;
const HEX128 = /^[0-9a-f]{128}$/;

/** Returns null when `ev` has the shape of a NIP-01 event, else the reason (without prefix). */
export function structureError(ev: unknown): string | null {
  if (typeof ev !== 'object' || ev === null || Array.isArray(ev)) return 'event is not an object';
  const e = ev as Record<string, unknown>;
  if (typeof e.id !== 'string' || !HEX64.test(e.id)) return 'id must be 64 lowercase hex characters';
  if (typeof e.pubkey !== 'string' || !HEX64.test(e.pubkey)) return 'pubkey must be 64 lowercase hex characters';
  if (typeof e.sig !== 'string' || !HEX128.test(e.sig)) return 'sig must be 128 lowercase hex characters';
  if (!Number.isSafeInteger(e.created_at) || (e.created_at as number) < 0) return 'created_at must be a non-negative integer';
  if (!Number.isSafeInteger(e.kind) || (e.kind as number) < 0 || (e.kind as number) > 65535) return 'kind must be an integer 0-65535';
  if (typeof e.content !== 'string') return 'content must be a string';
  if (!Array.isArray(e.tags)) return 'tags must be an array';
  for (const tag of e.tags) {
    if (!Array.isArray(tag)) return 'every tag must be an array';
    for (const v of tag) if (typeof v !== 'string') return 'tag values must be strings';
  }
  return null;
}

/** NIP-01 serialization whose sha256 is the id. JSON.stringify escapes exactly as NIP-01 asks. */
export function serializeForId(ev: Omit<NostrEvent, 'id' | 'sig'>): string {
  return JSON.stringify([0, ev.pubkey, ev.created_at, ev.kind, ev.tags, ev.content]);
}

export function computeId(ev: Omit<NostrEvent, 'id' | 'sig'>): string {
  return createHash('sha256').update(serializeForId(ev)).digest('hex');
}

/** A plain copy in canonical field order, dropping unknown fields (what we store and send). */
export function canonical(ev: NostrEvent): NostrEvent {
  return { id: ev.id, pubkey: ev.pubkey, created_at: ev.created_at, kind: ev.kind, tags: ev.tags, content: ev.content, sig: ev.sig };
}
