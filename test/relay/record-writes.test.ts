// ORBWEAVER-RECORD: how a command beside the relay that owns the data directory (`spider --once`)
// writes the directory's records without opening the store for writing (one writing process per
// store: src/store/writer-lock.ts). Only a connection authenticated with the data directory's local
// key is heard; the operation is applied by the relay, once per request id, and bad input gets a
// prefixed refusal on a connection that keeps working.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startRelayProcess } from '../helpers/relay-process.js';
import { Author, Client } from '../helpers/client.js';
import { readLocalKey } from '../../src/app/local-key.js';
import { openStore } from '../../src/store/index.js';
import { RelayDirectory } from '../../src/directory/records.js';
import { SpiderRuns } from '../../src/directory/runs.js';

const V = 'ORBWEAVER-RECORD';
const answer = (c: Client, reqId: string) => c.next((m) => m[0] === V && m[1] === reqId, 10_000, `${V} answer to ${reqId}`);
const summary = (at: number) => ({
  startedAt: at, finishedAt: at + 5, durationMs: 5, seeds: 1, seedsWithoutList: 0, hops: [],
  relays: { total: 1, reached: 1, failed: 0, refused: 0, skipped: 0 },
  events: { fetched: 3, stored: 3, duplicate: 0, replaced: 0, rejected: 0, invalid: 0 },
  failures: [], refusals: [], bootstrapFailures: [], aborted: false,
});

test('record writes: refused without the local key, applied once per request id with it (across a restart too), bad ones refused with a prefix', async () => {
  const relay = await startRelayProcess();
  try {
    const url = 'wss://relay.example.com/';
    const discovered = [url, 0, ['seed'], 2, Date.now()];

    const anon = await Client.open(relay.url);
    anon.send([V, 'a1', 'directory.discovered', discovered]);
    const a1 = await answer(anon, 'a1');
    assert.equal(a1[2], false);
    assert.match(String(a1[3]), /^restricted: .*local key/);
    const stranger = new Author();
    assert.equal((await anon.authenticate(stranger, relay.url)).ok, true);
    anon.send([V, 'a2', 'directory.discovered', discovered]);
    assert.match(String((await answer(anon, 'a2'))[3]), /^restricted: /, 'another key, however authenticated, is not the local key');
    anon.close();

    const sk = readLocalKey(relay.dataDir);
    assert.ok(sk, 'the relay created its local key');
    const local = await Client.open(relay.url);
    assert.equal((await local.authenticate(new Author(sk), relay.url)).ok, true);
    local.send([V, 'd1', 'directory.discovered', discovered]);
    const d1 = await answer(local, 'd1');
    assert.equal(d1[2], true, String(d1[3]));
    assert.equal((d1[3] as { url: string; hop: number }).url, url);

    // a relay record with its links to 4,000 relays (~240 KB): larger than limits.maxMessageLength, taken from the local key
    const links = Object.fromEntries(Array.from({ length: 4000 }, (_, i) => [`wss://relay-${i}.example.com/with/a/longer/path`, i + 1]));
    const result = { url, hop: 0, outcome: 'ok', nip11: null, quirks: {}, cursors: {}, counts: { fetched: 1, stored: 1, duplicate: 0, rejected: 0, invalid: 0, truncated: 0, truncatedSlices: 0, verified: 1, bytes: 1 }, links, ignoredLists: 0, startedAt: Date.now(), durationMs: 1 };
    assert.ok(JSON.stringify(result).length > 131_072);
    local.send([V, 'big', 'directory.applyResult', [result, Date.now()]]);
    const big = await answer(local, 'big');
    assert.equal(big[2], true, String(big[3]));
    assert.equal(Object.keys((big[3] as { links: object }).links).length, 4000);
    // the same size from anyone else is refused before it is read
    const other = await Client.open(relay.url);
    other.send([V, 'big', 'directory.applyResult', [result, Date.now()]]);
    assert.match(String((await other.next((m) => m[0] === 'NOTICE', 5000, 'NOTICE for a large message'))[1]), /^invalid: message larger than/);
    other.close();

    // the same request id twice (a command that lost its connection sends it again): counted once
    local.send([V, 'r1', 'runs.record', [summary(1_000), 'orbweaver spider --once']]);
    local.send([V, 'r1', 'runs.record', [summary(1_000), 'orbweaver spider --once']]);
    assert.equal((await answer(local, 'r1'))[2], true);
    assert.equal((await answer(local, 'r1'))[2], true);
    local.send([V, 'r2', 'runs.record', [summary(2_000), 'orbweaver spider --once']]);
    assert.equal((await answer(local, 'r2'))[2], true);

    local.send([V, 'x1', 'store.drop', []]);
    assert.match(String((await answer(local, 'x1'))[3]), /^invalid: unknown record operation/);
    local.send([V, 'x2', 'directory.discovered', [42, 0, [], 0, 0]]);
    assert.match(String((await answer(local, 'x2'))[3]), /^invalid: url must be a string/);
    local.send([V, 'x3', 'runs.record']);
    const notice = await local.next((m) => m[0] === 'NOTICE', 5000, 'NOTICE for a short message');
    assert.match(String(notice[1]), /^invalid: ORBWEAVER-RECORD takes/);
    // the connection still works
    const after = await local.query({ kinds: [1], limit: 1 });
    assert.deepEqual(after.events, []);
    local.close();

    // what the relay committed, read as another process reads it; the relay still holds the writer lock
    const lock = JSON.parse(readFileSync(join(relay.dataDir, 'writer.lock'), 'utf8')) as { pid: number };
    assert.equal(lock.pid, relay.proc.pid);
    const store = await openStore({ dir: relay.dataDir, readOnly: true });
    try {
      assert.equal(new RelayDirectory(store.env).get(url)?.mentions, 2);
      const runs = new SpiderRuns(store.env);
      assert.equal(runs.count(), 2, 'r1 applied once, r2 once');
      assert.equal(runs.last()?.startedAt, 2_000);
      assert.equal(runs.last()?.by, 'orbweaver spider --once');
    } finally {
      await store.close();
    }

    // the relay restarts before the command got its answer; the command sends r1 again: answered, not counted again
    assert.equal(await relay.stop(), 0);
    const again = await startRelayProcess({ dataDir: relay.dataDir });
    try {
      const c = await Client.open(again.url);
      assert.equal((await c.authenticate(new Author(sk), again.url)).ok, true);
      c.send([V, 'r1', 'runs.record', [summary(1_000), 'orbweaver spider --once']]);
      assert.equal((await answer(c, 'r1'))[2], true);
      c.send([V, 'd1', 'directory.discovered', [url, 0, ['seed'], 5, Date.now()]]);
      const d1again = await answer(c, 'd1');
      assert.equal((d1again[3] as { mentions: number }).mentions, 2, 'the answer it gave the first time');
      c.send([V, 'r3', 'runs.record', [summary(3_000), 'orbweaver spider --once']]);
      assert.equal((await answer(c, 'r3'))[2], true);
      c.close();
      const after = await openStore({ dir: again.dataDir, readOnly: true });
      try {
        assert.equal(new SpiderRuns(after.env).count(), 3, 'r1 and r2 once each before the restart, r3 after; r1 again not counted');
        assert.equal(new RelayDirectory(after.env).get(url)?.mentions, 2, 'd1 again not applied');
      } finally {
        await after.close();
      }
    } finally {
      await again.stop();
    }
  } finally {
    await relay.cleanup();
  }
});
