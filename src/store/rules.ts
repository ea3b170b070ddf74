// The storage rules as pure decisions (NIP-01 replaceable and addressable events, NIP-09, NIP-40;
// NIP-62's are in nostr/vanish.ts) and the NIP-01 prefixed OK messages. txn.ts applies them inside the write transaction.
import type { WriteResult } from './types.js';

export const MSG = {
  duplicate: 'duplicate: already have this event',
  replaced: 'blocked: a newer version of this replaceable event is stored',
  deletedId: 'blocked: this event was deleted by its author',
  banned: 'blocked: this event is banned on this relay',
  deletedAddr: 'blocked: this address was deleted at or after this event was created',
  // NIP-62 (vanish.ts). A refusal that says "deleted" is read as a deletion by remote sinks (ingest/sink.ts statusFromOk)
  vanished: 'blocked: its author requested to vanish (NIP-62): their events up to that request are deleted here and not taken again',
  vanishedWrap: 'blocked: this gift wrap is addressed to a pubkey that requested to vanish (NIP-62): gift wraps to them up to that request are deleted here and not taken again',
  // no "delet" in it: a remote sink would read it as the event being deleted (ingest/sink.ts statusFromOk)
  vanishUndeletable: 'blocked: a request to vanish cannot be withdrawn (NIP-62: a kind 5 against it has no effect)',
  expired: 'invalid: event has expired',
  createdAtRange: 'invalid: created_at is out of the range this relay stores',
  ephemeral: 'invalid: ephemeral events are not stored',
} as const;

export const stored = (removed: string[], serial: number): WriteResult =>
  removed.length ? { status: 'stored', ok: true, message: '', removed, serial } : { status: 'stored', ok: true, message: '', serial };
export const duplicate = (): WriteResult => ({ status: 'duplicate', ok: true, message: MSG.duplicate });
export const replaced = (): WriteResult => ({ status: 'replaced', ok: false, message: MSG.replaced });
export const deleted = (message: string): WriteResult => ({ status: 'deleted', ok: false, message });
export const invalid = (message: string): WriteResult => ({ status: 'invalid', ok: false, message });

/** NIP-40: an event is expired once its expiration is at or before now. */
export const isExpired = (expiration: number | null, now: number): boolean => expiration !== null && expiration <= now;

/**
 * Whether an incoming replaceable/addressable event replaces the stored
 * version. The newer created_at wins; on equal created_at the lower id wins.
 */
export function incomingWins(stored: { created_at: number; id: string }, incoming: { created_at: number; id: string }): boolean {
  if (incoming.created_at !== stored.created_at) return incoming.created_at > stored.created_at;
  return incoming.id < stored.id;
}

/**
 * NIP-09 `e` tag: may a deletion by `deleter` remove the stored `target`? Only the author's own
 * events, and never a deletion (a deletion of a deletion has no effect).
 */
export const mayDeleteStored = (target: { pubkey: string; kind: number }, deleter: string): boolean =>
  target.pubkey === deleter && target.kind !== 5;

/**
 * NIP-09 `a` tag: a deletion at `deletionCreatedAt` covers every version at the address with
 * created_at at or before it; later versions are allowed.
 */
export const addressDeletionCovers = (deletionCreatedAt: number, createdAt: number): boolean => createdAt <= deletionCreatedAt;

/** Unix seconds now. */
export const nowSeconds = (): number => Math.floor(Date.now() / 1000);
