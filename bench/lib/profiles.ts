// Generated kind 0 profiles for the search benchmark and the search tests: names in several
// scripts (Latin with and without accents, Cyrillic, Greek, Japanese, Chinese, Korean, Arabic,
// Thai), written in the styles people use (Alice Smith, alice_smith, ALICE, さとし), nip05 and lud16
// at a handful of domains, and short abouts. Deterministic: profile i of seed s is always the same.
import { prng } from './events.js';

export { prng };

export interface Profile {
  name?: string;
  display_name?: string;
  nip05?: string;
  lud16?: string;
  about?: string;
}

export const FIRST_NAMES = [
  'alice', 'alicia', 'ali', 'alina', 'bob', 'bobby', 'carol', 'caroline', 'dave', 'david', 'eve', 'evelyn', 'frank', 'grace',
  'heidi', 'ivan', 'judy', 'mallory', 'maria', 'marie', 'mario', 'martin', 'oscar', 'peggy', 'sam', 'samantha', 'satoshi',
  'trent', 'victor', 'walter', 'wendy', 'jack', 'jake', 'will', 'william', 'fiatjaf', 'odell', 'gigi', 'lyn', 'preston',
  'José', 'Zoë', 'François', 'Björk', 'Łukasz', 'Øyvind', 'Renée', 'Ångström', 'Müller', 'Chloé', 'Señor', 'Søren', 'İsmail',
  'Иван', 'Мария', 'Алёна', 'Дмитрий', 'Σωκράτης', 'Ελένη',
  'さとし', 'たかし', 'ゆうこ', 'サトシ', 'ナカモト', '山田', '太郎', '花子', '王小明', '李华', '张伟',
  '김민수', '이지은', 'محمد', 'فاطمة', 'สมชาย',
];

export const SURNAMES = [
  'smith', 'jones', 'nakamoto', 'dorsey', 'back', 'finney', 'szabo', 'lopez', 'garcía', 'straße', 'schröder', 'dubois',
  'novák', 'kowalski', 'petrov', 'иванов', 'παπαδόπουλος', '田中', '鈴木', 'やまもと', '陈', 'park', 'hassan',
];

export const DOMAINS = ['example.com', 'nostrplebs.com', 'iris.to', 'primal.net', 'snort.social', 'nostr.band', 'zaps.lol', 'bitcoiner.chat'];
const LN_DOMAINS = ['getalby.com', 'walletofsatoshi.com', 'stacker.news'];

export const ABOUT_WORDS = [
  'bitcoin', 'nostr', 'developer', 'artist', 'music', 'coffee', 'café', 'photography', 'runner', 'privacy', 'freedom',
  'plebs', 'zaps', 'maximalist', 'builder', 'writer', 'designer', 'teacher', 'hodl', 'ビットコイン', '開発者', '音楽', 'кофе',
  'музыка', 'φωτογραφία', 'naïve', 'über', 'résumé',
];

const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
const cap = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);
const ascii = (s: string): boolean => /^[a-z]+$/i.test(s);

/** Profile i of a seed. `unique` adds a number to names and handles so that 100,000 profiles are not all alike. */
export function profile(seed: number, i: number, unique = false): Profile {
  const r = prng(seed * 1_000_003 + i);
  const first = pick(r, FIRST_NAMES);
  const last = pick(r, SURNAMES);
  const n = unique ? String(i) : '';
  const p: Profile = {};
  const style = Math.floor(r() * 6);
  const name =
    style === 0 ? first
    : style === 1 ? `${cap(first)} ${cap(last)}`
    : style === 2 ? `${first}_${last}${n}`
    : style === 3 ? first.toUpperCase()
    : style === 4 ? `${first}${n}`
    : `${cap(first)}`;
  if (r() < 0.9) p.name = name;
  if (r() < 0.6) p.display_name = r() < 0.5 ? `${cap(first)} ${cap(last)}` : first;
  const handle = ascii(first) ? `${first.toLowerCase()}${r() < 0.5 ? '' : last.replace(/[^a-z]/g, '')}${n}` : `user${i}`;
  if (r() < 0.6) p.nip05 = r() < 0.1 ? `_@${handle}.${pick(r, DOMAINS)}` : `${handle}@${pick(r, DOMAINS)}`;
  if (r() < 0.4) p.lud16 = `${handle}@${pick(r, LN_DOMAINS)}`;
  if (r() < 0.7) {
    const words: string[] = [];
    const len = 3 + Math.floor(r() * 12);
    for (let k = 0; k < len; k++) words.push(r() < 0.15 ? pick(r, FIRST_NAMES) : pick(r, ABOUT_WORDS));
    p.about = words.join(' ');
  }
  return p;
}
