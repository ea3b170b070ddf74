// The command line as an operator meets it: config precedence, refusals that name the key, help.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { CLI, ROOT, tempDir, startRelayProcess } from '../helpers/relay-process.js';

const run = (args: string[], env: Record<string, string> = {}) =>
  spawnSync(process.execPath, [CLI, ...args], { cwd: ROOT, env: { ...process.env, ...env }, encoding: 'utf8' });

test('precedence: flags > env > file > defaults', () => {
  const dir = tempDir();
  const file = join(dir, 'c.json');
  writeFileSync(file, JSON.stringify({ port: 1111, host: '0.0.0.0', logLevel: 'warn', limits: { maxLimit: 42 } }));
  const r = run(['config', '--config', file, '--port', '3333'], { ORBWEAVER_PORT: '2222', ORBWEAVER_HOST: '127.0.0.2' });
  assert.equal(r.status, 0, r.stderr);
  const c = JSON.parse(r.stdout);
  assert.equal(c.port, 3333);
  assert.equal(c.host, '127.0.0.2');
  assert.equal(c.logLevel, 'warn');
  assert.equal(c.limits.maxLimit, 42);
  assert.equal(c.limits.maxSubscriptions, 200);
  rmSync(dir, { recursive: true, force: true });
});

test('a bad value stops start-up with exit code 2 and names the key', () => {
  let r = run(['relay', '--port', 'abc']);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /"port"/);
  r = run(['relay'], { ORBWEAVER_LOG_LEVEL: 'loud' });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /"logLevel" \(set by ORBWEAVER_LOG_LEVEL\)/);
  r = run(['config'], { ORBWEAVER_LIMITS_MAX_LIMIT: '-5' });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /limits\.maxLimit/);
  const dir = tempDir();
  const file = join(dir, 'c.json');
  writeFileSync(file, JSON.stringify({ limits: { maxLimt: 5 } }));
  r = run(['config', '--config', file]);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /maxLimt/);
  writeFileSync(file, '{ not json');
  r = run(['config', '--config', file]);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /not valid JSON/);
  rmSync(dir, { recursive: true, force: true });
});

test('help, the env listing and unknown commands', () => {
  let r = run(['--help']);
  assert.equal(r.status, 0);
  assert.match(r.stdout, /usage: orbweaver/);
  r = run(['config', '--env']);
  assert.equal(r.status, 0);
  assert.match(r.stdout, /ORBWEAVER_DATA_DIR/);
  assert.match(r.stdout, /ORBWEAVER_SPIDER_INTERVAL/);
  r = run(['frobnicate']);
  assert.equal(r.status, 2);
});

test('SIGTERM stops the relay cleanly with exit code 0', async () => {
  const relay = await startRelayProcess();
  const code = await relay.stop();
  assert.equal(code, 0);
  await relay.cleanup();
});

test('the relay refuses a port that is taken, with a message', async () => {
  const a = await startRelayProcess();
  await assert.rejects(startRelayProcess({ port: a.port, timeoutMs: 8000 }), /cannot listen/);
  await a.cleanup();
});
