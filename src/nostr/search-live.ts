// NIP-50 for live subscriptions: the keys a search filter is filed under in the live index
// (src/relay/live-index.ts) and the keys a published event's SearchDoc is looked up by, so that an
// event is checked only against the searches that could match it, not against every open search
// (2,000 live searches of one client made each published profile cost 2,000 text matches). Pure:
// no I/O.
//
// The keys follow tierOf exactly, so an event that matches a search always finds it (candidates
// are then confirmed with the full filter):
// - `domain:` must equal the doc's nip05 domain: the search is filed under that domain alone;
// - otherwise it matches when a whole field starts with the query text (key: the text's first
//   KEY_CHARS characters, looked up by every field's first 1..KEY_CHARS characters), or when
//   every term is found in the names or the body, so in particular one chosen term: a word is a
//   prefix of some item (key: its first KEY_CHARS characters, looked up by every item's first
//   1..KEY_CHARS characters), a run of an unspaced script is a substring of some run item (key: its
//   first two UTF-16 units, looked up by every one and two units of every run item).
import type { EncodedDoc, SearchQuery } from './search.js';
import { isRun } from './search-text.js';

/** Characters of a word or field that key it: longer is more selective, and costs a lookup more per doc item. */
export const KEY_CHARS = 4;

const RS = '\u001e';
const US = '\u001f';

const DOMAIN = 'd';
const FIELD = 'f';
const WORD = 'w';
const RUN = 'r';

/** The keys to file an active search query under (an event it matches visits one of them). */
export function searchKeys(q: SearchQuery): string[] {
  if (q.domain !== undefined) return [DOMAIN + q.domain];
  const keys = [FIELD + q.text.slice(0, KEY_CHARS)];
  let best: string | null = null;
  for (const t of q.terms) {
    const k = t.run ? RUN + t.text.slice(0, 2) : WORD + t.text.slice(0, KEY_CHARS);
    if (best === null || k.length > best.length) best = k;
  }
  if (best !== null) keys.push(best);
  return keys;
}

/** Visits every key a stored SearchDoc answers to (some more than once). */
export function docSearchKeys(doc: EncodedDoc, visit: (key: string) => void): void {
  const [fields, names, body, domain] = doc.split(RS);
  if (domain !== '') visit(DOMAIN + domain);
  for (const f of items(fields)) prefixes(FIELD, f, visit);
  for (const section of [names, body]) {
    for (const t of items(section)) {
      if (!isRun(t)) prefixes(WORD, t, visit);
      else for (let i = 0; i < t.length; i++) {
        visit(RUN + t.slice(i, i + 1));
        if (i + 1 < t.length) visit(RUN + t.slice(i, i + 2));
      }
    }
  }
}

const items = (section: string | undefined): string[] => (section ? section.split(US).filter((s) => s !== '') : []);

function prefixes(cls: string, s: string, visit: (key: string) => void): void {
  const n = Math.min(KEY_CHARS, s.length);
  for (let l = 1; l <= n; l++) visit(cls + s.slice(0, l));
}
