// The URLs NIP-42's relay tag and NIP-98's u tag are compared in (src/relay/auth/nip42.ts, nip98.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { normaliseRelayUrl } from '../../../src/relay/auth/nip42.js';
import { normaliseHttpUrl } from '../../../src/relay/auth/nip98.js';

test('relay URLs compare without case, default ports or trailing slashes', () => {
  assert.equal(normaliseRelayUrl('wss://Relay.Example.COM/'), 'wss://relay.example.com');
  assert.equal(normaliseRelayUrl('wss://relay.example.com:443'), 'wss://relay.example.com');
  assert.equal(normaliseRelayUrl('ws://127.0.0.1:7447/'), 'ws://127.0.0.1:7447');
  assert.notEqual(normaliseRelayUrl('wss://relay.example.com/a'), normaliseRelayUrl('wss://relay.example.com'));
  assert.equal(normaliseHttpUrl('wss://Relay.example.com/'), 'https://relay.example.com');
  assert.equal(normaliseHttpUrl('http://h:80/'), 'http://h');
});
