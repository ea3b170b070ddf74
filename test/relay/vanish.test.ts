// NIP-62 end to end on the real relay process: a client's request to vanish removes the author's
// older events and the gift wraps to them and keeps newer ones; the request is served; what it
// covers is refused again from a client, from `import` and from `sync`; a deletion of the request
// is refused; `verify` is clean with the tombstones and `verify --repair` keeps them (a restarted
// relay still refuses). The spider's side is test/spider/vanish.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startRelayProcess, startRelayProcesses, tempDir } from '../helpers/relay-process.js';
import { Author, Client, ids, now } from '../helpers/client.js';
import { runCli, runCliAsync } from '../helpers/cli.js';
import type { NostrEvent } from '../../src/nostr/event.js';

const sorted = (a: string[]) => [...a].sort();

async function publishAll(url: string, evs: NostrEvent[]): Promise<void> {
  const c = await Client.open(url);
  try {
    for (const e of evs) assert.deepEqual(await c.publish(e), { ok: true, message: '' }, `kind ${e.kind}`);
  } finally {
    c.close();
  }
}

async function query(url: string, filter: object): Promise<string[]> {
  const c = await Client.open(url);
  try {
    return sorted(ids((await c.query(filter)).events));
  } finally {
    c.close();
  }
}

/** An author's history before a request to vanish: a note, a profile, a follow list, a deletion, and a gift wrap to them. */
function history(author: Author, base: number, follows: string[]): NostrEvent[] {
  return [
    author.sign({ kind: 1, created_at: base, content: 'an old note' }),
    author.sign({ kind: 0, created_at: base + 1, content: '{"name":"soon gone"}' }),
    author.sign({ kind: 3, created_at: base + 2, tags: follows.map((p) => ['p', p]) }),
    author.sign({ kind: 5, created_at: base + 3, tags: [['e', 'f'.repeat(64)]] }),
    new Author().sign({ kind: 1059, created_at: base + 4, tags: [['p', author.pk]], content: 'sealed' }),
  ];
}

test('a client\'s request to vanish; refused copies from a client and from import; verify and verify --repair keep the tombstone', async () => {
  const dataDir = tempDir();
  let relay = await startRelayProcess({ dataDir });
  try {
    const base = now() - 3600;
    const alice = new Author();
    const bob = new Author();
    const old = history(alice, base, [bob.pk]);
    const bobNote = bob.sign({ created_at: base, content: 'bob stays' });
    await publishAll(relay.url, [...old, bobNote]);

    const c = await Client.open(relay.url);
    // requests this relay does not take: one naming only another relay, one naming none
    const elsewhere = await c.publish(alice.sign({ kind: 62, created_at: base + 10, tags: [['relay', 'wss://elsewhere.example']] }));
    assert.equal(elsewhere.ok, false);
    assert.match(elsewhere.message, /^blocked: this request to vanish \(NIP-62\) names other relays/);
    assert.match((await c.publish(alice.sign({ kind: 62, created_at: base + 10 }))).message, /^invalid: /);
    assert.equal((await query(relay.url, { authors: [alice.pk] })).length, 4, 'nothing deleted by those');

    const req = alice.sign({ kind: 62, created_at: base + 10, tags: [['relay', relay.url]], content: 'please forget me' });
    assert.deepEqual(await c.publish(req), { ok: true, message: '' });
    const newer = alice.sign({ created_at: base + 20, content: 'after the request' });
    const wrapNewer = new Author().sign({ kind: 1059, created_at: base + 20, tags: [['p', alice.pk]], content: 'sealed' });
    await publishAll(relay.url, [newer, wrapNewer]);

    // read: the request and what came after, nothing older; bob untouched; the follow graph forgot alice's list
    assert.deepEqual(await query(relay.url, { authors: [alice.pk] }), sorted([req.id, newer.id]));
    assert.deepEqual(await query(relay.url, { ids: old.map((e) => e.id) }), []);
    assert.deepEqual(await query(relay.url, { kinds: [62] }), [req.id]);
    assert.deepEqual(await query(relay.url, { authors: [bob.pk] }), [bobNote.id]);
    assert.equal(((await c.count({ kinds: [3], '#p': [bob.pk] }))[2] as { count: number }).count, 0);
    // gift wraps are read by their recipient, authenticated: only the newer one is left
    const reader = await Client.open(relay.url);
    assert.equal((await reader.authenticate(alice, relay.url)).ok, true);
    assert.deepEqual(sorted(ids((await reader.query({ kinds: [1059], '#p': [alice.pk] })).events)), [wrapNewer.id]);
    reader.close();

    // republished copies are refused, and a deletion of the request is refused
    for (const e of old) {
      const r = await c.publish(e);
      assert.equal(r.ok, false, `kind ${e.kind}`);
      assert.match(r.message, /^blocked: .*requested to vanish \(NIP-62\)/);
    }
    const undo = await c.publish(alice.sign({ kind: 5, created_at: base + 30, tags: [['e', req.id], ['k', '62']] }));
    assert.equal(undo.ok, false);
    assert.match(undo.message, /^blocked: a request to vanish cannot be withdrawn/);
    assert.deepEqual(await query(relay.url, { kinds: [62] }), [req.id]);
    c.close();

    const info = (await (await fetch(relay.httpUrl, { headers: { Accept: 'application/nostr+json' } })).json()) as { supported_nips: number[] };
    assert.ok(info.supported_nips.includes(62), 'NIP-62 advertised');
    assert.equal(await relay.stop(), 0);

    // import: alice's old events again, and carol's history with her request to ALL_RELAYS after it
    const carol = new Author();
    const carolOld = history(carol, base, [bob.pk]);
    const carolReq = carol.sign({ kind: 62, created_at: base + 10, tags: [['relay', 'ALL_RELAYS']] });
    const file = join(dataDir, 'again.jsonl');
    writeFileSync(file, [...old, ...carolOld, carolReq].map((e) => JSON.stringify(e)).join('\n') + '\n');
    const imp = runCli(['import', file, '--data', dataDir, '--json']);
    assert.equal(imp.status, 0, imp.stderr);
    const summary = JSON.parse(imp.stdout) as { stored: number; notStored: Record<string, number>; rejected: number };
    assert.equal(summary.notStored.deleted, old.length, 'alice\'s copies counted as deleted (not stored)');
    assert.equal(summary.stored, carolOld.length + 1, 'carol\'s history went in before her request in the file');
    assert.equal(summary.rejected, 0);

    const verified = runCli(['verify', '--data', dataDir]);
    assert.equal(verified.status, 0, verified.stdout + verified.stderr);
    assert.match(verified.stdout, /requests to vanish \(NIP-62\): 2 authors; stored events they cover: 0/);
    const repaired = runCli(['verify', '--repair', '--data', dataDir]);
    assert.equal(repaired.status, 0, repaired.stdout + repaired.stderr);
    assert.match(repaired.stdout, /requests to vanish \(NIP-62\): 2 authors/);

    relay = await startRelayProcess({ dataDir });
    assert.deepEqual(await query(relay.url, { authors: [alice.pk, carol.pk] }), sorted([req.id, newer.id, carolReq.id]));
    assert.deepEqual(await query(relay.url, { kinds: [62] }), sorted([req.id, carolReq.id]));
    const again = await Client.open(relay.url);
    for (const e of [old[0]!, carolOld[1]!]) assert.match((await again.publish(e)).message, /^blocked: .*requested to vanish/, 'the tombstones survived the repair');
    assert.equal((await again.publish(carol.sign({ created_at: base + 11 }))).ok, true, 'a later event is taken');
    again.close();
  } finally {
    await relay.cleanup();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('sync from a relay that still holds the author\'s events brings none of them back', async () => {
  const [a, b] = await startRelayProcesses({}, {});
  try {
    const base = now() - 3600;
    const alice = new Author();
    const old = history(alice, base, [new Author().pk]).filter((e) => e.kind !== 1059); // gift wraps are not offered to a reader who is not their recipient
    await publishAll(a.url, old);
    await publishAll(b.url, old);
    const req = alice.sign({ kind: 62, created_at: base + 10, tags: [['relay', b.url]] });
    await publishAll(b.url, [req]);
    assert.deepEqual(await query(b.url, { authors: [alice.pk] }), [req.id]);

    const r = await runCliAsync(['sync', a.url, '--dir', 'down', '--data', b.dataDir, '--port', String(b.port), '--json']);
    assert.equal(r.status, 0, r.stderr);
    const summary = JSON.parse(r.stdout.trim().split('\n').pop()!) as { reconcile: { need: number }; down: { statuses: Record<string, number> } };
    assert.equal(summary.reconcile.need, old.length, 'b lacks them');
    assert.deepEqual(summary.down.statuses, { deleted: old.length });
    assert.deepEqual(await query(b.url, { authors: [alice.pk] }), [req.id]);
  } finally {
    await a.cleanup();
    await b.cleanup();
  }
});
