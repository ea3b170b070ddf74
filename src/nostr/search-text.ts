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

/** Word-like segments at Unicode word boundaries (UAX #29, ICU's rules). */
export function* icuWords(text: string): Generator<string> {
  for (const seg of segmenter.segment(text)) if (seg.isWordLike) yield seg.segment;
}

/**
 * Lower-case ASCII letters and digits only: one word and one term, the common case (a profile's
 * words). The splitting below gives it back whole; this skips the generators and regular
 * expressions that were most of the cost of indexing a profile (docs/storage.md, twenty-seventh session).
 */
const PLAIN_WORD = /^[a-z0-9]+$/;
/** Folded text of plain words and whitespace only (terms' fast path: no segmenting at all). */
const PLAIN_TEXT = /^[a-z0-9\s]*$/;

/**
 * The same segments for printable ASCII (after folding: no capitals), without ICU: Intl.Segmenter
 * was 58% of the cost of indexing a profile. UAX #29 restricted to ASCII: letters, digits and _
 * hold together; : . ' join two letters; . , ; ' join two digits. The search tests check it
 * against icuWords on random strings.
 */
const ASCII_WORD = /[a-z0-9_]+(?:(?:(?<=[a-z])[:.'](?=[a-z])|(?<=[0-9])[.,;'](?=[0-9]))[a-z0-9_]+)*/g;
export function* asciiWords(text: string): Generator<string> {
  for (const m of text.matchAll(ASCII_WORD)) if (/[a-z0-9]/.test(m[0])) yield m[0];
}

/**
 * Latin, Greek and Cyrillic letters and decimal digits, then marks too: one word by ICU's rules (not
 * every script: ICU splits, for one, Hebrew letters from Hangul, so the others go to the segmenter.)
 */
const ONE_WORD = /^[\p{sc=Latin}\p{sc=Greek}\p{sc=Cyrillic}\p{Nd}][\p{sc=Latin}\p{sc=Greek}\p{sc=Cyrillic}\p{M}\p{Nd}]*$/u;

/**
 * Word-like segments of text without unspaced scripts. Word boundaries fall at every space, so
 * each space-separated chunk is segmented alone, and the common chunks take a fast path: printable
 * ASCII (asciiWords) and plain words (one segment); the rest (punctuation inside non-ASCII) goes
 * to Intl.Segmenter.
 */
export function* wordsOf(text: string): Generator<string> {
  for (const chunk of text.split(/\s+/u)) {
    if (chunk === '') continue;
    if (PLAIN_WORD.test(chunk)) yield chunk; // what asciiWords gives it, without its regular expression's iterator
    else if (PRINTABLE_ASCII.test(chunk)) yield* asciiWords(chunk);
    else if (ONE_WORD.test(chunk)) yield chunk;
    else yield* icuWords(chunk);
  }
}

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
  if (PLAIN_TEXT.test(words)) {
    for (const w of words.split(/\s+/u)) if (w !== '') out.add(truncate(w, MAX_TERM_CHARS));
  } else if (/[\p{L}\p{N}]/u.test(words)) {
    for (const seg of wordsOf(words)) {
      if (PLAIN_WORD.test(seg)) {
        out.add(truncate(seg, MAX_TERM_CHARS));
        continue;
      }
      const parts = seg.split(NON_WORD).filter((p) => p.length > 0);
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

/** The domain of a NIP-05 identifier (name@domain; a bare domain means _@domain), folded; '' if none. */
export function nip05Parts(nip05: string): { local: string; domain: string } {
  const s = foldField(nip05).replace(/\s/g, '');
  const at = s.lastIndexOf('@');
  if (at < 0) return { local: '', domain: s.includes('.') ? normDomain(s) : '' };
  return { local: s.slice(0, at), domain: normDomain(s.slice(at + 1)) };
}

export const normDomain = (d: string): string => fold(d).trim().replace(/\.+$/, '');
