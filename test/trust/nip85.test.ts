// NIP-85 provider on a real relay process: the service key (0600 file, named in NIP-11), kind 30382
// assertions served to a REQ by that author, valid signatures, d = pubkey, rank and followers equal
// to the relay's own ranks and NIP-45 COUNT, and replaced (not duplicated) when a list changes.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { verifyEvent } from 'nostr-tools/pure';
import { startRelayProcess, type RelayProcess } from '../helpers/relay-process.js';
import { Author, Client, sleep } from '../helpers/client.js';
import type { NostrEvent } from '../../src/nostr/event.js';
import { waitForRanks } from './helpers.js';
import { runCliAsync } from '../helpers/cli.js';

const relays: RelayProcess[] = [];
after(async () => { await Promise.all(relays.map((r) => r.cleanup())); });

const tag = (e: NostrEvent, name: string) => e.tags.find((t) => t[0] === name)?.[1];

async function waitFor<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

test('NIP-85: kind 30382 assertions by the service key, consistent with ranks and COUNT, replaced on recomputation', async () => {
  const root = new Author();
  const relay = await startRelayProcess({ env: { ORBWEAVER_TRUST_ROOTS: root.pk, ORBWEAVER_TRUST_DEBOUNCE: '100ms', ORBWEAVER_TRUST_INTERVAL: '0', ORBWEAVER_TRUST_NIP85: 'true' } });
  relays.push(relay);
  const info = (await (await fetch(relay.httpUrl, { headers: { Accept: 'application/nostr+json' } })).json()) as { supported_nips: number[]; nip85: { pubkey: string; kinds: number[]; tags: string[] } };
  assert.ok(info.supported_nips.includes(85));
  const svc = info.nip85.pubkey;
  assert.match(svc, /^[0-9a-f]{64}$/);
  assert.deepEqual(info.nip85.kinds, [30382]);
  assert.deepEqual(info.nip85.tags, ['rank', 'followers']);
  assert.equal(statSync(join(relay.dataDir, 'trust-rooted.key')).mode & 0o777, 0o600);

  const c = await Client.open(relay.url);
  const a = new Author(), b = new Author(), x = new Author();
  assert.equal((await c.publish(b.sign({ kind: 0, content: JSON.stringify({ name: 'Bea' }) }))).ok, true);
  for (const e of [root.sign({ kind: 3, tags: [['p', a.pk], ['p', b.pk]] }), a.sign({ kind: 3, tags: [['p', b.pk]] }), b.sign({ kind: 3, tags: [['p', x.pk]] })]) assert.equal((await c.publish(e)).ok, true);
  await waitForRanks(relay, 4);

  const assertions = async (): Promise<NostrEvent[]> => (await c.query({ kinds: [30382], authors: [svc], limit: 100 })).events;
  const first = await waitFor('assertions', async () => { const evs = await assertions(); return evs.length >= 4 ? evs : undefined; });
  const by = new Map(first.map((e) => [tag(e, 'd')!, e]));
  assert.deepEqual(new Set(by.keys()), new Set([root.pk, a.pk, b.pk, x.pk]), 'one per ranked pubkey');
  for (const e of first) {
    assert.ok(verifyEvent(e as Parameters<typeof verifyEvent>[0]), 'valid signature');
    assert.equal(e.pubkey, svc);
    const pk = tag(e, 'd')!;
    const counted = (await c.count({ kinds: [3], '#p': [pk] }))[2] as { count: number };
    assert.equal(Number(tag(e, 'followers')), counted.count, `followers of ${pk.slice(0, 8)} = NIP-45 COUNT`);
    const rank = Number(tag(e, 'rank'));
    assert.ok(Number.isInteger(rank) && rank >= 0 && rank <= 100);
  }
  assert.equal(Number(tag(by.get(root.pk)!, 'rank')), 100, 'the root ranks highest');
  assert.ok(Number(tag(by.get(b.pk)!, 'rank')) > Number(tag(by.get(a.pk)!, 'rank')), 'b (followed by the root and a) above a');

  // operators see it: the people page, its JSON, a lookup, and `orbweaver directory --people / --pubkey`
  const peopleDoc = await waitFor('people view', async () => {
    const d = (await (await fetch(`${relay.httpUrl}/directory/people.json`)).json()) as { people: Array<{ pubkey: string; rank: number; followers: number; name: string }> };
    return d.people.length === 4 ? d : undefined;
  });
  assert.equal(peopleDoc.people[0]!.pubkey, root.pk);
  assert.deepEqual(peopleDoc.people.find((p) => p.pubkey === b.pk), { ...peopleDoc.people.find((p) => p.pubkey === b.pk)!, name: 'Bea', followers: 2 });
  const looked = (await (await fetch(`${relay.httpUrl}/directory/people.json?pubkey=${b.pk}`)).json()) as { rank: number; followers: number };
  assert.equal(looked.rank, Number(tag(by.get(b.pk)!, 'rank')));
  assert.equal((await fetch(`${relay.httpUrl}/directory/people.json?pubkey=${new Author().pk}`)).status, 404);
  const html = await (await fetch(`${relay.httpUrl}/directory/people?pubkey=${b.pk}`)).text();
  assert.match(html, /Bea: rank \d+, 2 followers, 0 mutes/);
  const cli = await runCliAsync(['directory', '--data', relay.dataDir, '--pubkey', b.pk]);
  assert.equal(cli.status, 0, cli.stderr);
  assert.match(cli.stdout, new RegExp(`^${b.pk} \\(Bea\\): rank ${looked.rank}, 2 followers, 0 mutes`));
  const top = await runCliAsync(['directory', '--data', relay.dataDir, '--people', '2']);
  assert.equal(top.status, 0, top.stderr);
  assert.match(top.stdout, new RegExp(`^ +100 +0 +0  ${root.pk}`, 'm'));

  // a new follower of x: its assertion is replaced, not duplicated
  const y = new Author();
  assert.equal((await c.publish(root.sign({ kind: 3, created_at: Math.floor(Date.now() / 1000) + 1, tags: [['p', a.pk], ['p', b.pk], ['p', x.pk], ['p', y.pk]] }))).ok, true);
  await waitForRanks(relay, 6);
  const second = await waitFor('replaced assertion of x', async () => {
    const evs = await assertions();
    const ex = evs.filter((e) => tag(e, 'd') === x.pk);
    return ex.length === 1 && tag(ex[0]!, 'followers') === '2' && evs.some((e) => tag(e, 'd') === y.pk) ? evs : undefined;
  });
  assert.equal(second.filter((e) => tag(e, 'd') === x.pk).length, 1);
  assert.ok(second.some((e) => tag(e, 'd') === y.pk));
  c.close();
});

test('NIP-85: a shutdown during the first publication stops it at the next batch, exits cleanly, and the record matches what was stored', async () => {
  // 125 follow lists of 800 people, loaded before trust starts: the first pass has 100,000
  // assertions to publish, far more than one shutdown may wait for. The 6.9 MB go out as fast as
  // the relay answers, over the default 1 MB a second per address on a fast machine (messages
  // dropped unread, no OK): the byte budget is not this test's subject
  const loaded = await startRelayProcess({ env: { ORBWEAVER_TRUST_ENABLED: 'false', ORBWEAVER_RATE_LIMITS_BYTES_PER_IP: '0' } });
  relays.push(loaded);
  const c = await Client.open(loaded.url);
  const people = (n: number) => Array.from({ length: n }, () => ['p', randomBytes(32).toString('hex')]);
  for (let i = 0; i < 125; i++) assert.equal((await c.publish(new Author().sign({ kind: 3, tags: people(800) }))).ok, true);
  c.close();
  assert.equal(await loaded.stop(), 0); 

  const relay = await startRelayProcess({ dataDir: loaded.dataDir, env: { ORBWEAVER_TRUST_DEBOUNCE: '100ms', ORBWEAVER_TRUST_NIP85: 'true', ORBWEAVER_TRUST_NIP85_MIN_RANK: '0' } });
  relays.push(relay);
  const info = (await (await fetch(relay.httpUrl, { headers: { Accept: 'application/nostr+json' } })).json()) as { nip85: { pubkey: string } };
  const svc = info.nip85.pubkey;
  await waitForRanks(relay, 100_000, 60_000); 
  const c1 = await Client.open(relay.url);
  await waitFor('the first assertions', async () => ((await c1.count({ kinds: [30382], authors: [svc] }))[2] as { count: number }).count > 0 || undefined, 60_000);
  c1.close(); 

  assert.equal(await relay.stop(), 0, 'a clean exit, not the forced one');
  assert.ok(!relay.logs.some((l) => l.msg === 'shutdown took too long: exiting'));
  const report = relay.logs.find((l) => l.msg === 'trust: NIP-85 assertions published');
  assert.ok(report, 'the publication reported before the relay stopped');
  assert.equal(report.interrupted, true);
  assert.ok((report.published as number) < 100_000);

  // what the publisher recorded as published is what the store holds
  const again = await startRelayProcess({ dataDir: relay.dataDir, env: { ORBWEAVER_TRUST_ENABLED: 'false' } });
  relays.push(again);
  const c2 = await Client.open(again.url);
  const stored = ((await c2.count({ kinds: [30382], authors: [svc] }))[2] as { count: number }).count;
  assert.equal(stored, report.published);
  c2.close();
});

test('NIP-85: the service key has a kind 0 saying who runs it and what it computes (once, not again at a restart); Amethyst\'s query shape gets exactly the asked assertions', async () => {
  const env = { ORBWEAVER_TRUST_DEBOUNCE: '100ms', ORBWEAVER_TRUST_INTERVAL: '0', ORBWEAVER_TRUST_NIP85: 'true', ORBWEAVER_INFO_NAME: 'Testrelay', ORBWEAVER_PUBLIC_URL: 'wss://trust.example.com' };
  const relay = await startRelayProcess({ env });
  relays.push(relay);
  const info = (await (await fetch(relay.httpUrl, { headers: { Accept: 'application/nostr+json' } })).json()) as { nip85: { pubkey: string } };
  const svc = info.nip85.pubkey;
  const c = await Client.open(relay.url);
  const profile = await waitFor('the service profile', async () => (await c.query({ kinds: [0], authors: [svc] })).events[0]);
  assert.ok(verifyEvent(profile as Parameters<typeof verifyEvent>[0]));
  const p = JSON.parse(profile.content) as { name: string; about: string; website: string };
  assert.equal(p.name, 'Testrelay web of trust (global)');
  assert.match(p.about, /NIP-85 trusted assertions \(kind 30382: rank 0-100, followers\) by the relay Testrelay \(wss:\/\/trust\.example\.com\)/);
  assert.match(p.about, /Algorithm: PageRank over follow lists, personalised to the 100 most followed list holders; mutes count against/);
  assert.equal(p.website, 'https://trust.example.com');

  const a = new Author(), b = new Author(), x = new Author();
  for (const e of [a.sign({ kind: 3, tags: [['p', b.pk], ['p', x.pk]] }), b.sign({ kind: 3, tags: [['p', x.pk]] })]) assert.equal((await c.publish(e)).ok, true);
  await waitForRanks(relay, 3);
  // Amethyst: {kinds:[30382], authors:[service key], #d:[the pubkeys on screen]}
  const asked = [b.pk, x.pk, new Author().pk];
  const got = await waitFor('assertions of b and x', async () => {
    const evs = (await c.query({ kinds: [30382], authors: [svc], '#d': asked })).events;
    return evs.length === 2 ? evs : undefined;
  });
  assert.deepEqual(new Set(got.map((e) => tag(e, 'd'))), new Set([b.pk, x.pk]));
  c.close();
  assert.equal(await relay.stop(), 0);

  // the same settings again: the stored profile says the same, nothing is re-signed
  const again = await startRelayProcess({ dataDir: relay.dataDir, env });
  relays.push(again);
  await waitForRanks(again, 3);
  const c2 = await Client.open(again.url);
  const profiles = (await c2.query({ kinds: [0], authors: [svc] })).events;
  assert.deepEqual(profiles.map((e) => e.id), [profile.id]);
  assert.ok(!again.logs.some((l) => l.msg === 'trust: NIP-85 service profile published'));
  c2.close();
});
