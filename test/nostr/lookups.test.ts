// nostr/lookups.ts: which filters are lookups, and the limits a REQ's filters get.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { answerLimits, lookupBound } from '../../src/nostr/lookups.js';

const pk = (i: number) => i.toString(16).padStart(64, '0');

test('lookupBound: ids, authors with replaceable kinds, addressable kinds with #d; nothing else', () => {
  assert.equal(lookupBound({ ids: [pk(1), pk(2)] }), 2);
  assert.equal(lookupBound({ ids: [pk(1), 'abc'] }), null, 'an id prefix is a scan');
  assert.equal(lookupBound({ authors: [pk(1), pk(2), pk(3)], kinds: [0, 3, 10002] }), 9);
  assert.equal(lookupBound({ authors: [pk(1), pk(2)], kinds: [0], tags: [['d', ['a', 'b']]] }), 2, '#d only narrows a replaceable kind');
  assert.equal(lookupBound({ authors: [pk(1), pk(2)], kinds: [30023, 10002], tags: [['d', ['a', 'b', 'c']]] }), 12);
  assert.equal(lookupBound({ authors: [pk(1)], kinds: [30023] }), null, 'addressable without #d');
  assert.equal(lookupBound({ authors: [pk(1)], kinds: [0, 1] }), null, 'a regular kind');
  assert.equal(lookupBound({ authors: [pk(1)] }), null, 'no kinds');
  assert.equal(lookupBound({ authors: ['ab'], kinds: [0] }), null, 'an author prefix');
  assert.equal(lookupBound({ kinds: [0] }), null);
  assert.equal(lookupBound({ authors: [pk(1)], kinds: [0], search: { text: 'x' } as never }), null, 'a search');
});

test('answerLimits: scans clamped and defaulted, lookups their own size, one bound for the REQ, inputs untouched', () => {
  const l = { defaultLimit: 10, maxLimit: 20, maxEvents: 50 };
  const lookup = { authors: [pk(1), pk(2), pk(3)], kinds: [0, 3, 10000, 10002, 10050, 10001, 10003, 10006, 10007, 10009, 10012, 10015, 10020, 10030, 10101, 10102] };
  assert.equal(lookupBound(lookup), 48);
  const [a] = answerLimits([lookup], l);
  assert.equal(a!.limit, 48, 'past max_limit');
  assert.equal(lookup.hasOwnProperty('limit'), false, 'the filter itself is not changed');
  assert.equal(answerLimits([{ ...lookup, limit: 5 }], l)[0]!.limit, 5, 'a given limit applies');
  assert.equal(answerLimits([{ kinds: [1] }], l)[0]!.limit, 10, 'a scan gets the default');
  assert.equal(answerLimits([{ kinds: [1], limit: 99 }], l)[0]!.limit, 20, 'a scan is clamped');
  const both = answerLimits([lookup, { kinds: [1], limit: 15 }, { ids: [pk(9), pk(8)] }], l);
  assert.deepEqual(both.map((f) => f.limit), [35, 15, 0], 'scans first, then lookups in order share what is left');
});
