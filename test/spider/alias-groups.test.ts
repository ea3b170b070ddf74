// The rule that decides which of one server's URLs are one relay (src/spider/aliases/group.ts),
// without I/O: equal answers join, a contrary answer splits a recorded alias off, no answer never
// joins on its own, and the relay keeps the name it is crawled or known by.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { groupRelays, byPlainness, type Member } from '../../src/spider/aliases/group.js';

const H = 'wss://relay.example';

test('equal answers are one relay, named by the plainest URL; other answers stay apart', () => {
  const g = groupRelays([
    { url: `${H}/nostr`, key: 'doc/a' }, { url: H, key: 'doc/a' }, { url: `${H}/x`, key: 'doc/a' },
    { url: `${H}/u/bob`, key: 'doc/b' }, { url: `${H}/u/carol`, key: 'doc/c' },
  ]);
  assert.deepEqual(g, [
    { canonical: H, confirmed: [`${H}/x`, `${H}/nostr`], kept: [] },
    { canonical: `${H}/u/bob`, confirmed: [], kept: [] },
    { canonical: `${H}/u/carol`, confirmed: [], kept: [] },
  ]);
});

test('a URL without an answer is joined only through the directory\'s record, never on this run\'s evidence', () => {
  const members: Member[] = [
    { url: H, key: 'doc/a', named: true },
    { url: `${H}/kept`, key: null, aliasOf: H },
    { url: `${H}/new`, key: null },
  ];
  assert.deepEqual(groupRelays(members), [
    { canonical: H, confirmed: [], kept: [`${H}/kept`] },
    { canonical: `${H}/new`, confirmed: [], kept: [] },
  ]);
});

test('a recorded alias that answers differently is split off; the relay keeps the name it is crawled under', () => {
  const g = groupRelays([
    { url: `${H}/long/name`, key: 'doc/a', crawled: 0 },
    { url: H, key: 'doc/a', aliasOf: `${H}/long/name` },
    { url: `${H}/b`, key: 'doc/other', aliasOf: `${H}/long/name` },
  ]);
  assert.deepEqual(g, [
    { canonical: `${H}/b`, confirmed: [], kept: [] },
    { canonical: `${H}/long/name`, confirmed: [H], kept: [] },
  ]);
});

test('plainness: wss:// first, then the shorter, then code-point order', () => {
  assert.deepEqual(['ws://a.example', 'wss://a.example/zz', 'wss://a.example/b', 'wss://a.example/a'].sort(byPlainness),
    ['wss://a.example/a', 'wss://a.example/b', 'wss://a.example/zz', 'ws://a.example']);
});
