// NIP-50 text handling shared by the index, the query parser and live matching: how text is
// folded (case, accents, compatibility forms) and cut into the terms that are looked up. The
// store indexes exactly what these functions return and the live matcher compares exactly the
// same, so a stored search and a live subscription cannot disagree. Pure: no I/O.

/** Longest word, whole field or query text kept (UTF-16 units); longer ones are cut. */
export const MAX_TERM_CHARS = 64;

/**
 * Combining marks that are accents: Latin/Greek/Cyrillic diacritics, variation selectors, Hebrew
 * points, Arabic harakat. Marks that are letters' vowels (Indic, Thai) or kana voicing (U+3099/309A)
 * stay: stripping them would merge different words, not spellings of one.
 */
// (`v` flag for the set intersection; built with RegExp because TypeScript's ES2022 target rejects the literal)
const ACCENTS = new RegExp('[[\\u0300-\\u036f\\u1ab0-\\u1aff\\u1dc0-\\u1dff\\u20d0-\\u20ff\\ufe00-\\ufe0f\\ufe20-\\ufe2f\\u0591-\\u05c7\\u0610-\\u061a\\u064b-\\u065f\\u0670\\u06d6-\\u06ed]&&\\p{M}]', 'gv');
/** control and format characters (zero-width joiners, bidi marks, soft hyphens) */
const INVISIBLE = /[\p{Cc}\p{Cf}]/gu;
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/**
 * Case- and accent-insensitive form: full case folding (upper then lower, so ß -> ss; final sigma
 * -> sigma), NFKD (compatibility forms: full-width Latin, half-width kana, ligatures),
 * accents removed, invisible characters removed, then NFC so what is left (kana with voicing
 * marks, Hangul syllables) is composed again.
 */
export function fold(s: string): string {
  if (PRINTABLE_ASCII.test(s)) return s.toLowerCase();
  // toLowerCase writes a word-final sigma as ς: fold it like the others, so "Σ" at the end of a
  // typed prefix and in the middle of a stored word compare equal
  return s.toUpperCase().toLowerCase().replace(/ς/g, 'σ').normalize('NFKD').replace(ACCENTS, '').replace(INVISIBLE, '').normalize('NFC');
}

/** Cuts to at most `n` UTF-16 units without splitting a surrogate pair. */
export function truncate(s: string, n: number): string {
  if (s.length <= n) return s;
  const c = s.charCodeAt(n - 1);
  return s.slice(0, c >= 0xd800 && c <= 0xdbff ? n - 1 : n);
}

/** A whole field (name, nip05) or a whole query as compared for exact and starts-with matches. */
export function foldField(s: string): string {
  return truncate(fold(s).replace(/\s+/gu, ' ').trim(), MAX_TERM_CHARS);
}

/**
 * Scripts written without spaces between words: a run of them is kept whole and matched as a
 * substring (indexed as character bigrams), because a word segmenter's guess at a boundary inside
 * a name (さと|し) would hide it from a search for the whole name.
 */
const UNSPACED = /(?:[\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}\p{sc=Thai}\p{sc=Lao}\p{sc=Khmer}\p{sc=Myanmar}\u30fc]\p{M}*)+/gu;
const UNSPACED_START = /^[\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}\p{sc=Thai}\p{sc=Lao}\p{sc=Khmer}\p{sc=Myanmar}\u30fc]/u;
/** what separates the parts of one segment: anything but letters, digits and their marks */
const NON_WORD = /[^\p{L}\p{N}\p{M}]+/u;

const segmenter = new Intl.Segmenter(undefined, { granularity: 'word' });

/** A run of an unspaced script (matched as a substring) rather than a word (matched as a prefix). */
export const isRun = (term: string): boolean => UNSPACED_START.test(term);

/**
 * The terms of folded text, in order of appearance, each once: words at Unicode word boundaries
 * (Intl.Segmenter), split again at inner punctuation (alice_smith, jack.dorsey, o'brien -> their
 * parts), and runs of unspaced scripts whole. With `joined`, a segment with inner punctuation also
 * gives its parts glued together (alicesmith, obrien), so both spellings find it; documents are
 * tokenised with it, queries without (their parts must each match).
 */
export function terms(folded: string, joined: boolean): string[] {
  const out = new Set<string>();
  const words = folded.replace(UNSPACED, (run) => {
    out.add(truncate(run, MAX_TERM_CHARS * 8));
    return ' ';
  });
  if (/[\p{L}\p{N}]/u.test(words)) {
    for (const seg of segmenter.segment(words)) {
      if (!seg.isWordLike) continue;
      const parts = seg.segment.split(NON_WORD).filter((p) => p.length > 0);
      for (const p of parts) out.add(truncate(p, MAX_TERM_CHARS));
      if (joined && parts.length > 1) out.add(truncate(parts.join(''), MAX_TERM_CHARS));
    }
  }
  return [...out];
}

/**
 * Index keys of one term: a word is its own key (looked up by prefix); a run gives its character
 * bigrams. A document's run also gives its last character, so that every character of the run
 * starts some key and a one-character query (its own key) still finds it by prefix.
 */
export function termKeys(term: string, query = false): string[] {
  if (!isRun(term)) return [term];
  const cps = Array.from(term);
  if (cps.length === 1) return cps;
  const keys = new Set<string>();
  for (let i = 0; i + 1 < cps.length; i++) keys.add(cps[i] + cps[i + 1]);
  if (!query) keys.add(cps[cps.length - 1]);
  return [...keys];
}

/** Whether a document term satisfies a query term: words by prefix, runs as a substring. */
export const termMatches = (docTerm: string, queryTerm: string, run: boolean): boolean =>
  run ? docTerm.includes(queryTerm) : docTerm.startsWith(queryTerm);

/** The domain of a NIP-05 identifier (name@domain; a bare domain means _@domain), folded; '' if none. */
export function nip05Parts(nip05: string): { local: string; domain: string } {
  const s = foldField(nip05).replace(/\s/g, '');
  const at = s.lastIndexOf('@');
  if (at < 0) return { local: '', domain: s.includes('.') ? normDomain(s) : '' };
  return { local: s.slice(0, at), domain: normDomain(s.slice(at + 1)) };
}

export const normDomain = (d: string): string => fold(d).trim().replace(/\.+$/, '');
