// Durability across close/reopen and kill -9, the schema version and migrations, and several
// writers (worker thread, second process) deciding the rules on one directory.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { open } from 'lmdb';
import type { NostrEvent } from '../../src/nostr/event.js';
import { openStore } from '../../src/store/index.js';
import { migrate, SCHEMA_VERSION, VERSION_KEY } from '../../src/store/migrations.js';
import { openDbs } from '../../src/store/schema.js';
import { ev, hex, ids, newestFirst, put, tmpDir } from './helpers.js';

const CHILD = fileURLToPath(new URL('./writer-child.js', import.meta.url));

/** Runs writer-child.js as a process of its own: its results, or its exit and stderr as the error. */
function writerProcess(job: object): Promise<{ statuses: string[] }> {
  return new Promise((resolve, reject) => {
    const c = spawn(process.execPath, [CHILD, JSON.stringify(job)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    c.stdout.on('data', (d: Buffer) => (out += d.toString()));
    c.stderr.on('data', (d: Buffer) => (err += d.toString()));
    c.on('error', reject);
    c.on('exit', (code, signal) => (code === 0 ? resolve(JSON.parse(out) as { statuses: string[] }) : reject(new Error(`writer process exited ${code ?? signal}: ${err.slice(0, 500)}`))));
  });
}

test('durability: events, indexes and tombstones survive close and reopen', async () => {
  const dir = tmpDir();
  try {
    const pk = hex();
    const a = ev({ pubkey: pk, tags: [['t', 'keep']] });
    const b = ev({ pubkey: pk });
    let s = await openStore({ dir });
    await put(s, a);
    await put(s, b);
    await put(s, ev({ kind: 5, pubkey: pk, tags: [['e', b.id]] }));
    await s.close();
    s = await openStore({ dir });
    assert.deepEqual(s.get(a.id), a);
    assert.deepEqual(await ids(s, [{ tags: [['t', ['keep']]] }]), [a.id]);
    assert.equal((await put(s, b)).status, 'deleted');
    // serials keep growing after reopen (no reuse)
    const c = ev({ pubkey: pk, created_at: a.created_at });
    await put(s, c);
    assert.equal(s.stats().events, 3);
    await s.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('durability: every acknowledged write survives kill -9 of the writer process', async () => {
  const dir = tmpDir();
  try {
    const child = spawn(process.execPath, [CHILD, JSON.stringify({ dir, mode: 'ack' })], { stdio: ['ignore', 'pipe', 'inherit'] });
    const acked: string[] = [];
    let buf = '';
    await new Promise<void>((resolve, reject) => {
      child.on('error', reject);
      child.stdout.on('data', (d: Buffer) => {
        buf += d.toString();
        const lines = buf.split('\n');
        buf = lines.pop()!;
        acked.push(...lines);
        if (acked.length >= 300 && !child.killed) {
          child.kill('SIGKILL');
          resolve();
        }
      });
      child.on('exit', () => resolve());
    });
    await new Promise((r) => child.once('exit', r).once('close', r));
    assert.ok(acked.length >= 300, 'the writer acknowledged events before being killed');
    const s = await openStore({ dir });
    for (const id of acked) assert.ok(s.get(id), `acknowledged ${id} is stored`);
    await s.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('schema: a new database is at the current version; newer versions are refused; migrations run in order', async () => {
  const dir = tmpDir();
  try {
    const s = await openStore({ dir });
    const meta = s.env.openDB<unknown, string>({ name: 'ev.meta' });
    assert.equal(meta.get(VERSION_KEY), SCHEMA_VERSION);
    assert.equal(SCHEMA_VERSION, 5);
    await s.close();

    // the runner with a hypothetical version 6
    const env = open({ path: dir, maxDbs: 64 });
    const dbs = openDbs(env);
    const seen: number[] = [];
    const noop = (n: number) => Array.from({ length: n }, () => () => {});
    const report = migrate(env, dbs, [null, ...noop(4), () => seen.push(5), () => seen.push(6)], 6);
    assert.deepEqual(report, { from: 5, to: 6 });
    assert.deepEqual(seen, [6], 'only the missing migration runs');
    assert.deepEqual(migrate(env, dbs, [null, ...noop(5), () => seen.push(6)], 6), { from: 6, to: 6 });
    assert.deepEqual(seen, [6]);
    // a failing migration leaves the version untouched
    assert.throws(() => migrate(env, dbs, [null, null, null, null, null, null, null, () => { dbs.meta.putSync('junk', 1); throw new Error('boom'); }], 7), /boom/);
    assert.equal(dbs.meta.get(VERSION_KEY), 6);
    assert.equal(dbs.meta.get('junk'), undefined, 'aborted with the transaction');
    await env.close();

    await assert.rejects(openStore({ dir }), /schema version 6 is newer/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('concurrency: a worker thread and a second process write the same addresses; rules hold across writers', async () => {
  const dir = tmpDir();
  try {
    const pks = Array.from({ length: 8 }, () => hex());
    const make = (): NostrEvent[] =>
      Array.from({ length: 120 }, (_, i) => ev({ kind: Math.floor(i / pks.length) % 2 ? 0 : 30023, pubkey: pks[i % pks.length], created_at: 1000 + Math.floor(Math.random() * 20), tags: [['d', 'x']] }));
    const mine = make();
    const theirs = make();
    const third = make();
    const shared = Array.from({ length: 30 }, () => ev()); // written by all three: stored once
    const s = await openStore({ dir, maxBatch: 7 });
    const worker = new Promise<{ statuses: string[] }>((resolve, reject) => {
      const w = new Worker(CHILD, { workerData: { dir, mode: 'replaceable', events: [...theirs, ...shared] } });
      w.once('message', resolve);
      w.once('error', reject);
    });
    const proc = writerProcess({ dir, mode: 'replaceable', events: [...third, ...shared] });
    const local = Promise.all([...mine, ...shared].map((e) => put(s, e)));
    const [w, p, l] = await Promise.all([worker, proc, local]);
    const sharedStored = [w.statuses.slice(-30), p.statuses.slice(-30), l.slice(-30).map((r) => r.status)];
    for (let i = 0; i < 30; i++) assert.equal(sharedStored.filter((st) => st[i] === 'stored').length, 1, 'exactly one writer stored each shared event');

    const all = [...mine, ...theirs, ...third];
    for (const pk of pks) {
      for (const kind of [0, 30023]) {
        const best = all.filter((e) => e.pubkey === pk && e.kind === kind).sort(newestFirst)[0];
        assert.deepEqual(await ids(s, [{ authors: [pk], kinds: [kind] }]), [best.id]);
      }
    }
    assert.equal(s.stats().events, 30 + pks.length * 2);
    assert.equal(s.stats().indexes.addr, pks.length * 2);
    await s.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

// A relay and the commands beside it (spider --once, sync) write one store from several processes.
// lmdb-js 3.5's write map combined with its overlapping sync broke exactly this: with three writing
// processes a commit failed (MDB_BAD_TXN) or an assertion aborted a process within a few hundred
// transactions. Many small transactions from every process at once, then every event is there.
test('concurrency: three processes and this one commit many small transactions at once; every write lands', async () => {
  const dir = tmpDir();
  try {
    const s = await openStore({ dir, maxBatch: 4 });
    const mine = Array.from({ length: 600 }, () => ev({ kind: 1, tags: [['t', 'many']] }));
    const spawnWriter = () => writerProcess({ dir, mode: 'replaceable', make: 600, inFlight: 2 });
    const local = (async () => {
      const out: string[] = [];
      for (let i = 0; i < mine.length; i += 2) for (const r of await Promise.all(mine.slice(i, i + 2).map((e) => put(s, e)))) out.push(r.status);
      return { statuses: out };
    })();
    const results = await Promise.all([spawnWriter(), spawnWriter(), spawnWriter(), local]);
    for (const r of results) assert.deepEqual(new Set(r.statuses), new Set(['stored']));
    // lmdb-js reuses one read snapshot until a zero timer resets it: one taken in this turn of the
    // event loop, before the other processes' last commits, counted 2,398 (Node 22, CI); read anew
    s.env.resetReadTxn();
    assert.equal(s.stats().events, 4 * 600);
    assert.equal(await s.count([{ tags: [['t', ['many']]] }]), 4 * 600, 'every event is indexed');
    await s.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
