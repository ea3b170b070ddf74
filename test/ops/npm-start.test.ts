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

/** `npm start` in a process group of its own (as a terminal's foreground job), on a free port */
async function npmStart() {
  const dir = tempDir();
  const npm = spawn('npm', ['start'], {
    cwd: ROOT, detached: true, stdio: ['ignore', 'pipe', 'pipe'],
    env: cleanEnv({ ORBWEAVER_PORT: '0', ORBWEAVER_DATA_DIR: dir, ORBWEAVER_LOG_LEVEL: 'info', ORBWEAVER_LOG_FORMAT: 'json' }),
  });
  const run = { npm, dir, port: 0, out: '', exited: new Promise<number | null>((r) => npm.once('exit', (code) => r(code))) };
  npm.stdout!.on('data', (d) => { run.out += d; });
  npm.stderr!.on('data', (d) => { run.out += d; });
  const deadline = Date.now() + 90_000;
  while (!run.port && Date.now() < deadline && npm.exitCode === null) {
    const m = /"address":"ws:\/\/127\.0\.0\.1:(\d+)".*"msg":"orbweaver relay listening"/.exec(run.out);
    if (m) run.port = Number(m[1]);
    else await new Promise((r) => setTimeout(r, 100));
  }
  return run;
}

async function stoppedCleanly(run: Awaited<ReturnType<typeof npmStart>>): Promise<void> {
  const timer = setTimeout(() => run.npm.kill('SIGKILL'), 30_000);
  await run.exited;
  clearTimeout(timer);
  let free = await refused(run.port);
  for (let i = 0; i < 100 && !free; i++) {
    await new Promise((r) => setTimeout(r, 100));
    free = await refused(run.port);
  }
  assert.ok(free, `the relay still listens on ${run.port} after npm exited:\n${run.out}`);
  assert.match(run.out, /"msg":"stopped"/, `the relay shut down cleanly:\n${run.out}`);
}

function cleanup(run: Awaited<ReturnType<typeof npmStart>>): void {
  try { process.kill(-run.npm.pid!, 'SIGKILL'); } catch { /* the group is gone */ }
  rmSync(run.dir, { recursive: true, force: true });
}

test('SIGTERM to npm start stops the relay and frees its port; npm start does not compile', async () => {
  const run = await npmStart();
  try {
    assert.ok(run.port > 0, `the relay listens:\n${run.out}`);
    assert.doesNotMatch(run.out, /\btsc\b|prestart/, 'npm start runs what was built, without compiling');
    run.npm.kill('SIGTERM');
    await stoppedCleanly(run);
  } finally {
    cleanup(run);
  }
});

// A terminal's Ctrl-C goes to the whole foreground process group, so the relay gets SIGINT from the
// terminal and again from npm passing it on: that is one request to stop, not "exit now".
test('Ctrl-C on npm start (SIGINT to the process group) stops the relay cleanly, not at once', async () => {
  const run = await npmStart();
  try {
    assert.ok(run.port > 0, `the relay listens:\n${run.out}`);
    process.kill(-run.npm.pid!, 'SIGINT');
    await stoppedCleanly(run);
    assert.doesNotMatch(run.out, /second signal/, 'one Ctrl-C is one request to stop');
  } finally {
    cleanup(run);
  }
});
