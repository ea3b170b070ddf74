// nostr/sign.ts: events signed with a key this process holds are valid NIP-01 events.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateSecretKey, getPublicKey, verifyEvent } from 'nostr-tools/pure';
import { signEvent, signerBackend } from '../../src/nostr/sign.js';
import { loadVerifier } from '../../src/nostr/verify.js';

test('signEvent: a valid event of the template, by the key, with copied tags', async () => {
  const sk = generateSecretKey();
  const tags = [['d', 'ab'.repeat(32)], ['rank', '42'], ['followers', '7'], ['x', 'ünïcødé "quoted"']];
  const t = { kind: 30382, created_at: 1_700_000_000, tags, content: 'line\nbreak 🐙' };
  const a = signEvent(t, sk);
  const b = signEvent(t, sk);
  assert.equal(a.pubkey, getPublicKey(sk));
  assert.deepEqual({ kind: a.kind, created_at: a.created_at, tags: a.tags, content: a.content }, t);
  assert.notEqual(a.tags, tags, 'the tags are a copy');
  assert.notEqual(a.tags[0], tags[0]);
  assert.equal(verifyEvent({ ...a }), true, 'nostr-tools accepts it');
  assert.equal(verifyEvent({ ...b }), true);
  assert.equal(a.id, b.id, 'the same template, the same id');
  const v = await loadVerifier('auto');
  assert.equal(v.check({ ...a }), null, "the relay's own verifier accepts it");
  assert.equal(v.check({ ...a, content: 'changed' }), 'invalid: event id does not match its content');
  // another key: another pubkey (the public key is remembered per key, not once)
  const other = signEvent(t, generateSecretKey());
  assert.notEqual(other.pubkey, a.pubkey);
  assert.equal(verifyEvent({ ...other }), true);
});

test('signEvent uses the native backend where bcrypto is built (as the verifier does)', async () => {
  const v = await loadVerifier('native').catch(() => null);
  assert.equal(signerBackend(), v?.backend === 'native' ? 'native' : 'js');
});
