// The trust write policy on a real relay process: with trust.policy on (kind 1 here), events from
// pubkeys whose rooted rank is below trust.policyMinRank, or that are not ranked at all, are refused
// with restricted:; ranked authors and other kinds pass; NIP-11 says writes are restricted.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startRelayProcess, type RelayProcess } from '../helpers/relay-process.js';
import { Author, Client } from '../helpers/client.js';
import { waitForRanks } from './helpers.js';
import { configSchema } from '../../src/config.js';
import { trustPolicy } from '../../src/policy/trust.js';
import type { RankStore } from '../../src/store/ranks.js';

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

  // the status page and /metrics show the ranks' age and the pass's duration
  const status = (await (await fetch(`${relay.httpUrl}/status.json`)).json()) as { sections: Array<{ title: string; rows: Array<[string, string]> }> };
  const section = status.sections.find((x) => x.title === 'Trust ranking');
  assert.ok(section, 'a Trust ranking section');
  const rows = new Map(section.rows);
  assert.equal(rows.get('mode'), 'rooted (1 roots)');
  assert.match(rows.get('ranks age') ?? '', /^\d+ s$/);
  assert.match(rows.get('graph') ?? '', /^3 pubkeys, 2 follows, 0 mutes$/);
  const metrics = await (await fetch(`${relay.httpUrl}/metrics`)).text();
  assert.match(metrics, /^orbweaver_trust_rank_age_seconds \d+(\.\d+)?$/m);
  assert.match(metrics, /^orbweaver_trust_rank_duration_seconds \d+(\.\d+)?$/m);
  assert.match(metrics, /^orbweaver_trust_follow_edges 2$/m);
});

test('trust policy hook: the spider stores low-ranked authors\' lists but not their other events; global ranks refuse nothing', () => {
  const meta = { mode: 'rooted' as const, roots: 1, generation: 1, computedAt: 0, durationMs: 0, nodes: 2, edges: 1, muteEdges: 0, iterations: 1, hideBelow: 1 };
  let mode: 'rooted' | 'global' = 'rooted';
  const table = new Map([['a'.repeat(64), 0], ['b'.repeat(64), 5]]);
  const ranks = {
    meta: () => ({ ...meta, mode }),
    get: (pk: string) => (table.has(pk) ? { score: 0, rank: table.get(pk)!, followers: 0, mutes: 0 } : undefined),
  } as unknown as RankStore;
  const trust = configSchema.parse({ trust: { spiderMinRank: true, policyMinRank: 1 } }).trust;
  const hook = trustPolicy(trust, ranks)!;
  const e = (pubkey: string, kind: number) => ({ event: { pubkey, kind } }) as Parameters<typeof hook>[0];
  assert.match(hook(e('a'.repeat(64), 1), { source: 'spider' })!, /^blocked: author rank 0 is below 1/);
  assert.equal(hook(e('a'.repeat(64), 3), { source: 'spider' }), null, 'follow lists always');
  assert.equal(hook(e('a'.repeat(64), 10000), { source: 'spider' }), null, 'mute lists always');
  assert.equal(hook(e('b'.repeat(64), 1), { source: 'spider' }), null);
  assert.equal(hook(e('c'.repeat(64), 1), { source: 'spider' }), null, 'unranked: stored');
  assert.equal(hook(e('a'.repeat(64), 1), { source: 'client' }), null, 'trust.policy off: clients are not held to it');
  mode = 'global';
  assert.equal(hook(e('a'.repeat(64), 1), { source: 'spider' }), null, 'a global rank refuses nothing');
  assert.equal(trustPolicy(configSchema.parse({}).trust, ranks), null, 'off by default');
});
