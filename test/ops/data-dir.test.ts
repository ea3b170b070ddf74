// Data-directory mistakes as an operator makes them: a wrong path, a file, a directory the relay's
// user may not write (a Docker bind mount owned by root), a path that cannot exist. Read-only
// commands never create a store; every error names the path and the fix, fast, without a stack.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { runCli, spawnCli } from '../helpers/cli.js';
import { ROOT, tempDir } from '../helpers/relay-process.js';

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
