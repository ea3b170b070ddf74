// The order of ranked search results (store/search/order.ts) and the name skeletons behind the
// impersonation mark (nostr/name-skeleton.ts): trust decides across every tier, a text match only
// tips near-equal trust, about-only matches need far more trust, and an account that repeats a far
// more trusted, older account's name (or a look-alike of it) comes after every unmarked result.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { impersonators, orderCandidates, type Candidate } from '../../src/store/search/order.js';
import { nameSkeletons } from '../../src/nostr/name-skeleton.js';
import { foldField } from '../../src/nostr/search-text.js';
import { TIER } from '../../src/nostr/search.js';

const cand = (o: Partial<Candidate> & { names?: string[] }): Candidate => ({ tier: TIER.NAME, trust: 1, score: 1e-4, seen: 1, createdAt: 1000, ...o, names: (o.names ?? []).map(foldField) });
const order = (cs: Candidate[]) => orderCandidates(cs).order;

test('name skeletons: case, accents, decorations, digits, look-alike letters and doubled letters give the same skeleton', () => {
  const odell = nameSkeletons(foldField('ODELL'));
  assert.deepEqual(odell, ['odel']);
  for (const look of ['odell', 'Odell ⚡️', 'ODELL1', '0DELL', 'Odelll', 'О D Е L L' /* Cyrillic О and Е */, 'ODEIL', 'ödell', '_odell_']) {
    const s = nameSkeletons(foldField(look));
    assert.ok(s.some((x) => odell.includes(x)), `${look}: ${s.join(',')}`);
  }
  assert.ok(nameSkeletons(foldField('Peter McCormack7')).includes(nameSkeletons(foldField('Peter McCormack'))[0]!));
  assert.ok(nameSkeletons(foldField('rnike')).includes(nameSkeletons(foldField('mike'))[0]!));
  // other names stay apart; too short to say anything: none
  assert.notDeepEqual(nameSkeletons(foldField('Odette')), odell);
  assert.deepEqual(nameSkeletons(foldField('ak 👸🏻')), []);
  assert.deepEqual(nameSkeletons(foldField('⚡️⚡️')), []);
});

test('order: trust decides across tiers; the text match tips only near-equal trust; about-only needs ten times the trust', () => {
  // "jeff": an exact name with 58 trusted followers after a name that starts with it with 165
  assert.deepEqual(order([cand({ tier: TIER.EXACT, trust: 58 }), cand({ tier: TIER.FIELD_PREFIX, trust: 165 })]), [1, 0]);
  // near-equal trust: the better match first
  assert.deepEqual(order([cand({ tier: TIER.NAME, trust: 10 }), cand({ tier: TIER.EXACT, trust: 8 })]), [1, 0]);
  // about only: after a name match unless ten times as trusted
  assert.deepEqual(order([cand({ tier: TIER.BODY, trust: 90 }), cand({ tier: TIER.NAME, trust: 10 })]), [1, 0]);
  assert.deepEqual(order([cand({ tier: TIER.BODY, trust: 200 }), cand({ tier: TIER.NAME, trust: 10 })]), [0, 1]);
  // ties on trust and tier: the higher score, then the index's order
  assert.deepEqual(order([cand({ trust: 3, score: 1 }), cand({ trust: 3, score: 2 }), cand({ trust: 3, score: 2 })]), [1, 2, 0]);
  // unranked after every ranked one (even one no trusted pubkey follows), by tier among themselves
  assert.deepEqual(order([cand({ trust: -1, tier: TIER.NAME }), cand({ trust: -1, tier: TIER.EXACT }), cand({ trust: 0, tier: TIER.BODY })]), [2, 1, 0]);
});

test('impersonation mark: same or near-same name, under a tenth of the trust, newer; marked accounts come last', () => {
  const person = cand({ names: ['Peter McCormack'], trust: 147, seen: 10 });
  const fake = cand({ names: ['Peter McCormack'], trust: 12, seen: 500, tier: TIER.EXACT });
  const lookalike = cand({ names: ['Peter McC0rmack ⚡'], trust: -1, seen: -1 });
  const other = cand({ names: ['Peter Todd'], trust: 2, seen: 600 });
  const got = orderCandidates([fake, person, lookalike, other]);
  assert.deepEqual([...got.marked], [1, 0, 1, 0]);
  assert.deepEqual(got.order, [1, 3, 0, 2], 'the person, the unmarked namesake-free account, then the marked ones by key');
  // not marked: older than the trusted one (seen first), or at least a tenth of its trust, or nobody trusted to imitate
  assert.deepEqual([...impersonators([cand({ names: ['Jeff'], trust: 165, seen: 10 }), cand({ names: ['jeff'], trust: 2, seen: 5 })])], [0, 0]);
  assert.deepEqual([...impersonators([cand({ names: ['Jeff'], trust: 165, seen: 10 }), cand({ names: ['jeff'], trust: 17, seen: 50 })])], [0, 0]);
  assert.deepEqual([...impersonators([cand({ names: ['Jeff'], trust: 0, seen: 10 }), cand({ names: ['jeff'], trust: -1, seen: -1 })])], [0, 0]);
  // without first-seen orders (ranks written before they were), the profiles' created_at decide
  assert.deepEqual([...impersonators([cand({ names: ['Jeff'], trust: 165, seen: -1, createdAt: 100 }), cand({ names: ['jeff'], trust: 1, seen: -1, createdAt: 200 })])], [0, 1]);
});
