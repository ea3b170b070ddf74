// The container image, checked without a Docker engine (there is none on the test machines): the
// Dockerfile's promises read from the file, the image's config and its health check run for real.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, startRelayProcess, tempDir } from '../helpers/relay-process.js';
import { cleanEnv, runCli } from '../helpers/cli.js';

const read = (f: string) => readFileSync(join(ROOT, f), 'utf8');
const instructions = (text: string) => text.split('\n').filter((l) => l.trim() && !l.trim().startsWith('#'));

test('Dockerfile: configuration left to the mounted file, no tests or benchmarks in the image, one compile, a .dockerignore', () => {
  const docker = instructions(read('Dockerfile'));
  const env = docker.filter((l) => /^\s*ENV\b/.test(l) || /^\s+ORBWEAVER_/.test(l)).join('\n');
  assert.doesNotMatch(env, /ORBWEAVER_/, 'no ORBWEAVER_* in ENV: a mounted relay.config.json must be able to set host, port and dataDir');
  const health = docker.find((l) => /HEALTHCHECK/.test(l)) ?? '';
  assert.ok(health, 'a health check');
  assert.doesNotMatch(health, /ORBWEAVER_PORT/, 'the health check follows the port the relay really uses');
  const copies = docker.filter((l) => /^\s*COPY\b/.test(l)).join('\n');
  assert.doesNotMatch(copies, /\b(test|bench)\b/, 'test/ and bench/ stay out of the image');
  assert.doesNotMatch(docker.join('\n'), /npm run build|\btsc\b/, 'compiled once, by npm ci (prepare)');
  assert.match(docker.join('\n'), /COPY docker\/relay\.config\.json/);
  // a named volume takes the mode of the image's /data: private to the relay's user, like a data directory it makes
  assert.match(docker.join('\n'), /RUN mkdir -p \/data && chown node:node \/data && chmod 700 \/data\n/);
  assert.match(docker.join('\n'), /^USER node$/m);

  assert.ok(existsSync(join(ROOT, '.dockerignore')), '.dockerignore');
  const ignored = new Set(instructions(read('.dockerignore')).map((l) => l.trim()));
  for (const p of ['node_modules', 'data', 'dist', '.git', 'test', 'bench']) assert.ok(ignored.has(p), `${p} is not sent to the build context`);
});

test('Dockerfile: every stage on Node 24 and Debian 13, whose glibc (2.41) the Node 22/24 uWebSockets.js build needs (2.38)', () => {
  const froms = instructions(read('Dockerfile')).filter((l) => /^\s*FROM\b/i.test(l));
  assert.ok(froms.length >= 2, 'a build stage and the image');
  for (const f of froms) assert.match(f, /^FROM node:24-trixie(-slim)?(\s|$)/, f);
});

test('the image config listens on every interface and keeps data in /data', () => {
  const r = runCli(['config', '--config', join(ROOT, 'docker/relay.config.json')]);
  assert.equal(r.status, 0, r.stderr);
  const c = JSON.parse(r.stdout);
  assert.equal(c.host, '0.0.0.0');
  assert.equal(c.dataDir, '/data');
  assert.equal(c.port, 7447);
});

test('the health check asks the relay at the address it recorded, wherever the port came from', async () => {
  const health = (env: Record<string, string>, cwd: string) =>
    spawnSync(process.execPath, [join(ROOT, 'dist/src/app/healthcheck.js')], { cwd, env: cleanEnv(env), encoding: 'utf8', timeout: 20_000 });
  const cwd = tempDir();
  const relay = await startRelayProcess(); // port 0: a port no config names
  try {
    // as in the image: the config file in the working directory names the data directory only
    writeFileSync(join(cwd, 'relay.config.json'), JSON.stringify({ dataDir: relay.dataDir, port: 1 }));
    assert.equal(health({}, cwd).status, 0, 'healthy');
    await relay.stop();
    assert.equal(health({}, cwd).status, 1, 'unhealthy once the relay stopped');
  } finally {
    await relay.cleanup();
    rmSync(cwd, { recursive: true, force: true });
  }
});
