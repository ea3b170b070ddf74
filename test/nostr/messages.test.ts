import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseClientMessage, MessageError, okMessage, eventMessage, closedMessage, countMessage } from '../../src/nostr/messages.js';

test('client messages parse by verb', () => {
  assert.deepEqual(parseClientMessage('["EVENT",{"a":1}]', 64), { type: 'EVENT', event: { a: 1 } });
  assert.deepEqual(parseClientMessage('["REQ","s",{},{"kinds":[1]}]', 64), { type: 'REQ', subId: 's', filters: [{}, { kinds: [1] }] });
  assert.deepEqual(parseClientMessage('["COUNT","c",{}]', 64), { type: 'COUNT', subId: 'c', filters: [{}] });
  assert.deepEqual(parseClientMessage('["CLOSE","s"]', 64), { type: 'CLOSE', subId: 's' });
});

test('bad client messages throw MessageError with an invalid: prefix', () => {
  for (const bad of ['nope', '{}', '[]', '[1]', '["EVENT"]', '["EVENT",{},{}]', '["REQ"]', '["REQ",""]', '["REQ",5]', '["CLOSE"]', '["WHAT",1]', `["REQ","${'x'.repeat(65)}",{}]`]) {
    assert.throws(() => parseClientMessage(bad, 64), (e: unknown) => e instanceof MessageError && /^invalid: /.test(e.message), bad);
  }
});

test('relay messages are valid JSON with the event spliced in verbatim', () => {
  assert.deepEqual(JSON.parse(okMessage('ab', false, 'invalid: "x"')), ['OK', 'ab', false, 'invalid: "x"']);
  assert.deepEqual(JSON.parse(eventMessage('s"1', '{"id":"x"}')), ['EVENT', 's"1', { id: 'x' }]);
  assert.deepEqual(JSON.parse(closedMessage('s', 'error: e')), ['CLOSED', 's', 'error: e']);
  assert.deepEqual(JSON.parse(countMessage('c', 5)), ['COUNT', 'c', { count: 5 }]);
});
