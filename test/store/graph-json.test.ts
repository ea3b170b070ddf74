// graph-json.ts: a list's members read out of its canonical JSON are exactly graphList's, for
// every list it reads; and it reads every graph-only list whose tag strings need no escape.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { canonical, type NostrEvent } from '../../src/nostr/event.js';
import { graphOnlyMembers, parseWithoutTags, splitMembers } from '../../src/store/graph-json.js';
import { graphList } from '../../src/store/graph.js';
import { ev, rng } from './helpers.js';

test('members read from the JSON equal graphList, over random lists of every kind of tag', () => {
  const r = rng(40);
  const hex = (n = 64): string => Array.from({ length: n }, () => '0123456789abcdef'[Math.floor(r() * 16)]).join('');
  const pool = Array.from({ length: 40 }, () => hex());
  const odd = [
    ['t', 'nostr'],
    ['p', hex().toUpperCase()],
    ['p', hex(63)],
    ['p'],
    ['e', hex()],
    ['P', hex()],
    ['p', pool[0]!, 'say "hi"'], // a quote: escaped in the JSON
    ['p', pool[1]!, 'back\\slash'],
    ['p', pool[2]!, 'line\nbreak'],
    ['p', pool[3]!, '\ud800'], // a lone surrogate: escaped
    ['expiration', '1700000000'],
    ['d', 'x'],
  ];
  const plainExtra = ['wss://relay.example.com', '', 'alice', 'émilie 🌶', '],["p","' + pool[4]!.slice(0, 10)];
  let read = 0;
  let onlyLists = 0;
  for (let i = 0; i < 20_000; i++) {
    const kind = [3, 3, 10000, 1, 30000, 10002][Math.floor(r() * 6)]!;
    const tags: string[][] = [];
    for (let k = Math.floor(r() * 30); k > 0; k--) {
      const x = r();
      const pk = pool[Math.floor(r() * pool.length)]!; // duplicates on purpose
      if (x < 0.03) tags.push(odd[Math.floor(r() * odd.length)]!);
      else if (x < 0.25) tags.push(['p', pk, ...Array.from({ length: 1 + Math.floor(r() * 2) }, () => plainExtra[Math.floor(r() * plainExtra.length)]!)]);
      else tags.push(['p', pk]);
    }
    const e: NostrEvent = ev({ kind, tags, content: r() < 0.3 ? '{"a":"b, \\"tags\\":[]"}' : '', sig: hex(128) });
    const json = JSON.stringify(canonical(e));
    const got = graphOnlyMembers(json);
    const want = graphList(kind, tags);
    const escapes = tags.some((t) => t.some((s) => JSON.stringify(s).includes('\\')));
    if (want.only && (kind === 3 || kind === 10000)) {
      onlyLists++;
      // every list it may read, it reads, and exactly
      if (!escapes) assert.equal(got, want.members.join(''), json);
      else assert.ok(got === null || got === want.members.join(''), json);
    } else assert.equal(got, null, json);
    if (got !== null) {
      read++;
      assert.deepEqual(splitMembers(got), want.members);
      assert.deepEqual(parseWithoutTags(json), { ...e, tags: [] });
    }
  }
  assert.ok(read > 2000 && onlyLists > read, `${read} read of ${onlyLists} graph-only lists`);
});

test('JSON not laid out as canonical is not read', () => {
  const e = ev({ kind: 3, tags: [['p', 'a'.repeat(64)]], sig: 'b'.repeat(128) });
  assert.equal(graphOnlyMembers(JSON.stringify(canonical(e))), 'a'.repeat(64));
  assert.equal(graphOnlyMembers(JSON.stringify({ ...canonical(e), tags: undefined, extra: e.tags })), null);
  assert.equal(graphOnlyMembers(JSON.stringify(canonical(e), null, 1)), null);
  assert.equal(graphOnlyMembers(JSON.stringify({ kind: 3, tags: e.tags })), null);
  assert.equal(graphOnlyMembers(''), null);
});
