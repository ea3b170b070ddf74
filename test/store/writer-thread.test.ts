// The store's writer on a thread of its own (store/writer-thread.ts): every write is answered after
// its commit and visible to the opening thread's next read, removals, sweeps and the follow graph's
// replacements come out as with the writer on the caller's thread, and the store that results is
// what `orbweaver verify` calls exact.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { openStore } from '../../src/store/index.js';
import type { EventStore } from '../../src/store/types.js';
import { parseFilter, type Filter } from '../../src/nostr/filter.js';
import { ev, hex, tmpDir } from './helpers.js';
import { runCli } from '../helpers/cli.js';

const CLI = fileURLToPath(new URL('../../src/cli.js', import.meta.url));

const filter = (f: object): Filter => parseFilter(f, { maxFilterValues: 5000, maxTagFilters: 16, searchKinds: [0] });
const follows = (author: string, at: number, people: string[]) =>
  ev({ pubkey: author, kind: 3, created_at: at, tags: people.map((p) => ['p', p]) });

/** The same writes into a store with the writer on this thread and one with it on its own, then their answers side by side. */
async function both<T>(fn: (store: EventStore) => Promise<T>): Promise<[T, T]> {
  const out: T[] = [];
  for (const writerThread of [false, true]) {
    const dir = tmpDir();
    const store = await openStore({ dir, mapSize: 256 * 1024 ** 2, writerThread });
    try {
      out.push(await fn(store));
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return [out[0]!, out[1]!];
}

test('a write is answered after its commit and read back at once on the opening thread', async () => {
  const dir = tmpDir();
  const store = await openStore({ dir, mapSize: 256 * 1024 ** 2, writerThread: true });
  try {
    for (let i = 0; i < 50; i++) {
      const e = ev({ content: `n${i}` });
      const r = await store.write(e, JSON.stringify(e));
      assert.equal(r.status, 'stored');
      assert.equal(typeof r.serial, 'number');
      // no turn of the event loop in between: the thread's snapshot was renewed with the answer
      assert.equal(store.get(e.id)?.content, `n${i}`);
      assert.equal(store.precheck(e), 'duplicate');
    }
    const dup = ev();
    await store.write(dup, JSON.stringify(dup));
    assert.equal((await store.write(dup, JSON.stringify(dup))).status, 'duplicate');
    assert.equal(store.stats().events, 51);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('many writes at once: one answer each, in batches, the same as on the caller\'s thread', async () => {
  const authors = Array.from({ length: 40 }, () => hex());
  const people = Array.from({ length: 300 }, () => hex());
  const pick = (i: number, n: number) => Array.from({ length: n }, (_, k) => people[(i * 7 + k * 13) % people.length]!);
  // fixed events, so both stores get the very same ones
  const events = authors.flatMap((a, i) => [
    follows(a, 1_700_000_000, pick(i, 50)),
    follows(a, 1_700_000_100, pick(i + 1, 60)), // replaces the first
    ev({ pubkey: a, kind: 0, created_at: 1_700_000_000, content: JSON.stringify({ name: `user${i}`, about: 'running code' }) }),
    ev({ pubkey: a, kind: 1, created_at: 1_700_000_050 + i, tags: [['p', people[i]!]] }),
  ]);
  const [inline, threaded] = await both(async (store) => {
    const results = await Promise.all(events.map((e) => store.write(e, JSON.stringify(e))));
    const followers = await Promise.all(people.slice(0, 30).map((p) => store.count([filter({ kinds: [3], '#p': [p] })])));
    const lists = await store.query([filter({ kinds: [3], '#p': [people[5]!] })], { defaultLimit: 500, maxLimit: 500 });
    const search = await store.query([filter({ kinds: [0], search: 'user1' })], { defaultLimit: 50, maxLimit: 50 });
    return { statuses: results.map((r) => r.status), followers, lists, search: search.length };
  });
  assert.equal(threaded.statuses.filter((s) => s === 'stored').length, 160);
  assert.deepEqual(threaded, inline);
});

test('a write given only its JSON (the ingest path with a writer thread) stores what a parsed one does, on either writer', async () => {
  const authors = Array.from({ length: 20 }, () => hex());
  const people = Array.from({ length: 120 }, () => hex());
  const events = authors.flatMap((a, i) => [
    follows(a, 1_700_000_000, people.slice(i, i + 40)),
    follows(a, 1_700_000_100, people.slice(i + 1, i + 45)), // replaces the first
    ev({ pubkey: a, kind: 0, created_at: 1_700_000_000, content: JSON.stringify({ name: `user${i}` }) }),
  ]);
  const [inline, threaded] = await both(async (store) => {
    // the ingest path passes null exactly when the store says its writer parses the JSON itself
    const fromJson = store.writesFromJson;
    const results = await Promise.all(events.map((e) => store.write(null, JSON.stringify(e))));
    const followers = await Promise.all(people.slice(0, 30).map((p) => store.count([filter({ kinds: [3], '#p': [p] })])));
    const lists = await store.query([filter({ kinds: [3], '#p': [people[25]!] })], { defaultLimit: 500, maxLimit: 500 });
    return { fromJson, statuses: results.map((r) => r.status), followers, lists, profile: store.get(events[2]!.id)?.content };
  });
  assert.equal(inline.fromJson, false);
  assert.equal(threaded.fromJson, true);
  assert.equal(threaded.statuses.filter((s) => s === 'stored').length, 60);
  assert.equal(threaded.profile, events[2]!.content);
  assert.ok(threaded.lists.length > 0);
  assert.deepEqual({ ...threaded, fromJson: null }, { ...inline, fromJson: null });
});
test('removals, the expiry sweep and HLL refreshes go through the thread', async () => {
  const dir = tmpDir();
  const store = await openStore({ dir, mapSize: 256 * 1024 ** 2, writerThread: true });
  try {
    const keep = ev();
    const gone = ev();
    const now = Math.floor(Date.now() / 1000);
    const expired = ev({ tags: [['expiration', String(now + 100)]] });
    for (const e of [keep, gone, expired]) await store.write(e, JSON.stringify(e));
    assert.equal(await store.remove(gone.id), true);
    assert.equal(store.get(gone.id), undefined);
    assert.equal(await store.remove(gone.id), false);
    assert.equal(await store.sweepExpired(now + 1000), 1);
    assert.equal(store.stats().events, 1);
    assert.equal(store.get(keep.id)?.id, keep.id);
    // a refresh of a counter that does not exist changes nothing and fails nothing
    await store.refreshHll([{ key: new Uint8Array(40), version: 1, registers: new Uint8Array(256) }]);
    assert.ok(store.disk() === null || typeof store.disk()!.full === 'boolean');
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('close writes what was queued; the store reopens whole and verify finds every derived index exact', async () => {
  const dir = tmpDir();
  try {
    const store = await openStore({ dir, mapSize: 256 * 1024 ** 2, writerThread: true });
    const people = Array.from({ length: 100 }, () => hex());
    const writes: Array<Promise<unknown>> = [];
    for (let i = 0; i < 200; i++) {
      const e = follows(hex(), 1_700_000_000 + i, people.slice(i % 50, (i % 50) + 30));
      writes.push(store.write(e, JSON.stringify(e)));
    }
    // not awaited: close must still write them and answer each
    await store.close();
    const answered = await Promise.allSettled(writes);
    assert.equal(answered.filter((a) => a.status === 'fulfilled').length, 200);
    await assert.rejects(store.write(ev(), '{}'), /closed/);
    const again = await openStore({ dir, mapSize: 256 * 1024 ** 2 });
    assert.equal(again.stats().events, 200);
    await again.close();
    const out = execFileSync(process.execPath, [CLI, 'verify', '--data', dir], { encoding: 'utf8' });
    assert.match(out, /^clean: every derived index matches the 200 stored events/m, out);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a store.writerThread that is not a boolean is refused, naming the key', () => {
  const r = runCli(['config'], { env: { ORBWEAVER_STORE_WRITER_THREAD: 'sometimes' } });
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /store\.writerThread|ORBWEAVER_STORE_WRITER_THREAD/);
});

test('a writer thread that dies fails the writes waiting on it and every later one; reads go on and close returns', { timeout: 30_000 }, async () => {
  const dir = tmpDir();
  const store = await openStore({ dir, mapSize: 256 * 1024 ** 2, writerThread: true });
  try {
    const kept = ev();
    await store.write(kept, JSON.stringify(kept));
    // the thread ends under the store (as if it crashed): reach it past the EventStore interface
    const worker = (store as unknown as { writer: { worker: { terminate(): Promise<number> } } }).writer.worker;
    const waiting = ev();
    const pending = store.write(waiting, JSON.stringify(waiting));
    await worker.terminate();
    await assert.rejects(pending, /writer thread stopped/);
    await assert.rejects(store.write(ev(), '{}'), /writer thread stopped/);
    assert.equal(store.get(kept.id)?.id, kept.id);
  } finally {
    await store.close(); // would wait forever for an exit that already happened
    rmSync(dir, { recursive: true, force: true });
  }
});
