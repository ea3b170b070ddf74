// A brute-force NIP-50 matcher for the tests, written from the rules in docs/search.md rather than
// from the index code: it reads each profile's JSON and decides by plain string operations. Only
// the character folding (case, accents) is shared with the relay; the fold test covers it alone.
import { fold } from '../../src/nostr/search-text.js';
import type { Profile } from '../../bench/lib/profiles.js';

const UNSPACED = /[\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}\p{sc=Thai}\p{sc=Lao}\p{sc=Khmer}\p{sc=Myanmar}\u30fc]+/gu;
const ws = (s: string) => fold(s).replace(/\s+/gu, ' ').trim();

/**
 * Words and runs of unspaced scripts of a text. Words: split at anything but letters and digits;
 * a chunk held together by _ . ' : (the joiners of Unicode word boundaries) also counts glued
 * (alice_smith -> alice, smith, alicesmith); a query's words are its parts only.
 */
export function pieces(s: string, joined = true): { words: string[]; runs: string[] } {
  const f = fold(s);
  const runs = f.match(UNSPACED) ?? [];
  const words: string[] = [];
  // . ' join two letters or two digits, : two letters (UAX #29 WB6/7, WB11/12); _ joins anything
  const text = f.replace(UNSPACED, ' ').replace(/(?<!\p{L})[:]|[:](?!\p{L})|(?<!(\p{L}|\p{N}))[.'’]|[.'’](?!(\p{L}|\p{N}))|(?<=\p{L})[.'’](?=\p{N})|(?<=\p{N})[.'’](?=\p{L})/gu, ' ');
  for (const chunk of text.split(/[^\p{L}\p{N}\p{M}_.'’:]+/u)) {
    const parts = chunk.split(/[_.'’:]+/u).filter(Boolean);
    words.push(...parts);
    if (joined && parts.length > 1) words.push(parts.join(''));
  }
  return { words, runs };
}

function domainOf(nip05: string): { local: string; domain: string } {
  const s = ws(nip05).replace(/\s/g, '');
  const at = s.lastIndexOf('@');
  if (at < 0) return { local: '', domain: s.includes('.') ? s.replace(/\.+$/, '') : '' };
  return { local: s.slice(0, at), domain: s.slice(at + 1).replace(/\.+$/, '') };
}

interface Prepared {
  local: string;
  domain: string;
  fields: string[];
  names: { words: string[]; runs: string[] };
  body: { words: string[]; runs: string[] };
}

/** What the matcher reads of a profile, worked out once per profile (the tests ask many queries). */
const prepared = new WeakMap<Profile, Prepared>();
function prepare(p: Profile): Prepared {
  let x = prepared.get(p);
  if (!x) {
    const { local, domain } = domainOf(p.nip05 ?? '');
    x = {
      local,
      domain,
      fields: [p.name, p.display_name, p.nip05, local === '_' ? '' : local, p.lud16].filter((v): v is string => !!v).map(ws),
      names: pieces([p.name ?? '', p.display_name ?? '', local === '_' ? '' : local].join(' \n ')),
      body: pieces(p.about ?? ''),
    };
    prepared.set(p, x);
  }
  return x;
}

/** The tier (0 exact, 1 name starts with it, 2 all words in names, 3 somewhere) or -1. */
export function bruteTier(query: string, p: Profile): number {
  let domain: string | undefined;
  const text: string[] = [];
  for (const tok of query.split(/\s+/u).filter(Boolean)) {
    const m = /^([a-z][a-z0-9_-]*):(\S+)$/i.exec(tok);
    if (!m) text.push(tok);
    else if (m[1].toLowerCase() === 'domain') domain = fold(m[2]).replace(/\.+$/, '');
  }
  const x = prepare(p);
  if (domain !== undefined && domain !== x.domain) return -1;
  const q = ws(text.join(' '));
  if (q === '') return 0;
  if (x.fields.includes(q)) return 0;
  if (x.fields.some((f) => f.startsWith(q))) return 1;
  const qp = pieces(q, false);
  if (qp.words.length + qp.runs.length === 0) return -1;
  const inText = (t: { words: string[]; runs: string[] }, w: string, run: boolean) => (run ? t.runs.some((r) => r.includes(w)) : t.words.some((v) => v.startsWith(w)));
  let allNames = true;
  for (const [list, run] of [[qp.words, false], [qp.runs, true]] as const) {
    for (const w of list) {
      if (inText(x.names, w, run)) continue;
      allNames = false;
      if (!inText(x.body, w, run)) return -1;
    }
  }
  return allNames ? 2 : 3;
}
