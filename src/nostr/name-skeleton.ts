// Name skeletons: the forms under which two profile names count as "the same or near-same name"
// for the impersonation signal of ranked search (docs/search.md, "Impersonators"). An impersonator
// copies a name and changes what a reader does not notice: case and accents (already folded by
// search-text.ts), decorations (emoji, punctuation, spaces), a digit put before or after it
// (ODELL1), digits or letters of other scripts that look like Latin ones (0DELL, Cyrillic а for
// Latin a), a doubled or dropped letter (Odelll), rn for m, I for l. A skeleton drops or maps all of
// that; two names are near-same when they share a skeleton. It is deliberately coarse: it only
// ever marks an account when a far more trusted, older account has the same skeleton (order.ts).
// Pure: no I/O.

/** Letters of other scripts that render like a Latin letter (after folding to lower case). */
const CONFUSABLE: Record<string, string> = {
  // Cyrillic
  а: 'a', в: 'b', е: 'e', ё: 'e', к: 'k', м: 'm', н: 'h', о: 'o', р: 'p', с: 'c', т: 't', у: 'y', х: 'x',
  і: 'i', ї: 'i', ј: 'j', ѕ: 's', ԁ: 'd', ԛ: 'q', ԝ: 'w', ӏ: 'l', һ: 'h', ɡ: 'g',
  // Greek
  α: 'a', β: 'b', ε: 'e', η: 'n', ι: 'i', κ: 'k', ν: 'v', ο: 'o', ρ: 'p', τ: 't', υ: 'u', χ: 'x', ω: 'w', ϲ: 'c',
  // Latin look-alikes
  ı: 'i', ł: 'l', ø: 'o', đ: 'd', ħ: 'h', ŧ: 't', ß: 'ss',
};
/** Digits and signs used as letters (l33t). */
const AS_LETTER: Record<string, string> = { '0': 'o', '1': 'l', '3': 'e', '4': 'a', '5': 's', '7': 't', '8': 'b', '9': 'g', $: 's', '@': 'a', '|': 'l', '!': 'i' };
const LETTER = /\p{L}/u;
/** Skeletons shorter than this say too little to call two accounts namesakes ("ak", "jo"). */
export const MIN_SKELETON = 3;

/** Latin-ish letters only, confusables mapped; digits and signs mapped as letters (`mapDigits`) or dropped. */
function letters(folded: string, mapDigits: boolean): string {
  let out = '';
  for (const ch of folded) {
    const mapped = CONFUSABLE[ch] ?? (mapDigits ? AS_LETTER[ch] : undefined);
    if (mapped !== undefined) out += mapped;
    else if (LETTER.test(ch)) out += ch;
  }
  // I and l look alike in most fonts, as do rn and m, vv and w; a doubled letter is not noticed
  return out.replace(/i/g, 'l').replace(/rn/g, 'm').replace(/vv/g, 'w').replace(/(.)\1+/gu, '$1');
}

/**
 * The skeletons of one folded name (foldField): with digits read as letters (0DELL -> odel) and
 * with digits dropped (ODELL1 -> odel); at most two, each at least MIN_SKELETON letters.
 */
export function nameSkeletons(folded: string): string[] {
  const a = letters(folded, true);
  const b = letters(folded, false);
  const out: string[] = [];
  for (const s of a === b ? [a] : [a, b]) if ([...s].length >= MIN_SKELETON) out.push(s);
  return out;
}
