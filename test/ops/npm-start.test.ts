// `npm start` as a process manager runs it: it starts what `npm install` built (no compile at each
// start), and SIGTERM to npm's pid — the process the manager started — stops the relay too.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import net from 'node:net';
import { ROOT, tempDir } from '../helpers/relay-process.js';
import { cleanEnv } from '../helpers/cli.js';

const refused = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.once('connect', () => { s.destroy(); resolve(false); });
    s.once('error', () => resolve(true));
  });

test('SIGTERM to npm start stops the relay and frees its port; npm start does not compile', async () => {
  const dir = tempDir();
  const npm = spawn('npm', ['start'], {
    cwd: ROOT, detached: true, stdio: ['ignore', 'pipe', 'pipe'],
    env: cleanEnv({ ORBWEAVER_PORT: '0', ORBWEAVER_DATA_DIR: dir, ORBWEAVER_LOG_LEVEL: 'info', ORBWEAVER_LOG_FORMAT: 'json' }),
  });
  let out = '';
  npm.stdout!.on('data', (d) => { out += d; });
  npm.stderr!.on('data', (d) => { out += d; });
  const exited = new Promise<number | null>((r) => npm.once('exit', (code) => r(code)));
  try {
    const deadline = Date.now() + 90_000;
    let port = 0;
    while (!port && Date.now() < deadline && npm.exitCode === null) {
      const m = /"address":"ws:\/\/127\.0\.0\.1:(\d+)".*"msg":"orbweaver relay listening"/.exec(out);
      if (m) port = Number(m[1]);
      else await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(port > 0, `the relay listens:\n${out}`);
    assert.doesNotMatch(out, /\btsc\b|prestart/, 'npm start runs what was built, without compiling');

    npm.kill('SIGTERM');
    const timer = setTimeout(() => npm.kill('SIGKILL'), 30_000);
    await exited;
    clearTimeout(timer);
    let free = await refused(port);
    for (let i = 0; i < 100 && !free; i++) {
      await new Promise((r) => setTimeout(r, 100));
      free = await refused(port);
    }
    assert.ok(free, `the relay still listens on ${port} after npm exited:\n${out}`);
    assert.match(out, /"msg":"stopped"/, 'the relay shut down cleanly');
  } finally {
    try { process.kill(-npm.pid!, 'SIGKILL'); } catch { /* the group is gone */ }
    rmSync(dir, { recursive: true, force: true });
  }
});
