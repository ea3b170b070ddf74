// The trust write policy on a real relay process: with trust.policy on (kind 1 here), events from
// pubkeys whose rooted rank is below trust.policyMinRank, or that are not ranked at all, are refused
// with restricted:; ranked authors and other kinds pass; NIP-11 says writes are restricted.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startRelayProcess, type RelayProcess } from '../helpers/relay-process.js';
import { Author, Client } from '../helpers/client.js';
import { waitForRanks } from './helpers.js';

const relays: RelayProcess[] = [];
after(async () => { await Promise.all(relays.map((r) => r.cleanup())); });

test('trust policy: only ranked authors above the threshold may publish the policy kinds', async () => {
  const root = new Author();
  const relay = await startRelayProcess({ env: { ORBWEAVER_TRUST_ROOTS: root.pk, ORBWEAVER_TRUST_DEBOUNCE: '100ms', ORBWEAVER_TRUST_INTERVAL: '0', ORBWEAVER_TRUST_POLICY: 'true', ORBWEAVER_TRUST_POLICY_KINDS: '1', ORBWEAVER_TRUST_POLICY_MIN_RANK: '1' } });
  relays.push(relay);
  const info = (await (await fetch(relay.httpUrl, { headers: { Accept: 'application/nostr+json' } })).json()) as { limitation: { restricted_writes: boolean } };
  assert.equal(info.limitation.restricted_writes, true);
  const c = await Client.open(relay.url);
  const friend = new Author(), nobody = new Author(), stranger = new Author();
  assert.equal((await c.publish(root.sign({ kind: 3, tags: [['p', friend.pk]] }))).ok, true);
  // a follow list is not a policy kind here: accepted from anyone (it is what ranks are made of)
  assert.equal((await c.publish(nobody.sign({ kind: 3, tags: [['p', friend.pk]] }))).ok, true);
  await waitForRanks(relay, 2);

  assert.equal((await c.publish(root.sign({ kind: 1, content: 'root' }))).ok, true);
  assert.equal((await c.publish(friend.sign({ kind: 1, content: 'followed by the root' }))).ok, true);
  const low = await c.publish(nobody.sign({ kind: 1, content: 'ranked 0' }));
  assert.equal(low.ok, false);
  assert.match(low.message, /^restricted: .*at least 1 \(yours: 0\)/);
  const unranked = await c.publish(stranger.sign({ kind: 1, content: 'in no list' }));
  assert.equal(unranked.ok, false);
  assert.match(unranked.message, /^restricted: /);
  assert.equal((await c.publish(stranger.sign({ kind: 7, content: '+' }))).ok, true, 'other kinds pass');
  c.close();
});
