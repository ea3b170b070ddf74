// orbweaver backup, the way an operator uses it: while a relay runs and clients publish, back the
// data directory up; `orbweaver verify` finds the backup clean; restored as the data directory of
// a new relay (the two commands of docs/operating.md), it serves every event acknowledged before
// the backup began and accepts writes. A backup killed with -9 at any moment leaves no half backup
// under the name asked for, and the live store goes on untouched.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { NostrEvent } from '../../src/nostr/event.js';
import { startRelayProcess, tempDir } from '../helpers/relay-process.js';
import { Author, Client, now, sleep } from '../helpers/client.js';
import { runCli, runCliAsync, spawnCli } from '../helpers/cli.js';

/** Publishes notes and follow lists until stopped; returns the events acknowledged with OK true. */
function publisher(url: string) {
  const acked: NostrEvent[] = [];
  let stop = false;
  const run = (async () => {
    const c = await Client.open(url);
    const authors = Array.from({ length: 5 }, () => new Author());
    const followed = Array.from({ length: 40 }, () => new Author().pk);
    for (let i = 0; !stop; i++) {
      const a = authors[i % authors.length]!;
      const ev = i % 3 === 2
        ? a.sign({ kind: 3, created_at: now() - 1000 + i, tags: followed.filter((_, j) => (i + j) % 4 !== 0).map((p) => ['p', p]) })
        : a.sign({ kind: 1, content: `note ${i}`, tags: [['t', 'backup']] });
      const r = await c.publish(ev);
      if (r.ok) acked.push(ev);
    }
    c.close();
  })();
  return { acked, stop: async () => { stop = true; await run; } };
}

/**
 * Whether a relay holds every acknowledged event, or for follow lists (replaceable: a later one
 * may have replaced it) the author's list at least as new; the missing, described.
 */
async function missing(c: Client, events: NostrEvent[]): Promise<string[]> {
  const notes = events.filter((e) => e.kind !== 3);
  const lists = new Map<string, number>();
  for (const e of events) if (e.kind === 3) lists.set(e.pubkey, Math.max(lists.get(e.pubkey) ?? 0, e.created_at));
  const out: string[] = [];
  for (let i = 0; i < notes.length; i += 50) {
    const part = notes.slice(i, i + 50);
    const have = new Set((await c.query([{ ids: part.map((e) => e.id) }])).events.map((e) => e.id));
    for (const e of part) if (!have.has(e.id)) out.push(`note ${e.id}`);
  }
  const got = (await c.query([{ kinds: [3], authors: [...lists.keys()] }])).events;
  for (const [pk, ca] of lists) if (!got.some((e) => e.pubkey === pk && e.created_at >= ca)) out.push(`follow list of ${pk} at ${ca} or newer`);
  return out;
}

test('backup while the relay writes: verify is clean, the restored store serves every event acknowledged before it and accepts writes', async () => {
  const dataDir = tempDir();
  const outer = tempDir('orbweaver-backups-');
  const target = join(outer, 'relay-backup');
  const restored = join(outer, 'restored');
  try {
    const relay = await startRelayProcess({ dataDir });
    writeFileSync(join(dataDir, 'trust-global.key'), 'not read by this test\n', { mode: 0o600 });
    const pub = publisher(relay.url);
    while (pub.acked.length < 150) await sleep(20);
    const before = pub.acked.length;
    const r = await runCliAsync(['backup', target, '--data', dataDir], { timeoutMs: 120_000 });
    const during = pub.acked.length;
    await pub.stop();
    assert.equal(r.status, 0, `backup: exit ${r.status}\n${r.stdout}\n${r.stderr}`);
    assert.ok(during > before, 'the relay kept acknowledging writes while the backup ran');
    assert.match(r.stdout, /backup of .*: [\d,]+ events/);
    assert.match(r.stdout, /restore it \(relay stopped\): mv .* && orbweaver backup .* --data /);
    assert.ok(!existsSync(`${target}.partial`), 'the partial directory became the backup');
    assert.deepEqual(readdirSync(target).sort(), ['backup.json', 'data.mdb', 'local.key', 'trust-global.key'], 'the store, the manifest and the key files; not the lock file or the running relay\'s record');
    assert.equal(statSync(join(target, 'local.key')).mode & 0o777, 0o600, 'keys keep their mode');
    const manifest = JSON.parse(readFileSync(join(target, 'backup.json'), 'utf8')) as { events: number; schemaVersion: number; source: string };
    assert.ok(manifest.events >= new Set(pub.acked.slice(0, before).map((e) => (e.kind === 3 ? e.pubkey : e.id))).size, `manifest counts ${manifest.events} events`);
    assert.equal(manifest.source, dataDir);

    const v = runCli(['verify', '--data', target], { timeoutMs: 120_000 });
    assert.equal(v.status, 0, `verify of the backup: exit ${v.status}\n${v.stdout}\n${v.stderr}`);

    // a second backup under the same name is refused, naming the path
    const again = runCli(['backup', target, '--data', dataDir]);
    assert.equal(again.status, 2);
    assert.match(again.stderr, new RegExp(`backup target ${target} is not empty; name a new directory`));
    await relay.stop();

    // the restore of docs/operating.md: the same command the other way (into a new path here; an
    // operator moves the old data directory away first)
    const rs = runCli(['backup', restored, '--data', target], { timeoutMs: 120_000 });
    assert.equal(rs.status, 0, `restore: exit ${rs.status}\n${rs.stdout}\n${rs.stderr}`);
    assert.deepEqual(readdirSync(restored).sort(), ['backup.json', 'data.mdb', 'local.key', 'trust-global.key']);
    const back = await startRelayProcess({ dataDir: restored });
    try {
      const c = await Client.open(back.url);
      assert.deepEqual(await missing(c, pub.acked.slice(0, before)), [], 'every event acknowledged before the backup began is in it');
      const fresh = new Author().sign({ kind: 1, content: 'after the restore' });
      assert.deepEqual(await c.publish(fresh), { ok: true, message: '' });
      assert.equal((await c.query([{ ids: [fresh.id] }])).events.length, 1);
      c.close();
    } finally {
      await back.stop();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(outer, { recursive: true, force: true });
  }
});

test('backup killed with -9 at any moment: no half backup under the name asked for, the live store untouched, the next backup succeeds', async () => {
  const dataDir = tempDir();
  const outer = tempDir('orbweaver-backups-');
  try {
    const relay = await startRelayProcess({ dataDir });
    const pub = publisher(relay.url);
    while (pub.acked.length < 100) await sleep(20);
    // kills at different moments: before the store opens, while it copies, around the rename
    for (const [i, afterMs] of [0, 150, 400, 800].entries()) {
      const target = join(outer, `b${i}`);
      const b = spawnCli(['backup', target, '--data', dataDir], { env: { ORBWEAVER_LOG_LEVEL: 'warn' } });
      await sleep(afterMs);
      await b.kill('SIGKILL');
      if (existsSync(target)) {
        // it finished first: then it is whole
        assert.ok(existsSync(join(target, 'backup.json')), `${target} exists without its manifest: a half backup`);
        const v = runCli(['verify', '--data', target], { timeoutMs: 120_000 });
        assert.equal(v.status, 0, `verify of ${target}: ${v.stdout}\n${v.stderr}`);
      }
    }
    const n = pub.acked.length;
    while (pub.acked.length < n + 30) await sleep(20);
    await pub.stop();

    // a killed run's leftover (a .partial with part of a copy) is cleaned up by the next run under that name
    for (let i = 0; i < 4; i++) {
      const target = join(outer, `b${i}`);
      if (existsSync(target)) continue;
      const ok = runCli(['backup', target, '--data', dataDir], { timeoutMs: 120_000 });
      assert.equal(ok.status, 0, ok.stderr);
      assert.ok(!existsSync(`${target}.partial`));
      assert.ok(existsSync(join(target, 'backup.json')));
    }
    mkdirSync(join(outer, 'b9.partial'));
    const foreign = runCli(['backup', join(outer, 'b9'), '--data', dataDir]);
    assert.equal(foreign.status, 2, 'a .partial directory this command did not make is not removed');
    assert.match(foreign.stderr, /b9\.partial exists and is not a backup this command left unfinished; move it away first/);

    await relay.stop();
    const v = runCli(['verify', '--data', dataDir], { timeoutMs: 120_000 });
    assert.equal(v.status, 0, `verify of the live store after the killed backups: ${v.stdout}\n${v.stderr}`);
    const again = await startRelayProcess({ dataDir });
    try {
      const c = await Client.open(again.url);
      assert.deepEqual(await missing(c, pub.acked), [], 'every acknowledged event is in the live store');
      c.close();
    } finally {
      await again.stop();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(outer, { recursive: true, force: true });
  }
});

test('backup refuses what it cannot do, naming the path', () => {
  const dataDir = tempDir();
  try {
    const none = runCli(['backup', '--data', dataDir]);
    assert.equal(none.status, 2);
    assert.match(none.stderr, /name one directory to back up into: orbweaver backup DIR/);
    const inside = runCli(['backup', join(dataDir, 'bk'), '--data', dataDir]);
    assert.equal(inside.status, 2);
    assert.match(inside.stderr, /is inside the data directory .*; name a directory outside it/);
    const noParent = runCli(['backup', join(dataDir + '-nope', 'x', 'bk'), '--data', dataDir]);
    assert.equal(noParent.status, 2);
    assert.match(noParent.stderr, /does not exist; create it first/);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('backup resolves real paths: a target reached through a link into the data directory is refused; a link in the data directory is never followed', () => {
  const dataDir = tempDir();
  const outer = tempDir('orbweaver-backups-');
  const mode = (p: string) => statSync(p).mode & 0o777;
  try {
    const line = JSON.stringify(new Author().sign({ content: 'to back up' }));
    const imp = runCli(['import', '--data', dataDir], { input: line + '\n' });
    assert.equal(imp.status, 0, imp.stderr);

    // a target whose parent is a link to the data directory, and a target that is a link into it
    symlinkSync(dataDir, join(outer, 'to-data'));
    mkdirSync(join(dataDir, 'sub'));
    symlinkSync(join(dataDir, 'sub'), join(outer, 'bk-link'));
    for (const target of [join(outer, 'to-data', 'bk'), join(outer, 'bk-link')]) {
      const r = runCli(['backup', target, '--data', dataDir]);
      assert.equal(r.status, 2, `${target}: ${r.stderr}`);
      assert.match(r.stderr, new RegExp(`backup target ${target} is inside the data directory ${dataDir} \\(it resolves to ${dataDir}/(bk|sub), inside ${dataDir}\\); name a directory outside it`));
    }
    assert.deepEqual(readdirSync(join(dataDir, 'sub')), [], 'nothing written into the data directory');
    rmSync(join(dataDir, 'sub'), { recursive: true });

    // a link in the data directory: to a file of the backup user's (copied into the backup if
    // followed), or as lock.mdb (which LMDB would open and write): refused before the store opens
    const secret = join(outer, 'secret');
    writeFileSync(secret, 'not the relay\'s\n', { mode: 0o600 });
    const target = join(outer, 'bk');
    symlinkSync(secret, join(dataDir, 'trust-global.key'));
    let r = runCli(['backup', target, '--data', dataDir]);
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, new RegExp(`${dataDir}/trust-global\\.key in the data directory is a symbolic link \\(to ${secret}\\); backup does not follow links there: put the file itself in its place \\(or remove the link\\) and run backup again`));
    assert.ok(!existsSync(target) && !existsSync(`${target}.partial`), 'nothing made');
    unlinkSync(join(dataDir, 'trust-global.key'));
    unlinkSync(join(dataDir, 'lock.mdb'));
    symlinkSync(secret, join(dataDir, 'lock.mdb'));
    r = runCli(['backup', target, '--data', dataDir]);
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /lock\.mdb in the data directory is a symbolic link/);
    assert.equal(readFileSync(secret, 'utf8'), 'not the relay\'s\n', 'the file behind the link untouched');
    unlinkSync(join(dataDir, 'lock.mdb'));

    // without links: the backup is made, private like a data directory (a file left 0644 by hand is copied 0600)
    writeFileSync(join(dataDir, 'trust-global.key'), 'a key\n', { mode: 0o644 });
    r = runCli(['backup', target, '--data', dataDir]);
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(readdirSync(target).sort(), ['backup.json', 'data.mdb', 'trust-global.key']);
    assert.equal(readFileSync(join(target, 'trust-global.key'), 'utf8'), 'a key\n');
    assert.equal(mode(target), 0o700);
    for (const f of readdirSync(target)) assert.equal(mode(join(target, f)), 0o600, f);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(outer, { recursive: true, force: true });
  }
});
