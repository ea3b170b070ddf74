// NIP-50: what of an event is searchable (its SearchDoc), whether and how well a query matches it
// (its tier), and the index keys the store files it under. The store keeps each indexed event's
// SearchDoc in its encoded form and scores candidates with tierOf; live subscriptions score new
// events with the same function on the same form, so both answer alike. Pure: no I/O.
import type { NostrEvent } from './event.js';
import type { SearchQuery, SearchTerm } from './search-query.js';
import { fold, foldField, MAX_TERM_CHARS, nip05Parts, termKeys, terms, truncate } from './search-text.js';

export { isActiveSearch, parseSearch, type SearchQuery, type SearchTerm } from './search-query.js';

/** The searchable part of one event, folded (search-text.ts). */
export interface SearchDoc {
  /** whole fields compared with the whole query: name, display_name, nip05, its local part, lud16 */
  fields: string[];
  /** terms of the names: name, display_name, nip05 local part */
  name: string[];
  /** terms of the rest: about (or a non-profile event's content) */
  body: string[];
  /** nip05 domain ('' when none) */
  domain: string;
}

/** Characters of about/content indexed; the rest of a long text is not searchable. */
export const MAX_BODY_CHARS = 500;
/** Index keys per event at most (whole fields, name and body keys): bounds the write cost of one event. */
export const MAX_KEYS = 256;

/**
 * Match tiers, best first. Results are returned in tier order (NIP-50: relevance, not created_at).
 * EXACT: the query is a whole name, display_name, nip05 (or its local part) or lud16.
 * FIELD_PREFIX: one of those starts with the query (typeahead).
 * NAME: every query term matches words of the names.
 * BODY: every query term matches somewhere, some only in about/content.
 */
export const TIER = { EXACT: 0, FIELD_PREFIX: 1, NAME: 2, BODY: 3 } as const;
export const TIERS = 4;

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/**
 * The SearchDoc of an event of an indexed kind, or null when it has nothing searchable (a kind 0
 * whose content is not a JSON object, an empty content). Kind 0: name, display_name (or the older
 * displayName), nip05, lud16, about from the content JSON; other kinds: the content.
 */
export function searchDoc(kind: number, content: string): SearchDoc | null {
  const doc: SearchDoc = { fields: [], name: [], body: [], domain: '' };
  let budget = MAX_KEYS;
  const addField = (s: string) => {
    const f = foldField(s);
    if (f !== '' && budget > 0 && !doc.fields.includes(f)) {
      doc.fields.push(f);
      budget--;
    }
  };
  // Terms are added while their keys fit the budget, so the SearchDoc holds exactly what is indexed.
  const addTerms = (into: string[], text: string, max: number) => {
    for (const t of terms(fold(truncate(text, max)), true)) {
      if (into.includes(t)) continue;
      const n = termKeys(t).length;
      if (n > budget) break;
      into.push(t);
      budget -= n;
    }
  };
  if (kind === 0) {
    let o: unknown;
    try {
      o = JSON.parse(content);
    } catch {
      return null;
    }
    if (typeof o !== 'object' || o === null || Array.isArray(o)) return null;
    const p = o as Record<string, unknown>;
    const name = str(p.name);
    const display = str(p.display_name) || str(p.displayName);
    const nip05 = str(p.nip05);
    const lud16 = str(p.lud16);
    const { local, domain } = nip05Parts(nip05);
    const localName = local === '_' ? '' : local;
    for (const f of [name, display, nip05, localName, lud16]) addField(f);
    for (const f of [name, display, localName]) addTerms(doc.name, f, MAX_TERM_CHARS);
    // lud16 and the nip05 domain only as whole fields (and domain:): their words ("getalby", "com")
    // would match a large share of all profiles and cost index entries on every write
    addTerms(doc.body, str(p.about), MAX_BODY_CHARS);
    doc.domain = domain;
  } else {
    addTerms(doc.body, content, MAX_BODY_CHARS);
  }
  return doc.fields.length + doc.name.length + doc.body.length > 0 || doc.domain !== '' ? doc : null;
}

/** Index key classes: whole fields, name terms, body terms, nip05 domain. */
export const KEY_CLASS = { FIELD: 0, NAME: 1, BODY: 2, DOMAIN: 3 } as const;

/** Every (class, key) the store files a SearchDoc under, each once. */
export function docKeys(doc: SearchDoc, visit: (cls: number, key: string) => void): void {
  for (const f of doc.fields) visit(KEY_CLASS.FIELD, f);
  const each = (cls: number, ts: string[]) => {
    const seen = new Set<string>();
    for (const t of ts) {
      for (const k of termKeys(t)) {
        if (seen.has(k)) continue;
        seen.add(k);
        visit(cls, k);
      }
    }
  };
  each(KEY_CLASS.NAME, doc.name);
  each(KEY_CLASS.BODY, doc.body);
  if (doc.domain !== '') visit(KEY_CLASS.DOMAIN, doc.domain);
}

// ---- the stored form, and scoring on it ----
// A SearchDoc is kept (and scored) as one string: four sections split by RS, each list written as
// US item US item ... US. "Some name term starts with t" is then one indexOf of US+t inside the
// name section, "a field is exactly q" one indexOf of US+q+US: no parsing, no arrays, per candidate.
// Folded text holds no control characters, so neither separator can occur inside an item.

const RS = '\u001e';
const US = '\u001f';

/** The stored form of a SearchDoc (what tierOf scores). */
export type EncodedDoc = string;

export function encodeDoc(d: SearchDoc): EncodedDoc {
  const list = (xs: string[]) => (xs.length > 0 ? US + xs.join(US) + US : '');
  return [list(d.fields), list(d.name), list(d.body), d.domain].join(RS);
}

/** The whole fields and the name terms of a stored doc (its first two sections), in order. */
export function nameItems(doc: EncodedDoc): string[] {
  const [fields = '', names = ''] = doc.split(RS, 2);
  return (fields + names).split(US).filter((x) => x !== '');
}

/**
 * The whole names of a stored doc: its whole fields without those holding an `@` (the nip05 and
 * lud16 addresses), so name, display_name and the nip05 local part: who the profile says it is.
 */
export function wholeNames(doc: EncodedDoc): string[] {
  const end = doc.indexOf(RS);
  return doc.slice(0, end < 0 ? doc.length : end).split(US).filter((x) => x !== '' && !x.includes('@'));
}

/** Whether `needle` occurs in doc[from, to). */
const within = (doc: string, needle: string, from: number, to: number): boolean => {
  const i = doc.indexOf(needle, from);
  return i >= 0 && i + needle.length <= to;
};

const hasTerm = (doc: string, t: SearchTerm, from: number, to: number): boolean => within(doc, t.run ? t.text : US + t.text, from, to);

/** How well the stored doc matches `q` (TIER), or -1 for no match. A query with no text but a domain matches at EXACT. */
export function tierOf(q: SearchQuery, doc: EncodedDoc): number {
  const a = doc.indexOf(RS);
  const b = doc.indexOf(RS, a + 1);
  const c = doc.indexOf(RS, b + 1);
  if (q.domain !== undefined && (doc.length - c - 1 !== q.domain.length || !doc.endsWith(q.domain))) return -1;
  if (q.text === '') return TIER.EXACT; // domain: only
  if (within(doc, US + q.text, 0, a)) return within(doc, US + q.text + US, 0, a) ? TIER.EXACT : TIER.FIELD_PREFIX;
  if (q.terms.length === 0) return -1;
  let allInName = true;
  for (const t of q.terms) {
    if (hasTerm(doc, t, a + 1, b)) continue;
    allInName = false;
    if (!hasTerm(doc, t, b + 1, c)) return -1;
  }
  return allInName ? TIER.NAME : TIER.BODY;
}

// ---- live matching ----

/** The stored form of an event's SearchDoc, per event object: one event fanned out to many search subscriptions is folded once. */
const docs = new WeakMap<object, EncodedDoc | null>();

export function docOfEvent(ev: Pick<NostrEvent, 'kind' | 'content'>): EncodedDoc | null {
  let d = docs.get(ev);
  if (d === undefined) {
    const sd = searchDoc(ev.kind, ev.content);
    d = sd ? encodeDoc(sd) : null;
    docs.set(ev, d);
  }
  return d;
}

/** Whether an event matches a search query (the filter's kinds are checked by the caller). */
export function matchSearch(q: SearchQuery, ev: Pick<NostrEvent, 'kind' | 'content'>): boolean {
  if (q.text === '' && q.domain === undefined) return true;
  const d = docOfEvent(ev);
  return d !== null && tierOf(q, d) >= 0;
}
