// NIP-50 probe: a search on kind 0 for a word taken from a profile the relay served just before
// (search-word.ts) must be answered with events that (mostly) contain the word (or EOSE when there
// are none), and a search for a nonsense word with no events — a relay that ignores `search`
// answers both with whatever kind 0 it holds. CLOSED is a refusal. Three small REQs on the probes'
// connection: the profiles, the word, the nonsense word (only after matching events).
import type { RelayClient } from '../../remote/client.js';
import { ask, whole, type Step } from './ask.js';
import { FALLBACK_WORD, matchesWord, searchWordFrom } from './search-word.js';
import type { SearchProbe } from './types.js';

const LIMIT = 5;

export async function probeSearch(client: RelayClient, o: Step): Promise<SearchProbe> {
  // the relay's newest profiles: a word of theirs is one it holds a match for. A relay that does not
  // serve them (refused, silent, none held) is still asked, with the fallback word: a refusal of
  // `search` is an answer whatever the word
  const profiles = await ask(client, [{ kinds: [0], limit: LIMIT }], { ...o, maxEvents: LIMIT });
  if (profiles.end === 'aborted') return { outcome: 'skipped' };
  const taken = searchWordFrom(profiles.events);
  const word = taken ?? FALLBACK_WORD;
  const from = { word, wordFrom: taken ? 'profile' : 'fallback' } as const;
  const a = await ask(client, [{ kinds: [0], search: word, limit: LIMIT }], { ...o, maxEvents: LIMIT });
  if (a.end === 'aborted') return { outcome: 'skipped', ...from };
  if (a.end === 'silent') return { outcome: 'silent', ...from };
  if (a.end === 'closed') return { outcome: 'refused', detail: a.reason ?? '', ms: whole(a.ms), ...from };
  const ms = whole(a.ms);
  if (a.extra > 0) return { outcome: 'wrong', detail: `more than limit ${LIMIT} events`, ms, ...from };
  // most must contain the word (a relay may match a stem, a tag or a field it indexes apart): a
  // relay that ignores `search` answers with its newest profiles, most of which do not
  const bad = a.events.filter((e) => !matchesWord(e, word)).length;
  if (bad * 2 > a.events.length) return { outcome: 'wrong', detail: `${bad} of ${a.events.length} events do not contain "${word}"`, ms, ...from };
  // none, though the word is from a profile it served: its index may skip that field or that
  // profile, or cut words otherwise — no verdict either way
  if (a.events.length === 0) return { outcome: 'empty', ms, ...from };
  // matching events: make sure `search` was not ignored by a relay whose newest profiles all contain the word
  const nonsense = `qzx${Math.random().toString(36).slice(2, 10)}vjk`;
  const b = await ask(client, [{ kinds: [0], search: nonsense, limit: 1 }], { ...o, maxEvents: 1 });
  if (b.end === 'aborted') return { outcome: 'skipped', ...from };
  if (b.end === 'eose' && b.events.length > 0) return { outcome: 'wrong', detail: 'a nonsense word was answered with events: search ignored', ms, ...from };
  return { outcome: 'served', ms, ...from };
}
