// The word the NIP-50 probe searches for, and whether an answer contains it. The word comes from a
// profile the probed relay itself served moments before (probes/search.ts): a relay that holds a
// profile holds a match for a word of it, whatever its profiles say — a fixed word ("nostr") left
// relays whose profiles never say it with no verdict. Words are cut and folded the way this relay's
// own search does (src/nostr/search-text.ts), so case and accents do not decide. Pure: no I/O.
import { fold, isRun, wordsOf } from '../../nostr/search-text.js';

/** Searched when the relay served no profile with a usable word: the commonest in kind 0 profiles. */
export const FALLBACK_WORD = 'nostr';

/**
 * A usable word: letters only, 4 to 32 of them. Short words are often dropped as stop words or
 * below a relay's minimum; digits and inner punctuation are cut differently by every engine; runs
 * of unspaced scripts (Japanese, Chinese) are not words to most relays' indexes.
 */
const WORD = /^\p{L}{4,32}$/u;
/** Characters of a profile's content read (a profile may be large; its name and about come first). */
const MAX_CONTENT = 16 * 1024;

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** The name fields and the about of a kind 0 event, or null when it is not a readable profile. */
function profileTexts(ev: unknown): { names: string[]; about: string } | null {
  if (typeof ev !== 'object' || ev === null) return null;
  const e = ev as { kind?: unknown; content?: unknown };
  if (e.kind !== 0 || typeof e.content !== 'string' || e.content.length > MAX_CONTENT) return null;
  let c: unknown;
  try { c = JSON.parse(e.content); } catch { return null; }
  if (typeof c !== 'object' || c === null || Array.isArray(c)) return null;
  const p = c as Record<string, unknown>;
  return { names: [str(p.name), str(p.display_name), str(p.displayName)], about: str(p.about) };
}

/** The longest usable word of a text (the first of equal length): long words are distinctive and rarely stop words. */
function longestWord(text: string): string | null {
  let best: string | null = null;
  for (const w of wordsOf(fold(text))) if (WORD.test(w) && !isRun(w) && (best === null || w.length > best.length)) best = w;
  return best;
}

/**
 * The word to search for, from profiles the relay served (newest first): the longest usable word of
 * the first name that has one (names are what every search indexes), else of the first about; null
 * when none has one.
 */
export function searchWordFrom(profiles: readonly unknown[]): string | null {
  const texts = profiles.map(profileTexts).filter((t): t is NonNullable<typeof t> => t !== null);
  for (const text of [...texts.flatMap((t) => t.names), ...texts.map((t) => t.about)]) {
    const w = longestWord(text);
    if (w) return w;
  }
  return null;
}

/**
 * The event is a kind 0 that contains the (folded) word: in its content, in the content's decoded
 * JSON strings (an escaped "Zo\u00eb" is "Zoë"), or in a tag.
 */
export function matchesWord(ev: unknown, word: string): boolean {
  if (typeof ev !== 'object' || ev === null) return false;
  const e = ev as { kind?: unknown; content?: unknown; tags?: unknown };
  if (e.kind !== 0) return false;
  const w = fold(word);
  const has = (s: unknown) => typeof s === 'string' && fold(s).includes(w);
  if (has(e.content)) return true;
  if (typeof e.content === 'string' && e.content.length <= MAX_CONTENT && e.content.includes('\\u')) {
    try {
      const c: unknown = JSON.parse(e.content);
      if (typeof c === 'object' && c !== null && Object.values(c).some(has)) return true;
    } catch { /* not JSON: the raw content was read above */ }
  }
  return Array.isArray(e.tags) && e.tags.some((t) => Array.isArray(t) && t.some(has));
}
