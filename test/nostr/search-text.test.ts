// The pure NIP-50 text code: folding, terms, query parsing, what a profile makes searchable and
// how a query ranks against it (src/nostr/search*.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { asciiWords, fold, foldField, icuWords, terms, termKeys, wordsOf } from '../../src/nostr/search-text.js';
import { prng as rng } from '../../bench/lib/profiles.js';
import { encodeDoc, parseSearch, searchDoc, tierOf, TIER, matchSearch, MAX_KEYS } from '../../src/nostr/search.js';
import { FilterError, parseFilter, matchFilter, toWire } from '../../src/nostr/filter.js';
import type { NostrEvent } from '../../src/nostr/event.js';

const profile = (p: object) => searchDoc(0, JSON.stringify(p))!;
const tier = (q: string, p: object) => tierOf(parseSearch(q), encodeDoc(profile(p)));

test('fold: case, accents, compatibility forms; kana voicing and Indic vowels kept', () => {
  assert.equal(fold('ZOË Ångström'), 'zoe angstrom');
  assert.equal(fold('Straße'), 'strasse');
  assert.equal(fold('ΣΊΣΥΦΟΣ'), 'σισυφοσ'); // final sigma folds like the others
  assert.equal(fold('İstanbul'), 'istanbul');
  assert.equal(fold('ａｌｉｃｅ'), 'alice'); // full-width
  assert.equal(fold('ｻﾄｼ'), 'サトシ'); // half-width kana
  assert.equal(fold('がぎ'), 'がぎ'); // voicing marks are not accents
  assert.equal(fold('कि'), 'कि');
  assert.equal(fold('a\u200db\u00adc'), 'abc'); // invisible characters
  assert.equal(fold('Алёна'), 'алена');
  assert.equal(foldField('  Alice \t Smith '), 'alice smith');
});

test('terms: word boundaries, inner punctuation, runs of unspaced scripts', () => {
  assert.deepEqual(terms('alice_smith bob@example.com', true), ['alice', 'smith', 'alicesmith', 'bob', 'example', 'com', 'examplecom']);
  assert.deepEqual(terms("o'brien", false), ['o', 'brien']);
  assert.deepEqual(terms('さとしくんは東京 sam', true), ['さとしくんは東京', 'sam']);
  assert.deepEqual(terms('สมชาย ok', true), ['สมชาย', 'ok']);
  assert.deepEqual(terms('김민수 이지은', true), ['김민수', '이지은']); // Korean is written with spaces: words
  assert.deepEqual(termKeys('さとし'), ['さと', 'とし', 'し']);
  assert.deepEqual(termKeys('さとし', true), ['さと', 'とし']);
  assert.deepEqual(termKeys('alice'), ['alice']);
});

test('the ASCII word splitter agrees with Intl.Segmenter', () => {
  const alpha = "abcxyz0189_.:',;@-/# \t!?\"()[]{}&*+=<>|~`$%^";
  const r = rng(11);
  for (let i = 0; i < 20000; i++) {
    let s = '';
    for (let k = 1 + Math.floor(r() * 12); k > 0; k--) s += alpha[Math.floor(r() * alpha.length)];
    // ICU also calls a run of underscores a word; it has no letters or digits, so no terms either way
    assert.deepEqual([...asciiWords(s)], [...icuWords(s)].filter((w) => /[a-z0-9]/.test(w)), JSON.stringify(s));
  }
});

test('words of mixed scripts: the fast paths agree with Intl.Segmenter', () => {
  const alpha = ['a', 'z', '0', '9', '_', '.', ':', "'", ',', '-', '@', ' ', ' ', 'é', 'ж', 'λ', 'ש', 'ا', '한', 'क', 'ि', '½', '²', '&', 'ǅ', 'ʼ', '·', '٣'];
  const r = rng(12);
  for (let i = 0; i < 20000; i++) {
    let s = '';
    for (let k = 1 + Math.floor(r() * 14); k > 0; k--) s += alpha[Math.floor(r() * alpha.length)];
    const words = (xs: Iterable<string>) => [...xs].filter((w) => /[\p{L}\p{N}]/u.test(w));
    assert.deepEqual(words(wordsOf(s)), words(icuWords(s)), JSON.stringify(s));
  }
});

test('terms of plain words take a fast path that gives what segmenting gives', () => {
  // the reference: every word-like segment (Intl.Segmenter), split at inner punctuation, the parts
  // joined too when there are several (terms' general path, written out)
  const reference = (s: string, joined: boolean): string[] => {
    const out = new Set<string>();
    for (const seg of icuWords(s)) {
      const parts = seg.split(/[^\p{L}\p{N}\p{M}]+/u).filter((p) => p.length > 0);
      for (const p of parts) out.add(p.slice(0, 64));
      if (joined && parts.length > 1) out.add(parts.join('').slice(0, 64));
    }
    return [...out];
  };
  const plain = 'abcxyz0189    \t\n';
  const mixed = plain + "_.:',@-!";
  const r = rng(13);
  for (let i = 0; i < 20000; i++) {
    const alpha = i % 2 === 0 ? plain : mixed;
    let s = '';
    for (let k = 1 + Math.floor(r() * 40); k > 0; k--) s += alpha[Math.floor(r() * alpha.length)];
    if (i % 97 === 0) s += 'a'.repeat(70); // a word longer than a term
    for (const joined of [true, false]) assert.deepEqual(terms(s, joined), reference(s, joined), JSON.stringify(s));
  }
});

test('parseSearch: extensions, folding, at most 8 terms', () => {
  const q = parseSearch('  Zoë   domain:Example.COM include:spam language:en ');
  assert.equal(q.text, 'zoe');
  assert.equal(q.domain, 'example.com');
  assert.deepEqual(q.terms.map((t) => t.text), ['zoe']);
  assert.equal(parseSearch('a b c d e f g h i j').terms.length, 8);
  assert.deepEqual(parseSearch('nsfw:false').text, '');
  // observer:<pubkey>, hex or npub, kept as lowercase hex; anything else ignored like an unknown extension
  const pk = '7e7e9c42a91bfef19fa929e5fda1b72e0ebc1a4c1141673e2794234d86addf4e';
  assert.equal(parseSearch(`jack observer:${pk.toUpperCase()}`).observer, pk);
  assert.equal(parseSearch('jack observer:npub10elfcs4fr0l0r8af98jlmgdh9c8tcxjvz9qkw038js35mp4dma8qzvjptg').observer, pk);
  const bad = parseSearch('jack observer:nobody');
  assert.equal(bad.observer, undefined);
  assert.equal(bad.text, 'jack');
});

test('a profile: names, nip05, lud16 and about are searchable; the rest is not', () => {
  const d = profile({ name: 'Alice', display_name: 'Alice Smith', nip05: 'alice@Example.com', lud16: 'ali@getalby.com', about: 'Bitcoin café', website: 'https://x.example', picture: 'secret' });
  assert.deepEqual(d.fields, ['alice', 'alice smith', 'alice@example.com', 'ali@getalby.com']);
  assert.deepEqual(d.name, ['alice', 'smith']);
  assert.deepEqual(d.body, ['bitcoin', 'cafe']);
  assert.equal(d.domain, 'example.com');
  assert.equal(encodeDoc(d).split('\u001e').length, 4);
  assert.equal(searchDoc(0, 'not json'), null);
  assert.equal(searchDoc(0, '{}'), null);
  assert.equal(searchDoc(0, '[1]'), null);
  assert.deepEqual(searchDoc(1, 'Hello World')!.body, ['hello', 'world']);
  assert.equal(profile({ name: 'x', about: Array.from({ length: 2000 }, (_, i) => `w${i}`).join(' ') }).body.length <= MAX_KEYS, true);
});

test('tiers: exact name or nip05, then names starting with it, then name words, then about', () => {
  const alice = { name: 'Alice', nip05: 'wonder@land.org' };
  assert.equal(tier('alice', alice), TIER.EXACT);
  assert.equal(tier('ALICE', alice), TIER.EXACT);
  assert.equal(tier('wonder@land.org', alice), TIER.EXACT);
  assert.equal(tier('wonder', alice), TIER.EXACT); // nip05 local part
  assert.equal(tier('ali', alice), TIER.FIELD_PREFIX);
  assert.equal(tier('smith', { name: 'Alice Smith' }), TIER.NAME);
  assert.equal(tier('smi ali', { name: 'Alice Smith' }), TIER.NAME); // every word a prefix, any order
  assert.equal(tier('bitcoin', { name: 'Bob', about: 'Bitcoin dev' }), TIER.BODY);
  assert.equal(tier('bob bitcoin', { name: 'Bob', about: 'Bitcoin dev' }), TIER.BODY); // one word in the name, one in about
  assert.equal(tier('bob zzz', { name: 'Bob', about: 'Bitcoin dev' }), -1);
  assert.equal(tier('lice', alice), -1); // prefixes of words, not substrings
  assert.equal(tier('さとし', { display_name: 'さとし' }), TIER.EXACT);
  assert.equal(tier('とし', { display_name: 'やまだ さとし' }), TIER.NAME); // inside a run: a substring
  assert.equal(tier('さとし', { display_name: 'さとう としお' }), -1); // its bigrams, but not the name
  assert.equal(tier('zoe', { name: 'Zoë' }), TIER.EXACT);
  assert.equal(tier('strasse', { name: 'Hans Straße' }), TIER.NAME);
  assert.equal(tier('alena', { name: 'Алёна' }), -1); // no transliteration
  assert.equal(tier('алена', { name: 'Алёна' }), TIER.EXACT);
  assert.equal(tier('alice domain:land.org', alice), TIER.EXACT);
  assert.equal(tier('alice domain:other.org', alice), -1);
  assert.equal(tier('domain:land.org', alice), TIER.EXACT);
  assert.equal(tier('alice_smith', { name: 'alice_smith' }), TIER.EXACT);
  assert.equal(tier('alicesm', { name: 'alice_smith' }), TIER.NAME); // the joined spelling
});

test('filters: search is parsed, checked against the indexed kinds, matched live, written back', () => {
  const f = parseFilter({ search: 'ali' }, { maxFilterValues: 10, maxTagFilters: 2, searchKinds: [0] });
  assert.deepEqual(f.kinds, [0]);
  assert.deepEqual(toWire(f), { kinds: [0], search: 'ali' });
  assert.throws(() => parseFilter({ kinds: [0, 1], search: 'x' }, { maxFilterValues: 10, maxTagFilters: 2, searchKinds: [0] }), (e: Error) => e instanceof FilterError && /covers kind 0 on this relay, not 1/.test(e.message));
  assert.throws(() => parseFilter({ search: 'x' }, { maxFilterValues: 10, maxTagFilters: 2, searchKinds: [] }), /not supported/);
  assert.throws(() => parseFilter({ search: 'x'.repeat(300) }), /longer than 256/);
  const ev = (content: object, kind = 0): NostrEvent => ({ id: 'a'.repeat(64), pubkey: 'b'.repeat(64), created_at: 1, kind, tags: [], content: JSON.stringify(content), sig: 'c'.repeat(128) });
  assert.equal(matchFilter(f, ev({ name: 'Alice' })), true);
  assert.equal(matchFilter(f, ev({ name: 'Bob' })), false);
  assert.equal(matchFilter(f, ev({ name: 'Alice' }, 1)), false); // kinds first
  assert.equal(matchSearch(parseSearch('language:en'), ev({ name: 'Bob' })), true); // nothing to look for
});
