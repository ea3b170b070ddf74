// Data-directory mistakes as an operator makes them: a wrong path, a file, a directory the relay's
// user may not write (a Docker bind mount owned by root), a path that cannot exist. Read-only
// commands never create a store; every error names the path and the fix, fast, without a stack.
// What the relay creates is private to its user: the directory 0700, its files 0600.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { runCli, spawnCli } from '../helpers/cli.js';
import { ROOT, startRelayProcess, tempDir } from '../helpers/relay-process.js';
import { Author, Client } from '../helpers/client.js';

const NOBODY = 65534;
const isRoot = process.getuid?.() === 0;

/** The first directory above `path` that other users may not enter (a checkout under root's 0700 home), or null. */
function closedToOthers(path: string): string | null {
  for (let dir = path; ; dir = dirname(dir)) {
    if ((statSync(dir).mode & 0o001) === 0) return dir;
    if (dirname(dir) === dir) return null;
  }
}

test('stats, export and directory on a missing data directory fail, name it, and create nothing', () => {
  const dir = tempDir();
  try {
    const missing = join(dir, 'wrong', 'path');
    for (const cmd of ['stats', 'export', 'directory']) {
      const r = runCli([cmd, '--data', missing]);
      assert.equal(r.status, 2, `${cmd}: ${r.stderr}`);
      assert.match(r.stderr, new RegExp(`${missing}.*does not exist`), cmd);
      assert.match(r.stderr, /--data|ORBWEAVER_DATA_DIR/, `${cmd} says how to point at the right one`);
      assert.doesNotMatch(r.stderr, /\n\s+at /, `${cmd}: no stack trace`);
      assert.equal(existsSync(join(dir, 'wrong')), false, `${cmd} created nothing`);
    }
    // an existing directory without a store is not a store either
    mkdirSync(join(dir, 'empty'));
    const r = runCli(['stats', '--data', join(dir, 'empty')]);
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /no orbweaver store/);
    assert.equal(existsSync(join(dir, 'empty', 'data.mdb')), false);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a data directory that is a file is named as such, by the relay and by commands', () => {
  const dir = tempDir();
  try {
    const file = join(dir, 'afile');
    writeFileSync(file, 'x');
    for (const args of [['stats'], ['relay', '--port', '0'], ['import']]) {
      const r = runCli([...args, '--data', file], { input: '' });
      assert.notEqual(r.status, 0, `${args[0]}`);
      assert.match(r.stderr, new RegExp(`${file} is not a directory`), `${args[0]}: ${r.stderr}`);
      assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a data directory the relay user may not write: the message names the path, the user and the fix', (tc) => {
  // as root the relay runs as nobody, who must reach the checkout's dist/ to start at all
  const closed = isRoot ? closedToOthers(ROOT) : null;
  if (closed) {
    tc.skip(`run as root with the checkout under ${closed}, which other users may not enter: the unprivileged user this test runs the relay as cannot reach ${ROOT}`);
    return;
  }
  const dir = tempDir();
  try {
    const data = join(dir, 'data');
    mkdirSync(data);
    let opts = {};
    if (isRoot) opts = { uid: NOBODY, gid: NOBODY }; // a root-owned bind mount and the image's unprivileged user
    else chmodSync(data, 0o555);
    chmodSync(dir, 0o755);
    const relay = runCli(['relay', '--port', '0', '--data', data], opts);
    assert.equal(relay.status, 1, relay.stderr);
    assert.match(relay.stderr, new RegExp(`${data}.*not writable`));
    assert.match(relay.stderr, /uid \d+/, 'names the user that needs access');
    assert.match(relay.stderr, /chown/, 'says how to fix it');
    assert.doesNotMatch(relay.stderr, /Attempting to setup locks/);
    // a missing data directory under a parent it may not write
    const sub = runCli(['relay', '--port', '0', '--data', join(data, 'sub')], opts);
    assert.equal(sub.status, 1, sub.stderr);
    assert.match(sub.stderr, new RegExp(`cannot create .*${join(data, 'sub')}`));
    // the default ./data in a working directory it may not write: a message, not a stack trace
    const stats = runCli(['stats'], { ...opts, cwd: data });
    assert.equal(stats.status, 2, stats.stderr);
    assert.match(stats.stderr, /data.*does not exist/);
    assert.doesNotMatch(stats.stderr, /\n\s+at /);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('--data /proc/nope fails at once with a message (no mkdir loop) and the relay obeys SIGTERM', async () => {
  const r = runCli(['stats', '--data', '/proc/nope'], { timeoutMs: 20_000 });
  assert.equal(r.signal, null, 'finished on its own');
  assert.equal(r.status, 2, r.stderr);
  assert.match(r.stderr, /\/proc\/nope/);
  const relay = spawnCli(['relay', '--port', '0', '--data', '/proc/nope/deeper']);
  const timer = setTimeout(() => relay.proc.kill('SIGTERM'), 10_000);
  const code = await relay.exited;
  clearTimeout(timer);
  assert.equal(code, 1, relay.stderr());
  assert.match(relay.stderr(), /cannot create .*\/proc\/nope\/deeper/);
});

test('a fresh data directory is 0700 and every file the relay makes in it 0600; a looser existing one is warned about, not changed', async () => {
  const outer = tempDir();
  const mode = (p: string) => statSync(p).mode & 0o777;
  try {
    // two missing levels, made by the relay; the test runner's own umask is the usual 022
    const dir = join(outer, 'new', 'data');
    const relay = await startRelayProcess({ dataDir: dir });
    const c = await Client.open(relay.url);
    assert.equal((await c.publish(new Author().sign({ content: 'written' }))).ok, true);
    c.close();
    assert.equal(mode(dir), 0o700, 'the data directory');
    assert.equal(mode(join(outer, 'new')), 0o700, 'each level it created');
    const entries = readdirSync(dir).sort();
    for (const f of ['data.mdb', 'lock.mdb', 'local.key', 'relay.json', 'writer.lock']) assert.ok(entries.includes(f), `${f} in ${entries}`);
    for (const name of entries) {
      const p = join(dir, name);
      assert.equal(mode(p), statSync(p).isDirectory() ? 0o700 : 0o600, `${name}: ${mode(p).toString(8)}`);
    }
    assert.ok(!relay.logs.some((l) => /not 0700/.test(String(l.msg))), 'no warning for its own directory');
    assert.equal(await relay.stop(), 0);

    // a directory an earlier version (or a bind mount) left open to others, with a store made then
    chmodSync(dir, 0o755);
    chmodSync(join(dir, 'data.mdb'), 0o644);
    const again = await startRelayProcess({ dataDir: dir });
    const warning = again.logs.find((l) => /not 0700/.test(String(l.msg)));
    assert.equal(warning?.level, 40, 'a warning');
    assert.equal(warning?.msg, `data directory ${dir} has mode 0755, not 0700: other local users may enter it and read data.mdb 0644; make it private: chmod 700 ${dir} (files this relay creates are 0600; see docs/operating.md, "The data directory")`);
    assert.equal(mode(dir), 0o755, 'left as the operator made it');
    assert.equal(await again.stop(), 0);
  } finally {
    rmSync(outer, { recursive: true, force: true });
  }
});
