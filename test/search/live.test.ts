// Live NIP-50 matching is indexed (src/nostr/search-live.ts, filed by src/relay/live-index.ts): a
// published profile is checked against the searches that could match it, and finds every one a
// brute-force text match finds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LiveIndex, type LiveSub } from '../../src/relay/live-index.js';
import { matchAny, parseFilter } from '../../src/nostr/filter.js';
import { docSearchKeys, searchKeys } from '../../src/nostr/search-live.js';
import { encodeDoc, parseSearch, searchDoc, tierOf } from '../../src/nostr/search.js';
import { prng as rng } from '../../bench/lib/profiles.js';
import type { NostrEvent } from '../../src/nostr/event.js';

const limits = { maxFilterValues: 5000, maxTagFilters: 16, searchKinds: [0] };
const profile = (i: number, p: object): NostrEvent => ({ id: i.toString(16).padStart(64, '0'), pubkey: 'a'.repeat(64), kind: 0, created_at: 1, tags: [], content: JSON.stringify(p), sig: '' });

// words and fields drawn from a small alphabet so queries and profiles overlap often
const WORDS = ['alice', 'alicia', 'al', 'bob', 'bobby', 'carol', 'さとし', 'さと', '東京', 'ゆき', 'zoë', 'zoe', 'smith', 'jack.dorsey', "o'brien", 'x', 'ab', 'abc', 'Σίσυφος'];
const DOMAINS = ['example.com', 'getalby.com', 'nostr.band'];

function randomProfile(r: () => number, i: number): NostrEvent {
  const pick = <T>(xs: T[]) => xs[Math.floor(r() * xs.length)];
  const words = (n: number) => Array.from({ length: n }, () => pick(WORDS)).join(r() < 0.5 ? ' ' : '_');
  const p: Record<string, string> = { name: words(1 + Math.floor(r() * 2)) };
  if (r() < 0.5) p.display_name = words(2);
  if (r() < 0.5) p.nip05 = `${pick(WORDS)}@${pick(DOMAINS)}`;
  if (r() < 0.3) p.lud16 = `${pick(WORDS)}@${pick(DOMAINS)}`;
  if (r() < 0.6) p.about = words(1 + Math.floor(r() * 6));
  return profile(i, p);
}

function randomQuery(r: () => number): string {
  const pick = <T>(xs: T[]) => xs[Math.floor(r() * xs.length)];
  const cut = (w: string) => w.slice(0, 1 + Math.floor(r() * w.length));
  const parts = Array.from({ length: 1 + Math.floor(r() * 2) }, () => (r() < 0.5 ? cut(pick(WORDS)) : pick(WORDS)));
  if (r() < 0.15) parts.push(`domain:${pick(DOMAINS)}`);
  if (r() < 0.1) return `${cut(pick(WORDS))}@${cut(pick(DOMAINS))}`; // a nip05 / lud16 typed whole
  return parts.join(' ');
}

test('every profile a search matches visits one of the keys the search is filed under', () => {
  const r = rng(7);
  let matched = 0;
  for (let i = 0; i < 3000; i++) {
    const q = parseSearch(randomQuery(r));
    const doc = searchDoc(0, randomProfile(r, i).content);
    if (!doc || (q.text === '' && q.domain === undefined)) continue;
    const enc = encodeDoc(doc);
    if (tierOf(q, enc) < 0) continue;
    matched++;
    const want = new Set(searchKeys(q));
    let found = false;
    docSearchKeys(enc, (k) => { if (want.has(k)) found = true; });
    assert.ok(found, `query ${JSON.stringify(q.raw)} matches ${enc} but no key ${[...want].join(',')} was visited`);
  }
  assert.ok(matched > 300, `only ${matched} matching pairs drawn`);
});

test('the live index finds the same search subscriptions as a full scan', () => {
  const r = rng(11);
  const idx = new LiveIndex<number>();
  const subs: LiveSub<number>[] = [];
  for (let i = 0; i < 600; i++) {
    const filters = [parseFilter({ search: randomQuery(r) }, limits)];
    if (r() < 0.2) filters.push(parseFilter({ kinds: [0], search: randomQuery(r) }, limits));
    const s = { conn: i, subId: String(i), filters };
    subs.push(s);
    idx.add(s);
  }
  for (let i = 0; i < 600; i += 5) idx.remove(subs[i]);
  const alive = subs.filter((_, i) => i % 5 !== 0);
  let hits = 0;
  for (let i = 0; i < 1500; i++) {
    const ev = randomProfile(r, i);
    const want = alive.filter((s) => matchAny(s.filters, ev)).map((s) => s.subId).sort();
    const got = idx.match(ev).map((s) => s.subId).sort();
    assert.deepEqual(got, want, ev.content);
    hits += got.length;
  }
  assert.ok(hits > 1500, `only ${hits} matches`);
  assert.ok(idx.checks < 1500 * alive.length / 2, `${idx.checks} filter checks for ${1500 * alive.length} pairs`);
});

test('a published profile is not text-matched against other people\'s unrelated live searches', () => {
  const idx = new LiveIndex<number>();
  // 2,000 live searches for names unlike the profile's
  for (let i = 0; i < 2000; i++) idx.add({ conn: i, subId: `s${i}`, filters: [parseFilter({ search: `zz${i.toString(36)}q` }, limits)] });
  const mine = { conn: -1, subId: 'mine', filters: [parseFilter({ search: 'alice' }, limits)] };
  idx.add(mine);
  idx.match(profile(0, { name: 'warmup' })); // files the subscriptions
  const before = idx.checks;
  const hits = idx.match(profile(1, { name: 'Alice Smith', about: 'hello there' }));
  assert.deepEqual(hits.map((s) => s.subId), ['mine']);
  assert.ok(idx.checks - before <= 2, `${idx.checks - before} filters were checked`);
});
