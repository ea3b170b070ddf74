// nostr/lookup-miss.ts (which filters start a lookup on a miss, which authors are missing or stale)
// and nostr/frame-heads.ts (whose events an answer holds, read from its frames).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isDirectoryKind, lookupWants, missingAuthors } from '../../src/nostr/lookup-miss.js';
import { frameHeads } from '../../src/nostr/frame-heads.js';
import { assemble, FrameArena } from '../../src/nostr/frames.js';
import { eventFraming } from '../../src/nostr/messages.js';

const pk = (i: number) => i.toString(16).padStart(64, '0');

test('isDirectoryKind: profiles, follows and the replaceable lists', () => {
  for (const k of [0, 3, 10000, 10002, 10050, 19999]) assert.ok(isDirectoryKind(k), String(k));
  for (const k of [1, 2, 5, 7, 9999, 20000, 30023]) assert.ok(!isDirectoryKind(k), String(k));
});

test('lookupWants: only filters whose answer names every author and kind', () => {
  const a = [pk(1), pk(2)];
  assert.deepEqual(lookupWants([{ authors: a, kinds: [0, 10002] }]), [{ authors: a, kinds: [0, 10002] }]);
  assert.deepEqual(lookupWants([{ authors: a, kinds: [0], limit: 2 }]), [{ authors: a, kinds: [0] }], 'a limit covering every author and kind');
  assert.deepEqual(lookupWants([{ authors: a, kinds: [0, 3], limit: 3 }]), [], 'a cut answer proves nothing');
  assert.deepEqual(lookupWants([{ authors: a, kinds: [0, 1] }]), [], 'a regular kind');
  assert.deepEqual(lookupWants([{ authors: a, kinds: [30023] }]), [], 'an addressable kind');
  assert.deepEqual(lookupWants([{ authors: a }]), [], 'no kinds');
  assert.deepEqual(lookupWants([{ kinds: [0] }]), [], 'no authors');
  assert.deepEqual(lookupWants([{ authors: ['abcd'], kinds: [0] }]), [], 'an author prefix');
  assert.deepEqual(lookupWants([{ authors: a, kinds: [0], since: 5 }]), [], 'a time window');
  assert.deepEqual(lookupWants([{ authors: a, kinds: [0], until: 5 }]), []);
  assert.deepEqual(lookupWants([{ authors: a, kinds: [0], tags: [['d', ['x']]] }]), [], 'tags');
  assert.deepEqual(lookupWants([{ authors: a, kinds: [0], ids: [pk(9)] }]), [], 'ids');
  assert.deepEqual(lookupWants([{ authors: a, kinds: [0], search: { raw: 'x' } as never }]), [], 'a search');
});

test('missingAuthors: absent kinds, stale kinds, each author once with its kinds merged', () => {
  const wants = [{ authors: [pk(1), pk(2), pk(3)], kinds: [0, 10002] }, { authors: [pk(3), pk(4)], kinds: [10050] }];
  const held = [
    { pubkey: pk(1), kind: 0, created_at: 1000 }, { pubkey: pk(1), kind: 10002, created_at: 1000 }, // fresh: nothing missing
    { pubkey: pk(2), kind: 0, created_at: 10 }, { pubkey: pk(2), kind: 10002, created_at: 20 }, // both stale
    { pubkey: pk(3), kind: 0, created_at: 1000 }, // 10002 and 10050 absent
  ];
  const m = missingAuthors(wants, held, 500);
  assert.deepEqual(m, [
    { pubkey: pk(2), kinds: [0, 10002], stale: true },
    { pubkey: pk(3), kinds: [10002, 10050], stale: false },
    { pubkey: pk(4), kinds: [10050], stale: false },
  ]);
  assert.deepEqual(missingAuthors(wants.slice(0, 1), held, 0).map((x) => x.pubkey), [pk(3)], 'staleBefore 0: nothing is stale');
  assert.deepEqual(missingAuthors([{ authors: [pk(5)], kinds: [0] }], [{ pubkey: pk(5), kind: 0, created_at: 10 }, { pubkey: pk(5), kind: 0, created_at: 900 }], 500), [], 'the newest counts');
});

test('frameHeads: pubkey, kind and created_at of the frames of the kinds asked', () => {
  const arena = new FrameArena(eventFraming('sub'));
  const evs = [
    { id: pk(10), pubkey: pk(1), created_at: 1700000000, kind: 0, tags: [['p', pk(7)]], content: '"pubkey":"' + pk(9) + '" created_at', sig: 'ab' },
    { id: pk(11), pubkey: pk(2), created_at: 5, kind: 1, tags: [], content: '', sig: 'ab' },
    { id: pk(12), pubkey: pk(3), created_at: 1234567, kind: 10002, tags: [], content: '{"created_at":9}', sig: 'ab' },
  ];
  const placed = evs.map((e) => {
    const b = Buffer.from(JSON.stringify(e));
    const start = arena.append(b, 0, b.length);
    return { start, end: arena.len, kind: e.kind };
  });
  const frames = assemble(arena, placed);
  assert.deepEqual(frameHeads(frames, new Set([0, 10002])), [
    { pubkey: pk(1), kind: 0, created_at: 1700000000 },
    { pubkey: pk(3), kind: 10002, created_at: 1234567 },
  ]);
  assert.deepEqual(frameHeads(frames, new Set([3])), []);
});
