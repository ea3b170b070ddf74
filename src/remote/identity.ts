// What a relay URL answers, as evidence of which relay it reaches (the spider's aliases: docs/spider.md,
// "One relay under many URLs"). Two answers, both taken from the relay, never from the URL:
//   - its NIP-11 document as served, hashed whole (keys sorted): a relay behind many paths serves the
//     same document on each; a per-user relay or an inbox often does not;
//   - the ids of its answer to one small REQ, the newest few profiles, follow lists and relay lists
//     dated at or before a second fixed for the whole run: a store answers it the same way on every
//     path, two stores almost never (an inbox and an outbox of one host share a NIP-11 document,
//     not their newest lists). The fixed `until` keeps the answer still while a busy relay takes new
//     events between two probes of its URLs.
// Either part is null when it says nothing: the NIP-11 request timed out or failed (a 404 or a
// document that is not JSON is an answer: 'none'), or the REQ was refused, went unanswered or found
// nothing (two empty stores are not shown to be one). The ids are compared as the relay sent them:
// no signature is checked, since a relay that forges ids only changes which of its own URLs are
// taken for one relay.
import { createHash } from 'node:crypto';
import { RelayClient } from './client.js';
import { fetchNip11Document } from './nip11.js';
import { readEvents, Dropped } from './read.js';
import type { Target } from './url.js';
import { canonical, structureError, type NostrEvent } from '../nostr/event.js';
import { matchFilter, toWire, type Filter } from '../nostr/filter.js';

/** The probe's kinds and limit: small lists every directory relay holds, three of them. */
export const IDENTITY_KINDS = [0, 3, 10002];
export const IDENTITY_LIMIT = 3;

export interface RelayAnswer {
  /** hash of the NIP-11 document ('none' when the URL serves none); null: the request failed */
  nip11: string | null;
  /** hash of the sorted ids of the probe's answer; null: refused, silent, or nothing matched */
  answer: string | null;
  /** events in the answer */
  events: number;
  /** the probe's REQ was sent (a connection was made) */
  asked: boolean;
  /** why a part is null */
  error?: string;
}

export interface IdentityOptions {
  /** the run's fixed second: only events dated at or before it are asked for */
  until: number;
  connectTimeout: number;
  /** the REQ's idle timeout and deadline */
  timeout: number;
  maxEventBytes: number;
  maxBytes: number;
  signal?: AbortSignal;
}

/** The probe's filter for a run. */
export function identityFilter(until: number): Filter {
  return { kinds: IDENTITY_KINDS, until, limit: IDENTITY_LIMIT };
}

const hash = (s: string): string => createHash('sha256').update(s).digest('hex').slice(0, 32);

/** JSON with every object's keys sorted, so that a document's hash does not depend on key order. */
function sortedJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(sortedJson).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o).sort().map((k) => `${JSON.stringify(k)}:${sortedJson(o[k])}`).join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

/** A NIP-11 fetch's error that is the URL's answer (it serves no document), not a failure to ask. */
const servesNone = (error: string | undefined): boolean => error !== undefined && /^(HTTP \d+|not JSON|larger than)/.test(error);

/** Asks `target` for its NIP-11 document and the probe's answer, one after the other, bounded by the options. */
export async function probeIdentity(target: Target, o: IdentityOptions): Promise<RelayAnswer> {
  const out: RelayAnswer = { nip11: null, answer: null, events: 0, asked: false };
  const errors: string[] = [];
  const doc = await fetchNip11Document(target, o.connectTimeout, o.signal);
  if (doc.doc !== null) out.nip11 = hash(sortedJson(doc.doc));
  else if (servesNone(doc.error)) out.nip11 = 'none';
  else errors.push(`NIP-11: ${doc.error ?? 'failed'}`);
  let client: RelayClient | undefined;
  try {
    client = await RelayClient.connect(target, { connectTimeout: o.connectTimeout, maxFrame: o.maxEventBytes + 1024, maxPayload: Math.max(1 << 20, o.maxEventBytes * 4) }, o.signal);
    const filter = identityFilter(o.until);
    out.asked = true;
    const r = await readEvents<NostrEvent>(client, {
      filters: [toWire(filter)], maxEvents: IDENTITY_LIMIT, maxBytes: o.maxBytes, deadline: o.timeout, idleTimeout: o.timeout, signal: o.signal,
      check: (raw, bytes) => {
        if (bytes > o.maxEventBytes + 200) return Dropped.of.oversized;
        if (structureError(raw) !== null) return Dropped.of.shape;
        const ev = canonical(raw as NostrEvent);
        return matchFilter(filter, ev) ? ev : Dropped.of.mismatch;
      },
    });
    out.events = r.kept.length;
    // a relay that ignores `limit` ends as a flood after its first three: they are still its answer
    if ((r.end === 'eose' || r.end === 'flood') && r.kept.length > 0) out.answer = hash(r.kept.map((e) => e.id).sort().join(','));
    else errors.push(r.end === 'eose' ? 'nothing older than the probe\'s second' : `probe ${r.end}${r.reason ? `: ${r.reason.slice(0, 100)}` : ''}`);
  } catch (e) {
    errors.push(`connect: ${(e as Error).message}`);
  } finally {
    client?.close();
  }
  if (errors.length) out.error = errors.join('; ').slice(0, 300);
  return out;
}
