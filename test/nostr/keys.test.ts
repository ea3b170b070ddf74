import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateSecretKey, getPublicKey } from 'nostr-tools/pure';
import { npubEncode, nsecEncode } from 'nostr-tools/nip19';
import { parsePubkey, parseSecretKey } from '../../src/nostr/keys.js';

test('pubkeys and secret keys from config: hex or NIP-19', () => {
  const sk = generateSecretKey();
  const pk = getPublicKey(sk);
  assert.equal(parsePubkey(pk.toUpperCase()), pk);
  assert.equal(parsePubkey(` ${npubEncode(pk)} `), pk);
  assert.equal(parsePubkey('npub1broken'), null);
  assert.equal(parsePubkey('ab'), null);
  assert.deepEqual(parseSecretKey(Buffer.from(sk).toString('hex')), sk);
  assert.deepEqual(parseSecretKey(nsecEncode(sk)), sk);
  assert.throws(() => parseSecretKey('nsec1broken'), /spider\.workerKey: expected 64 hex characters or an nsec/);
  assert.throws(() => parseSecretKey(npubEncode(pk), 'key'), /^Error: key: /);
});
