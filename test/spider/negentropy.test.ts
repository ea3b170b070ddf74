// The spider with NIP-77 (issue 13 item 3): relays that serve it (our real relay processes) are
// reconciled per kind against the home's store and only the ids the home lacks are fetched; relays
// that do not (TestRelay) are paged. The home ends with exactly the events a paging-only crawl
// stores, and an incremental run fetches exactly the new ids. A relay that lists 77 but answers
// NEG-OPEN with garbage, a NOTICE or nothing is bounded: the kind is paged and nothing is lost.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TestRelay, keypair, sign, relayList } from '../fixtures/test-relay.js';
import { createSpider } from '../../src/spider/spider.js';
import { RelayDirectory } from '../../src/directory/records.js';
import { startRelayProcess, startRelayProcesses, type RelayProcess } from '../helpers/relay-process.js';
import { Client } from '../helpers/client.js';
import type { NostrEvent } from '../../src/nostr/event.js';
import { openHome, spiderConfig, quietLog, population, DIRECTORY_KINDS, type Home } from './harness.js';

const T0 = Math.floor(Date.now() / 1000) - 20_000;

async function publish(url: string, evs: NostrEvent[]): Promise<void> {
  const c = await Client.open(url);
  try {
    for (const e of evs) assert.equal((await c.publish(e)).ok, true, `published ${e.id}`);
  } finally {
    c.close();
  }
}

async function storedIds(home: Home): Promise<string[]> {
  const ids: string[] = [];
  for await (const json of home.store.iterate({ kinds: DIRECTORY_KINDS })) ids.push((JSON.parse(json) as NostrEvent).id);
  return ids.sort();
}

test('NIP-77 where it is served, paging elsewhere: the same events as paging everywhere; an incremental run fetches exactly what is new', async () => {
  const served: RelayProcess[] = await startRelayProcesses({}, {});
  const paged = await new TestRelay({ flavour: 'strfry', cap: 20 }).start();
  const homes: Home[] = [await openHome(), await openHome()];
  try {
    const info = await (await fetch(served[0]!.httpUrl, { headers: { accept: 'application/nostr+json' } })).json() as { supported_nips: number[] };
    assert.ok(info.supported_nips.includes(77), 'our relay lists NIP-77');
    // 240 events over the three relays, overlapping; an older and a newer profile of x on the two
    // NIP-77 relays; 30 of the events and a home-only one already at home.
    const pop = population(240, [], T0);
    const on: NostrEvent[][] = [[], [], []];
    pop.forEach((ev, i) => {
      if (i % 2 === 0) on[0]!.push(ev);
      if (i % 3 !== 0) on[1]!.push(ev);
      if (i % 5 < 2 || (i % 2 !== 0 && i % 3 === 0)) on[2]!.push(ev);
    });
    const x = keypair(), seed = keypair();
    on[0]!.push(sign(x.sk, 0, T0 - 100, [], 'old'));
    on[1]!.push(sign(x.sk, 0, T0 - 10, [], 'new'));
    await publish(served[0]!.url, on[0]!);
    await publish(served[1]!.url, on[1]!);
    paged.add(...on[2]!);
    const seedList = relayList(seed.sk, T0, [served[0]!.url, served[1]!.url, paged.url]);
    const atHome = [...pop.filter((_, i) => i % 8 === 1).slice(0, 30), sign(keypair().sk, 0, T0, [], 'home only'), seedList];
    for (const home of homes) for (const ev of atHome) assert.equal((await home.ingest(ev, { source: 'client' })).status, 'stored');

    const perKind = new Map<string, Record<string, number> | undefined>();
    const run = async (home: Home, negentropy: string) => {
      const spider = createSpider({
        config: spiderConfig({ seeds: [seed.pk], hops: 0, concurrency: 3, negentropy, kinds: DIRECTORY_KINDS }), store: home.store, ingest: home.ingest, logger: quietLog,
        onRelayResult: (r) => { if (negentropy === 'listed') perKind.set(r.url, r.kinds); },
      });
      try { return await spider.runOnce(); } finally { await spider.stop(); }
    };
    const [withNeg, without] = [await run(homes[0]!, 'listed'), await run(homes[1]!, 'off')];
    assert.equal(withNeg.relays.reached, 3);
    assert.equal(without.relays.reached, 3);
    const [a, b] = [await storedIds(homes[0]!), await storedIds(homes[1]!)];
    assert.deepEqual(a, b, 'the same events with and without NIP-77');
    const everything = new Set([...on.flat(), ...atHome].filter((e) => e.content !== 'old').map((e) => e.id));
    assert.deepEqual(a, [...everything].sort(), 'every event, the newer profile of x only');
    assert.equal(withNeg.events.nip77Relays, 2, 'the two relays that serve NIP-77');
    assert.equal(withNeg.events.nip77Kinds, 2 * DIRECTORY_KINDS.length);
    assert.equal(withNeg.events.nip77Fallbacks, 0);
    assert.equal(paged.negOpens, 0, 'a relay whose NIP-11 does not list 77 is not asked');
    assert.equal(without.events.nip77Kinds, 0);
    assert.ok(withNeg.events.nip77Ids > 0 && withNeg.events.nip77Bytes > 0);
    // the relay's events per kind (the monitor's figures) are the relay's, not only what was fetched
    const count = (evs: NostrEvent[], k: number) => evs.filter((e) => e.kind === k).length;
    for (const [i, r] of served.entries()) for (const k of DIRECTORY_KINDS) assert.equal(perKind.get(r.url)?.[String(k)], count(on[i]!, k), `kind ${k} on relay ${i}`);
    const dir = new RelayDirectory(homes[0]!.store.env);
    assert.equal(dir.get(served[0]!.url)?.quirks.negentropy, true, 'remembered in the quirks');
    assert.equal(dir.get(paged.url)?.quirks.negentropy, undefined);

    // Incremental: 3 new events on one NIP-77 relay; only those ids are reconciled and fetched from it.
    const fresh = [sign(keypair().sk, 0, T0 + 5), sign(keypair().sk, 3, T0 + 6), sign(keypair().sk, 10002, T0 + 7)];
    await publish(served[0]!.url, fresh);
    const again = await run(homes[0]!, 'listed');
    // ... and the older profile of x, which the home does not hold by id: fetched again, refused
    // without a signature check (a relay holding a stale version costs that version's bytes per run)
    assert.equal(again.events.nip77Ids, fresh.length + 1, 'exactly the ids the home lacks');
    assert.equal(again.events.stored, fresh.length);
    assert.equal(again.events.rejected, 1);
    assert.equal(again.events.verified, fresh.length);
    for (const ev of fresh) assert.ok(homes[0]!.has(ev.id));
  } finally {
    await paged.close();
    await Promise.all(served.map((r) => r.cleanup()));
    for (const h of homes) await h.close();
  }
});

test('a relay listing 77 that answers NEG-OPEN with garbage, a NOTICE or nothing: bounded, paged instead, nothing lost', async () => {
  const nip11 = { name: 'liar', supported_nips: [1, 11, 77] };
  const relays = [
    await new TestRelay({ flavour: 'strfry', cap: 20, neg: 'garbage', nip11 }).start(),
    await new TestRelay({ flavour: 'plain', neg: 'notice', nip11 }).start(),
    await new TestRelay({ flavour: 'rs', neg: 'silent', nip11 }).start(),
  ];
  const home = await openHome();
  try {
    const pop = population(120, [], T0);
    pop.forEach((ev, i) => relays[i % 3]!.add(ev));
    const seed = keypair();
    await home.ingest(relayList(seed.sk, T0, relays.map((r) => r.url)), { source: 'client' });
    const spider = createSpider({ config: spiderConfig({ seeds: [seed.pk], hops: 0, concurrency: 3, idleTimeout: '1s' }), store: home.store, ingest: home.ingest, logger: quietLog });
    const s = await spider.runOnce();
    await spider.stop();
    assert.equal(s.relays.reached, 3);
    assert.equal(s.events.stored, pop.length, 'every event, by paging');
    assert.equal(s.events.nip77Kinds, 0);
    assert.ok(s.events.nip77Fallbacks >= 3, 'each relay fell back');
    for (const r of relays) assert.ok(r.negOpens >= 1 && r.negOpens <= DIRECTORY_KINDS.length, 'at most one NEG-OPEN per kind');
    const dir = new RelayDirectory(home.store.env);
    for (const r of relays) {
      const rec = dir.get(r.url)!;
      assert.equal(rec.quirks.negentropy, false, `${r.url}: remembered as failed`);
      assert.equal(rec.lastOutcome, 'ok');
      assert.match(rec.lastError ?? '', /^NIP-77 failed \(.+\); paged instead/, `${r.url}: the record shows the failure`);
    }
  } finally {
    for (const r of relays) await r.close();
    await home.close();
  }
});
