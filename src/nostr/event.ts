// The Nostr event and its structural checks. Pure: no I/O.
import { createHash } from 'node:crypto';
import { isHex64, isLowerHex } from './hex.js';

export interface NostrEvent {
  id: string;
  pubkey: string;
  created_at: number;
  kind: number;
  tags: string[][];
  content: string;
  sig: string;
}

/** Returns null when `ev` has the shape of a NIP-01 event, else the reason (without prefix). */
export function structureError(ev: unknown): string | null {
  if (typeof ev !== 'object' || ev === null || Array.isArray(ev)) return 'event is not an object';
  const e = ev as Record<string, unknown>;
  if (typeof e.id !== 'string' || !isHex64(e.id)) return 'id must be 64 lowercase hex characters';
  if (typeof e.pubkey !== 'string' || !isHex64(e.pubkey)) return 'pubkey must be 64 lowercase hex characters';
  if (typeof e.sig !== 'string' || !isLowerHex(e.sig, 128)) return 'sig must be 128 lowercase hex characters';
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

// The canonical JSON (JSON.stringify(canonical(ev)) of an event that passed structureError) is
//   {"id":"<64 hex>","pubkey":"<64 hex>","created_at":N,"kind":K,"tags":T,"content":C,"sig":"<128 hex>"}
// and the id preimage is [0,"<pubkey>",N,K,T,C] with the very same T and C text, so the preimage
// can be cut out of it instead of serializing the tags and content a second time. T holds only
// arrays of strings, in which a quote is always escaped, so the first ',"content":' after T's
// start is the field separator.
const ID_AT = 7; // {"id":"
const PUBKEY_AT = ID_AT + 64 + 12; // ","pubkey":"
const CREATED_AT = PUBKEY_AT + 64 + 15; // ","created_at":
const SIG_TAIL = 8 + 128 + 2; // ,"sig":"<128>"}

/** Whether `json` has the layout of a canonical event's JSON (cheap checks of the fixed parts). */
function hasCanonicalLayout(json: string): boolean {
  return (
    json.length > CREATED_AT + SIG_TAIL &&
    json.startsWith('{"id":"') &&
    json.startsWith('","pubkey":"', ID_AT + 64) &&
    json.startsWith('","created_at":', PUBKEY_AT + 64) &&
    json.startsWith(',"sig":"', json.length - SIG_TAIL) &&
    json.endsWith('"}')
  );
}

/** Where canonical JSON's kind, tags and content fields start (at their `,"name":`), or null when `json` is not laid out so. */
export function canonicalFields(json: string): { kindAt: number; tagsAt: number; contentAt: number } | null {
  if (!hasCanonicalLayout(json)) return null;
  const kindAt = json.indexOf(',"kind":', CREATED_AT);
  const tagsAt = kindAt < 0 ? -1 : json.indexOf(',"tags":', kindAt + 8);
  const contentAt = tagsAt < 0 ? -1 : json.indexOf(',"content":', tagsAt + 8);
  if (contentAt < 0 || contentAt + 11 > json.length - SIG_TAIL) return null;
  return { kindAt, tagsAt, contentAt };
}

/** The parts a signature check needs, read out of an event's canonical JSON. */
export interface SignedParts {
  /** the NIP-01 serialization whose sha256 is the id */
  preimage: string;
  id: string;
  pubkey: string;
  sig: string;
}

/** Reads the id preimage, id, pubkey and sig out of canonical JSON; null when `json` is not laid out so. */
export function signedPartsOf(json: string): SignedParts | null {
  const at = canonicalFields(json);
  if (!at) return null;
  const { kindAt, tagsAt, contentAt } = at;
  const sigAt = json.length - SIG_TAIL;
  const pubkey = json.slice(PUBKEY_AT, PUBKEY_AT + 64);
  const preimage = `[0,"${pubkey}",${json.slice(CREATED_AT, kindAt)},${json.slice(kindAt + 8, tagsAt)},${json.slice(tagsAt + 8, contentAt)},${json.slice(contentAt + 11, sigAt)}]`;
  return { preimage, id: json.slice(ID_AT, ID_AT + 64), pubkey, sig: json.slice(sigAt + 8, sigAt + 136) };
}

export function computeId(ev: Omit<NostrEvent, 'id' | 'sig'>): string {
  return createHash('sha256').update(serializeForId(ev)).digest('hex');
}

/** A plain copy in canonical field order, dropping unknown fields (what we store and send). */
export function canonical(ev: NostrEvent): NostrEvent {
  return { id: ev.id, pubkey: ev.pubkey, created_at: ev.created_at, kind: ev.kind, tags: ev.tags, content: ev.content, sig: ev.sig };
}
