// The command line as an operator meets it: config precedence, refusals that name the key, help.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync, rmSync, readFileSync } from 'node:fs';
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
  // each setting: its variable, its default in the form the variable takes, its key and meaning
  assert.match(r.stdout, /^ORBWEAVER_SPIDER_INTERVAL=24h {2}# spider\.interval: \S.*$/m);
  assert.match(r.stdout, /^ORBWEAVER_SPIDER_ALLOW_PRIVATE=false {2}# spider\.allowPrivate: \S.*$/m);
  assert.match(r.stdout, /^ORBWEAVER_AUTH_REQUIRED=off {2}# auth\.required: NIP-42: require authentication/m);
  assert.match(r.stdout, /^ORBWEAVER_AUTH_READ_KINDS=4,13,1059 {2}# auth\.readKinds: /m, 'lists comma-separated');
  assert.match(r.stdout, /^ORBWEAVER_INFO_DESCRIPTION='A Nostr relay with a built-in directory spider' {2}# info\.description: /m, 'quoted where it has spaces');
  assert.match(r.stdout, /^ORBWEAVER_DATA_DIR=\S+ {2}# dataDir/m);
  const settings = r.stdout.split('\n').filter((l) => l.startsWith('ORBWEAVER_'));
  assert.ok(settings.length > 100);
  for (const line of settings) assert.match(line, /^ORBWEAVER_[A-Z0-9_]+=('[^']*'|\S*)  # [\w.]+( \(also [A-Z0-9_, ]+\))?: \S/, line);
  r = run(['frobnicate']);
  assert.equal(r.status, 2);
});

test('docs/configuration.md is what `orbweaver config --markdown` prints (the schema is its one source)', () => {
  const r = run(['config', '--markdown']);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^\| `spider\.live\.maxHop` \| `ORBWEAVER_SPIDER_LIVE_MAX_HOP` \|/m);
  assert.match(r.stdout, /^\| `limits\.maxListEventBytes` \| `ORBWEAVER_LIMITS_MAX_LIST_EVENT_BYTES` \| `1048576` \|/m);
  const committed = readFileSync(join(ROOT, 'docs/configuration.md'), 'utf8');
  assert.equal(committed, r.stdout, 'docs/configuration.md is stale: run `node dist/src/cli.js config --markdown > docs/configuration.md`');
});

test('SIGTERM stops the relay cleanly with exit code 0', async () => {
  const relay = await startRelayProcess();
  const code = await relay.stop();
  assert.equal(code, 0);
  await relay.cleanup();
});

test('the relay refuses a port that is taken, with a message', async () => {
  const a = await startRelayProcess();
  await assert.rejects(startRelayProcess({ port: a.port, timeoutMs: 30_000 }), /cannot listen/);
  await a.cleanup();
});

test('typos are refused with the closest known name: variables, flags, file keys, commands', () => {
  let r = run(['config'], { ORBWEAVER_PROT: '18450' });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /unknown environment variable ORBWEAVER_PROT \(did you mean ORBWEAVER_PORT\?\)/);
  r = run(['config', '--bogus']);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /unknown option --bogus/);
  r = run(['relay', '--prot', '18450']);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /unknown option --prot .*did you mean --port\?/);
  r = run(['stats', '--jsn']);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /did you mean --json\?/);
  r = run(['spider', '--onse']);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /did you mean --once\?/);
  const dir = tempDir();
  const file = join(dir, 'c.json');
  writeFileSync(file, JSON.stringify({ limits: { maxLimt: 5 } }));
  r = run(['config', '--config', file]);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /unknown config key "limits\.maxLimt".*did you mean limits\.maxLimit\?/);
  rmSync(dir, { recursive: true, force: true });
  r = run(['confg']);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /did you mean config\?/);
});

test('seeds, admins, pubkeys and relay URLs are checked at start-up, naming the key', () => {
  let r = run(['config'], { ORBWEAVER_SPIDER_SEEDS: 'npub1bogus' });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /"spider\.seeds" \(set by ORBWEAVER_SPIDER_SEEDS\).*npub1bogus/);
  r = run(['config'], { ORBWEAVER_SPIDER_ADMINS: 'abc' });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /"spider\.admins"/);
  r = run(['relay', '--port', '0'], { ORBWEAVER_SPIDER_BOOTSTRAP_RELAYS: 'http://x.com,notaurl' });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /"spider\.bootstrapRelays".*http:\/\/x\.com/);
  assert.match(r.stderr, /"spider\.bootstrapRelays".*notaurl/);
  r = run(['config'], { ORBWEAVER_ADMIN_PUBKEYS: 'npub1nope' });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /"adminPubkeys"/);
  r = run(['config'], { ORBWEAVER_PUBLIC_URL: 'https://relay.example.com' });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /"publicUrl"/);
  r = run(['config'], { ORBWEAVER_SPIDER_WORKER_KEY: 'not-a-key-secret' });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /"spider\.workerKey"/);
  assert.doesNotMatch(r.stderr, /not-a-key-secret/, 'a bad secret is not echoed');
  // npub in config becomes hex; good values pass
  const npub = 'npub180cvv07tjdrrgpa0j7j7tmnyl2yr6yr7l8j4s3evf6u64th6gkwsyjh6w6';
  r = run(['config'], { ORBWEAVER_SPIDER_SEEDS: npub, ORBWEAVER_INFO_PUBKEY: npub, ORBWEAVER_SPIDER_BOOTSTRAP_RELAYS: 'wss://relay.damus.io,ws://127.0.0.1:7000' });
  assert.equal(r.status, 0, r.stderr);
  const c = JSON.parse(r.stdout);
  assert.deepEqual(c.spider.seeds, ['3bf0c63fcb93463407af97a5e5ee64fa883d107ef9e558472c4eb9aaaefa459d']);
  assert.equal(c.info.pubkey, '3bf0c63fcb93463407af97a5e5ee64fa883d107ef9e558472c4eb9aaaefa459d');
});

test('orbweaver config masks secrets: the worker key and passwords in URLs', () => {
  const r = run(['config'], { ORBWEAVER_SPIDER_REDIS: 'redis://:hunter2@redis.internal:6379/0', ORBWEAVER_SPIDER_WORKER_KEY: 'a'.repeat(64) });
  assert.equal(r.status, 0, r.stderr);
  assert.doesNotMatch(r.stdout, /hunter2/);
  assert.doesNotMatch(r.stdout, /aaaaaaaa/);
  const c = JSON.parse(r.stdout);
  assert.equal(c.spider.redis, 'redis://:***@redis.internal:6379/0');
  assert.equal(c.spider.workerKey, '(set, hidden)');
});

test('a spider enabled with nothing to crawl says so at warn level when the relay starts', async () => {
  const relay = await startRelayProcess({ env: { ORBWEAVER_SPIDER: '1' } });
  try {
    const warn = relay.logs.find((l) => l.level === 40 && /nothing to crawl/.test(String(l.msg)));
    assert.ok(warn, 'a warning at start-up');
    assert.match(String(warn.msg), /spider\.seeds/);
  } finally {
    await relay.cleanup();
  }
});
