// Who may read what (src/relay/policy/read.ts): DM visibility, the filter refusal and the exact COUNT
// rewrite for a reader who may see only some of the matches.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { kindOfJson, ProtectedKinds } from '../../../src/relay/policy/read.js';
import { matchFilter, type Filter } from '../../../src/nostr/filter.js';
import type { NostrEvent } from '../../../src/nostr/event.js';

const ev = (kind: number, pubkey: string, p: string[] = [], id = 'i'.repeat(64)): NostrEvent =>
  ({ id, pubkey, created_at: 1, kind, tags: p.map((x) => ['p', x]), content: '', sig: '' });

test('DM visibility, the filter refusal and the exact COUNT rewrite', async () => {
  const pk = new ProtectedKinds([4, 1059]);
  const A = 'a'.repeat(64), B = 'b'.repeat(64), C = 'c'.repeat(64);
  assert.ok(pk.canSee(ev(1, A), new Set()));
  assert.ok(!pk.canSee(ev(4, A, [B]), new Set()));
  assert.ok(pk.canSee(ev(4, A, [B]), new Set([B])));
  assert.ok(pk.canSee(ev(4, A, [B]), new Set([A])));
  assert.ok(!pk.canSee(ev(4, A, [B]), new Set([C])));
  assert.equal(kindOfJson(JSON.stringify(ev(1059, A))), 1059);
  assert.equal(kindOfJson(JSON.stringify({ id: 'x', content: '"kind":5' }).replace('"id"', '"kind":7,"id"')), 7);
  const reject = pk.rejectFilter();
  assert.match(reject([{ kinds: [4] }], { verb: 'REQ' })!, /^auth-required: /);
  assert.match(reject([{ kinds: [4] }], { verb: 'REQ', authed: new Set([C]) })!, /^restricted: /);
  assert.equal(reject([{ kinds: [4], '#p': undefined, tags: [['p', [C]]] } as Filter], { verb: 'REQ', authed: new Set([C]) }), null);
  assert.equal(reject([{ kinds: [1, 4] }], { verb: 'REQ' }), null, 'mixed kinds are filtered event by event');

  // COUNT over a store of these events, reader C: C sees the DM to C and the DM by C, not the DM A->B
  const store = [ev(1, A, [], '1'.repeat(64)), ev(4, A, [B], '2'.repeat(64)), ev(4, A, [C], '3'.repeat(64)), ev(4, C, [A], '4'.repeat(64)), ev(1059, B, [C], '5'.repeat(64)), ev(7, C, [], '6'.repeat(64))];
  const count = async (fs: Filter[]) => ({ count: store.filter((e) => fs.some((f) => matchFilter(f, e))).length });
  const reader = new Set([C]);
  const visible = (fs: Filter[]) => store.filter((e) => fs.some((f) => matchFilter(f, e)) && pk.canSee(e, reader)).length;
  for (const fs of [[{}], [{ authors: [A] }], [{ kinds: [1, 4] }], [{ kinds: [4], authors: [A, C] }], [{ authors: [A] }, { kinds: [1059] }], [{ tags: [['p', [C, B]]] }] as Filter[]] as Filter[][]) {
    assert.equal((await pk.count(fs, reader, count)).count, visible(fs), JSON.stringify(fs));
    assert.equal((await pk.count(fs, new Set(), count)).count, store.filter((e) => fs.some((f) => matchFilter(f, e)) && pk.canSee(e, new Set())).length);
  }
});
