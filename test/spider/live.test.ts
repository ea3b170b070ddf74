// Live mode on the real relay process: after its first crawl the spider keeps subscriptions open on
// the relays its directory names, and what people publish there reaches our store and our own live
// subscribers; a remote restarted mid-stream loses nothing (the catch-up fetches what was published
// while it was down); remotes that lie (forged signatures, events outside the filter, far-future
// dates) or flood are cut off, and the others keep flowing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startRelayProcess, startRelayProcesses, type RelayProcess } from '../helpers/relay-process.js';
import { Client } from '../helpers/client.js';
import { TestRelay, keypair, sign, relayList } from '../fixtures/test-relay.js';
import { waitFor } from './harness.js';
import { freePort } from '../distributed/harness.js';
import { runCliAsync } from '../helpers/cli.js';
import type { NostrEvent } from '../../src/nostr/event.js';

const T0 = Math.floor(Date.now() / 1000) - 5000;
const now = () => Math.floor(Date.now() / 1000);

type Status = { sections: Array<{ title: string; rows: Array<[string, string]> }> };
async function liveRows(home: RelayProcess): Promise<Record<string, string>> {
  const st = (await (await fetch(home.httpUrl + '/status.json')).json()) as Status;
  return Object.fromEntries(st.sections.find((s) => s.title === 'Live directory')?.rows ?? []);
}
async function waitRows(home: RelayProcess, cond: (rows: Record<string, string>) => boolean, what: string, timeoutMs = 30_000): Promise<Record<string, string>> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const rows = await liveRows(home);
    if (cond(rows)) return rows;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(rows)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * The home relay: its spider crawls the seed's relays (hop 0, bootstrap from `bootstrap`) once a day
 * and follows them live; `env` adds the live settings of a test. LIVE_TEST_LOGS=1 logs at debug.
 */
function startHome(seed: string, bootstrap: string, env: Record<string, string>): Promise<RelayProcess> {
  return startRelayProcess({
    env: {
      ORBWEAVER_SPIDER: '1',
      ORBWEAVER_SPIDER_SEEDS: seed,
      ORBWEAVER_SPIDER_BOOTSTRAP_RELAYS: bootstrap,
      ORBWEAVER_SPIDER_ALLOW_PRIVATE: '1',
      ORBWEAVER_SPIDER_HOPS: '0',
      ORBWEAVER_SPIDER_IDLE_TIMEOUT: '2s',
      ORBWEAVER_SPIDER_PAUSE: '0',
      ORBWEAVER_SPIDER_INTERVAL: '24h',
      ...env,
      ...(process.env.LIVE_TEST_LOGS ? { ORBWEAVER_LOG_LEVEL: 'debug' } : {}),
    },
  });
}

test('live mode: updates arrive, a restarted remote is caught up, liars and floods are cut off', async () => {
  // a serves NIP-77 (its catch-up reconciles), b does not (its catch-up pages)
  const a = await new TestRelay({ flavour: 'strfry', neg: 'serve', nip11: { supported_nips: [1, 11, 77] } }).start();
  const b = await new TestRelay({ flavour: 'rs' }).start();
  const forger = await new TestRelay().start();
  const mismatch = await new TestRelay().start();
  const future = await new TestRelay().start();
  const flood = await new TestRelay().start();
  const remotes = [a, b, forger, mismatch, future, flood];
  const seed = keypair();
  const alice = keypair();
  const bob = keypair();
  // The seed's list names every remote as a write relay; alice writes to a, bob to b.
  a.add(relayList(seed.sk, T0, remotes.map((r) => r.url)), relayList(alice.sk, T0, [a.url]), sign(alice.sk, 0, T0, [], 'alice v1'));
  b.add(relayList(bob.sk, T0, [b.url]), sign(bob.sk, 0, T0, [], 'bob v1'));
  const home = await startHome(seed.pk, a.url, {
    ORBWEAVER_SPIDER_LIVE_RECONNECT_BACKOFF: '100ms',
    ORBWEAVER_SPIDER_LIVE_MAX_RECONNECT_BACKOFF: '500ms',
    ORBWEAVER_SPIDER_LIVE_EVENTS_PER_SECOND: '5',
  });
  const sub = await Client.open(home.url);
  try {
    // every remote followed live once the first crawl is done
    await waitRows(home, (r) => remotes.every((x) => /^live;/.test(r[x.url] ?? '')), 'every remote live');
    await waitFor(() => remotes.every((r) => r.liveSubs >= 1), 10_000, 'a live subscription on every remote');
    const since = now() - 120;
    sub.send(['REQ', 'live', { kinds: [0, 10002, 10050], since }]);
    await sub.next((m) => m[0] === 'EOSE' && m[1] === 'live');
    const got = () => new Set(sub.inbox.filter((m) => m[0] === 'EVENT' && m[1] === 'live').map((m) => (m[2] as NostrEvent).id));

    // 1. updates published on the authors' own relays reach our subscriber
    const aliceV2 = sign(alice.sk, 0, now(), [], 'alice v2');
    const bobDm = sign(bob.sk, 10050, now(), [['relay', b.url]]);
    a.add(aliceV2);
    b.add(bobDm);
    await waitFor(() => got().has(aliceV2.id) && got().has(bobDm.id), 15_000, 'live updates delivered to our subscriber');

    // 2. a remote restarted mid-stream: what it received while we were away is caught up
    const port = a.port;
    await a.close();
    await waitRows(home, (r) => !/^live;/.test(r[a.url] ?? ''), 'a seen as dropped');
    // dated before the reconnect: a new subscription (since = its start) would not bring them, only the catch-up
    const whileDown = [sign(alice.sk, 10002, now() - 30, [['r', a.url], ['r', b.url]]), sign(keypair().sk, 0, now() - 30, [], 'new person')];
    a.add(...whileDown);
    await a.start(port);
    await waitFor(() => whileDown.every((e) => got().has(e.id)), 20_000, 'events published while the remote was down caught up');
    assert.ok(a.negFilters.some((f) => typeof f.since === 'number'), 'the catch-up reconciled (NIP-77) only the range since the last event seen');

    // 3. liars are refused and cut off
    const forged = { ...sign(alice.sk, 0, now(), [], 'forged'), content: 'changed after signing' };
    forger.injectLive(forged);
    mismatch.injectLive(sign(alice.sk, 1, now(), [], 'a note: not what we asked for'));
    future.injectLive(sign(alice.sk, 0, now() + 7200, [], 'from the future'));
    // 4. a flood: more than 5 events/s (burst 50), valid ones
    const burst = Array.from({ length: 120 }, (_, i) => sign(keypair().sk, 0, now(), [], `flood ${i}`));
    flood.injectLive(...burst);
    const rows = await waitRows(home, (r) => [forger, mismatch, future, flood].every((x) => /^cut-off/.test(r[x.url] ?? '')), 'liars and the flood cut off');
    assert.match(rows[forger.url], /forged/);
    assert.match(rows[mismatch.url], /mismatch/);
    assert.match(rows[future.url], /future/);
    assert.match(rows[flood.url], /flood/);

    // the others keep flowing
    const bobV2 = sign(bob.sk, 0, now(), [], 'bob v2');
    b.add(bobV2);
    await waitFor(() => got().has(bobV2.id), 15_000, 'b still live after the cut-offs');
    assert.ok(!got().has(forged.id), 'the forgery never reached our subscriber');
    const check = await Client.open(home.url);
    try {
      assert.equal((await check.query({ ids: [forged.id] })).events.length, 0, 'the forgery is not stored');
    } finally {
      check.close();
    }
    const flooded = burst.filter((e) => got().has(e.id)).length;
    assert.ok(flooded < burst.length, `the flood was bounded (${flooded} of ${burst.length} taken live)`);
    const directory = (await (await fetch(home.httpUrl + '/directory.json')).json()) as { live?: { remotes: Array<{ url: string; state: string }> } };
    assert.equal(directory.live?.remotes.find((r) => r.url === b.url)?.state, 'live', '/directory.json shows b live');
    assert.match(await (await fetch(home.httpUrl + '/directory')).text(), /Live subscriptions/);
  } catch (e) {
    if (process.env.LIVE_TEST_LOGS) console.error(JSON.stringify(await liveRows(home)), JSON.stringify(a.reqs.slice(-3)), sub.inbox.length);
    if (process.env.LIVE_TEST_LOGS) for (const l of home.logs) if (/live|spider/.test(String(l.msg))) console.error(JSON.stringify(l).slice(0, 400));
    throw e;
  } finally {
    sub.close();
    await home.cleanup();
    await Promise.all(remotes.map((r) => r.close().catch(() => {})));
  }
});

test('outbox refresh: pubkeys whose lists name uncrawled relays, or are old, are fetched from their own write relays in batched REQs', async () => {
  const a = await new TestRelay({ flavour: 'strfry' }).start();
  const c = await new TestRelay({ flavour: 'nostream' }).start();
  const seed = keypair();
  const carol = keypair();
  const dave = keypair();
  const DAY = 86_400;
  // hop 0 is a alone; carol's list (recent) names c, which the spider never crawls; dave's list is
  // ten days old and names c as well. Their profiles exist only on c.
  a.add(relayList(seed.sk, T0, [a.url]), ...Array.from({ length: 3 }, () => relayList(keypair().sk, T0, [a.url])));
  a.add(relayList(carol.sk, T0, [c.url]), relayList(dave.sk, now() - 10 * DAY, [c.url]));
  const onC = [sign(carol.sk, 0, T0, [], 'carol on her own relay'), sign(dave.sk, 0, T0, [], 'dave on his own relay'), sign(dave.sk, 10050, T0, [['relay', c.url]])];
  c.add(...onC);
  // a is the one live relay: what reaches us from c comes from the outbox refresh
  const home = await startHome(seed.pk, a.url, { ORBWEAVER_SPIDER_LIVE_MAX_RELAYS: '1' });
  const q = await Client.open(home.url);
  try {
    const held = async () => new Set((await q.query({ ids: onC.map((e) => e.id) })).events.map((e) => e.id));
    const end = Date.now() + 30_000;
    let got = await held();
    while (got.size < onC.length && Date.now() < end) {
      await new Promise((r) => setTimeout(r, 200));
      got = await held();
    }
    assert.equal(got.size, onC.length, 'carol\'s and dave\'s events fetched from c');
    assert.ok(c.reqs.some((f) => Array.isArray(f.authors) && f.authors.includes(carol.pk) && f.authors.includes(dave.pk)), 'one REQ asked for both authors');
    const rows = await liveRows(home);
    assert.match(rows['outbox refresh'], /rounds; last: /);
  } catch (e) {
    if (process.env.LIVE_TEST_LOGS) for (const l of home.logs) if (/live|outbox/.test(String(l.msg))) console.error(JSON.stringify(l).slice(0, 400));
    throw e;
  } finally {
    q.close();
    await home.cleanup();
    await Promise.all([a.close(), c.close()]);
  }
});

// The same with this relay as the remotes, at its public defaults: what people publish to their own
// orbweaver relays reaches the home's live subscribers, and a remote restarted with its data loses
// nothing (what it took right after coming back, dated before the home's new subscription, arrives
// by the catch-up).
test('live mode against orbweaver remotes at public defaults: updates arrive, a restarted remote is caught up', async () => {
  // r1 on a port of its own choosing, as an operator runs a relay: a listen on port 0 does not set
  // SO_REUSEADDR, and a restart on that port would wait out the old connections' TIME_WAIT
  const [r1, r2] = await startRelayProcesses({ port: await freePort() }, {});
  const seed = keypair();
  const alice = keypair();
  const bob = keypair();
  const publish = async (url: string, ...evs: NostrEvent[]) => {
    const c = await Client.open(url);
    try {
      for (const e of evs) assert.equal((await c.publish(e)).ok, true, `${url} stored ${e.kind}`);
    } finally {
      c.close();
    }
  };
  await publish(r1!.url, relayList(seed.sk, T0, [r1!.url, r2!.url]), relayList(alice.sk, T0, [r1!.url]), sign(alice.sk, 0, T0, [], 'alice v1'));
  await publish(r2!.url, relayList(bob.sk, T0, [r2!.url]), sign(bob.sk, 0, T0, [], 'bob v1'));
  let remote1 = r1!;
  const home = await startHome(seed.pk, r1!.url, {
    ORBWEAVER_SPIDER_LIVE_RECONNECT_BACKOFF: '100ms',
    ORBWEAVER_SPIDER_LIVE_MAX_RECONNECT_BACKOFF: '500ms',
  });
  const sub = await Client.open(home.url);
  try {
    await waitRows(home, (r) => [r1!, r2!].every((x) => /^live;/.test(r[x.url] ?? '')), 'both orbweaver remotes live');
    sub.send(['REQ', 'live', { kinds: [0, 10002], since: now() - 120 }]);
    await sub.next((m) => m[0] === 'EOSE' && m[1] === 'live');
    const got = () => new Set(sub.inbox.filter((m) => m[0] === 'EVENT' && m[1] === 'live').map((m) => (m[2] as NostrEvent).id));

    const aliceV2 = sign(alice.sk, 0, now(), [], 'alice v2');
    const bobV2 = sign(bob.sk, 10002, now(), [['r', r2!.url], ['r', r1!.url]]);
    await publish(r1!.url, aliceV2);
    await publish(r2!.url, bobV2);
    await waitFor(() => got().has(aliceV2.id) && got().has(bobV2.id), 15_000, 'updates on the orbweaver remotes delivered to our subscriber');

    // r1 stops (SIGTERM); while it is down it takes events another way (imported into its data
    // directory), dated before the home's next subscription: only the catch-up can bring them.
    // Then it comes back on the same port with its data.
    const { port, dataDir } = remote1;
    assert.equal(await remote1.stop(), 0);
    await waitRows(home, (r) => !/^live;/.test(r[r1!.url] ?? ''), 'r1 seen as dropped');
    const whileAway = [sign(alice.sk, 10002, now() - 30, [['r', r1!.url], ['r', r2!.url]]), sign(keypair().sk, 0, now() - 30, [], 'new person')];
    const imported = await runCliAsync(['import', '--data', dataDir, '--strict'], { input: whileAway.map((e) => JSON.stringify(e)).join('\n') + '\n' });
    assert.equal(imported.status, 0, imported.stderr);
    remote1 = await startRelayProcess({ port, dataDir });
    await waitFor(() => whileAway.every((e) => got().has(e.id)), 20_000, 'what r1 took while we were away caught up');
    const check = await Client.open(home.url);
    try {
      assert.deepEqual((await check.query({ ids: whileAway.map((e) => e.id) })).events.map((e) => e.id).sort(), whileAway.map((e) => e.id).sort(), 'stored at home');
    } finally {
      check.close();
    }
  } finally {
    sub.close();
    await home.cleanup();
    await Promise.all([remote1.cleanup(), r2!.cleanup()]);
  }
});
