// NIP-42 on its own (src/relay/policy/auth-gate.ts): when the challenge goes out in each mode, what
// an AUTH without a challenge gets, a refusal before the signature check, a wrong challenge (invalid:), and the
// cap on pubkeys per connection — with real signed AUTH events and the real verifier.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { finalizeEvent, generateSecretKey, getPublicKey } from 'nostr-tools/pure';
import { configSchema } from '../../../src/config/schema.js';
import { loadWasmVerifier } from '../../../src/nostr/verify.js';
import { OwnUrls } from '../../../src/relay/auth/own-urls.js';
import { AuthGate, MAX_AUTHED_PER_CONNECTION, type AuthConn } from '../../../src/relay/policy/auth-gate.js';

const URL = 'wss://relay.example.com';

function conn(): AuthConn & { sent: unknown[] } {
  const sent: unknown[] = [];
  return { ip: '192.0.2.1', challenge: 'c-' + Math.random().toString(36).slice(2), challengeSent: false, authed: new Set(), sent, send: (t: string) => (sent.push(JSON.parse(t)), true) };
}

const authEvent = (challenge: string, sk = generateSecretKey(), relay = URL) =>
  finalizeEvent({ kind: 22242, created_at: Math.floor(Date.now() / 1000), tags: [['relay', relay], ['challenge', challenge]], content: '' }, sk);

async function gate(challenge: 'connect' | 'on-demand') {
  const config = configSchema.parse({ publicUrl: URL, auth: { challenge } });
  const refusals: string[] = [];
  const g = new AuthGate(config.auth, await loadWasmVerifier(), new OwnUrls(config.publicUrl, config.auth.relayHosts), (verb, m) => refusals.push(`${verb} ${m}`));
  return { g, refusals };
}

const admitted = () => () => {};

test('the challenge: at once in connect mode; in on-demand mode only before an auth-required: refusal, once', async () => {
  const { g: onConnect } = await gate('connect');
  const a = conn();
  onConnect.opened(a);
  assert.deepEqual(a.sent, [['AUTH', a.challenge]]);
  const { g } = await gate('on-demand');
  const b = conn();
  g.opened(b);
  g.beforeRefusal(b, 'blocked: not here');
  assert.deepEqual(b.sent, [], 'no challenge on connect, nor before another refusal');
  g.beforeRefusal(b, 'auth-required: DMs need AUTH');
  g.beforeRefusal(b, 'auth-required: again');
  assert.deepEqual(b.sent, [['AUTH', b.challenge]], 'once, before the first auth-required:');
  assert.equal(g.challengesSent, 1);
});

test('AUTH: answered OK true with the challenge; without one it gets the challenge and auth-required:; refused before any check when not admitted', async () => {
  const { g, refusals } = await gate('on-demand');
  const c = conn();
  const early = authEvent(c.challenge);
  await g.handle(c, early, admitted);
  assert.deepEqual(c.sent, [['AUTH', c.challenge], ['OK', early.id, false, 'auth-required: no challenge was sent on this connection yet; answer the one just sent']]);
  assert.equal(c.authed.size, 0);
  const sk = generateSecretKey();
  const good = authEvent(c.challenge, sk);
  await g.handle(c, good, admitted);
  assert.deepEqual(c.sent.at(-1), ['OK', good.id, true, '']);
  assert.deepEqual([...c.authed], [getPublicKey(sk)]);
  const wrong = authEvent('not-the-challenge');
  await g.handle(c, wrong, admitted);
  assert.equal((c.sent.at(-1) as unknown[])[2], false);
  assert.match(String((c.sent.at(-1) as unknown[])[3]), /^invalid: .*challenge/);
  assert.equal(refusals.length, 1, 'a failed check is noted for the status page');
  let released = 0;
  const limited = authEvent(c.challenge);
  await g.handle(c, limited, () => 'rate-limited: slow down');
  assert.deepEqual(c.sent.at(-1), ['OK', limited.id, false, 'rate-limited: slow down']);
  await g.handle(c, authEvent(c.challenge), () => () => void released++);
  assert.equal(released, 1, 'the in-flight slot is released after the check');
  assert.deepEqual([g.ok, g.failed], [2, 2]);
});

test(`at most ${MAX_AUTHED_PER_CONNECTION} pubkeys authenticate on one connection`, async () => {
  const { g } = await gate('connect');
  const c = conn();
  g.opened(c);
  for (let i = 0; i < MAX_AUTHED_PER_CONNECTION; i++) await g.handle(c, authEvent(c.challenge), admitted);
  const extra = authEvent(c.challenge);
  await g.handle(c, extra, admitted);
  assert.deepEqual(c.sent.at(-1), ['OK', extra.id, false, `restricted: at most ${MAX_AUTHED_PER_CONNECTION} pubkeys may authenticate on one connection`]);
  assert.equal(c.authed.size, MAX_AUTHED_PER_CONNECTION);
});
