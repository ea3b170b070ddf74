// NIP-50 query strings: "alice", "さとし", "bob domain:example.com". Parsed once when the filter
// is read into plain data (it crosses to the query threads by structured clone). Pure: no I/O.
import { foldField, isRun, normDomain, termKeys, terms } from './search-text.js';
import { parsePubkey } from './keys.js';

/** Longest `search` string accepted (characters); longer ones are refused as invalid. */
export const MAX_SEARCH_CHARS = 256;
/** Terms kept from one query; later ones are dropped (each must match, so fewer only widens). */
export const MAX_QUERY_TERMS = 8;

export interface SearchTerm {
  /** folded word (matched as a prefix of a document word) or run (matched as a substring) */
  text: string;
  run: boolean;
  /** index keys to look it up by (termKeys) */
  keys: string[];
}

export interface SearchQuery {
  /** the string as the client sent it (toWire) */
  raw: string;
  /** the query without extensions, folded as a whole field: compared to names for exact and starts-with */
  text: string;
  terms: SearchTerm[];
  /** `domain:` extension, folded: only profiles whose nip05 is at this domain */
  domain?: string;
  /** `include:spam`: profiles the trust rank would leave out are returned too */
  includeSpam?: boolean;
  /** `observer:<pubkey>` (hex or npub, kept as hex): order by trust as seen from this pubkey (docs/search.md) */
  observer?: string;
  /**
   * The observer's trust, attached by the relay before the scan when it could compute it
   * (trust/readers.ts): store pubkey ids ascending with each one's trust as seen from the observer.
   * Absent: the global rank orders the results.
   */
  reader?: ReaderTrust;
}

/** Trust as seen from one reader (trust/reader-rank.ts), in a form that crosses to the query threads. */
export interface ReaderTrust {
  /** store pubkey ids (store/graph.ts), ascending */
  ids: Uint32Array;
  /** trust of ids[i] as seen from the reader: its followers counted by the reader's trust in each */
  trust: Float32Array;
  /** the most trusted store ids as seen from the reader, best first: search reads their profiles as candidates too */
  top: Uint32Array;
}

/** `key:value` with a plain key: a NIP-50 extension, not text to look for. */
const EXTENSION = /^([a-z][a-z0-9_-]*):(\S+)$/i;

export function parseSearch(raw: string): SearchQuery {
  const text: string[] = [];
  let domain: string | undefined;
  let includeSpam = false;
  let observer: string | undefined;
  for (const token of raw.split(/\s+/u)) {
    if (token === '') continue;
    const ext = EXTENSION.exec(token);
    if (!ext) {
      text.push(token);
      continue;
    }
    // Supported: domain, include:spam, observer. Others (language:, sentiment:, nsfw:, unknown) are
    // ignored (NIP-50), and so is an observer that is not a pubkey.
    const name = ext[1].toLowerCase();
    if (name === 'domain') domain = normDomain(ext[2]);
    else if (name === 'include' && ext[2].toLowerCase() === 'spam') includeSpam = true;
    else if (name === 'observer') observer = parsePubkey(ext[2]) ?? observer;
  }
  const folded = foldField(text.join(' '));
  const q: SearchQuery = { raw, text: folded, terms: [] };
  for (const t of terms(folded, false).slice(0, MAX_QUERY_TERMS)) {
    const run = isRun(t);
    q.terms.push({ text: t, run, keys: termKeys(t, true) });
  }
  if (domain !== undefined && domain !== '') q.domain = domain;
  if (includeSpam) q.includeSpam = true;
  if (observer !== undefined) q.observer = observer;
  return q;
}

/**
 * Whether the query restricts anything. A query of only ignored extensions (or only spaces) looks
 * for nothing in particular: the filter then behaves as if it had no `search` (newest first).
 */
export const isActiveSearch = (q: SearchQuery | undefined): q is SearchQuery => q !== undefined && (q.text !== '' || q.domain !== undefined);
