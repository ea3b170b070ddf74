// NIP-50 probe: a search for a common word on kind 0 must be answered with events that (mostly)
// contain the word (or EOSE when there are none), and a search for a nonsense word with no events — a relay that
// ignores `search` answers both with whatever kind 0 it holds. CLOSED is a refusal.
import type { RelayClient } from '../../remote/client.js';
import { ask, whole, type Step } from './ask.js';
import type { NipProbe } from './types.js';

/** The word searched: the commonest in kind 0 profiles ("nostr" in names, abouts, nip05 domains). */
export const SEARCH_WORD = 'nostr';
const LIMIT = 5;

/** The event is a kind 0 whose content (or a tag) contains the word, case-insensitively. */
export function matchesWord(ev: unknown, word: string): boolean {
  if (typeof ev !== 'object' || ev === null) return false;
  const e = ev as { kind?: unknown; content?: unknown; tags?: unknown };
  if (e.kind !== 0) return false;
  const w = word.toLowerCase();
  if (typeof e.content === 'string' && e.content.toLowerCase().includes(w)) return true;
  return Array.isArray(e.tags) && e.tags.some((t) => Array.isArray(t) && t.some((x) => typeof x === 'string' && x.toLowerCase().includes(w)));
}

export async function probeSearch(client: RelayClient, o: Step): Promise<NipProbe> {
  const a = await ask(client, [{ kinds: [0], search: SEARCH_WORD, limit: LIMIT }], { ...o, maxEvents: LIMIT });
  if (a.end === 'aborted') return { outcome: 'skipped' };
  if (a.end === 'silent') return { outcome: 'silent' };
  if (a.end === 'closed') return { outcome: 'refused', detail: a.reason ?? '', ms: whole(a.ms) };
  const ms = whole(a.ms);
  if (a.extra > 0) return { outcome: 'wrong', detail: `more than limit ${LIMIT} events`, ms };
  // most must contain the word (a relay may match a stem, a tag or a field it indexes apart): a
  // relay that ignores `search` answers with its newest profiles, most of which do not
  const bad = a.events.filter((e) => !matchesWord(e, SEARCH_WORD)).length;
  if (bad * 2 > a.events.length) return { outcome: 'wrong', detail: `${bad} of ${a.events.length} events do not contain "${SEARCH_WORD}"`, ms };
  if (a.events.length === 0) return { outcome: 'empty', ms };
  // matching events: make sure `search` was not ignored by a relay whose newest profiles all say "nostr"
  const nonsense = `qzx${Math.random().toString(36).slice(2, 10)}vjk`;
  const b = await ask(client, [{ kinds: [0], search: nonsense, limit: 1 }], { ...o, maxEvents: 1 });
  if (b.end === 'aborted') return { outcome: 'skipped' };
  if (b.end === 'eose' && b.events.length > 0) return { outcome: 'wrong', detail: 'a nonsense word was answered with events: search ignored', ms };
  return { outcome: 'served', ms };
}
