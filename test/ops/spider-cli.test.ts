// `orbweaver spider` as an operator runs it: without --once it keeps crawling every interval until
// SIGTERM; a spider with nothing to crawl says so and `--once` exits non-zero.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { TestRelay, keypair, relayList, sign } from '../fixtures/test-relay.js';
import { runCli, runCliAsync, spawnCli } from '../helpers/cli.js';
import { ROOT, tempDir } from '../helpers/relay-process.js';

const T0 = Math.floor(Date.now() / 1000) - 5000;

test('spider without --once runs every spider.interval until SIGTERM, then exits 0', async () => {
  const bootstrap = await new TestRelay({ flavour: 'strfry' }).start();
  const a = await new TestRelay({ flavour: 'strfry' }).start();
  const seed = keypair();
  bootstrap.add(relayList(seed.sk, T0, [a.url]));
  a.add(...Array.from({ length: 5 }, (_, i) => sign(keypair().sk, 0, T0 - i)));
  const dir = tempDir();
  const spider = spawnCli(['spider', '--local', '--data', dir], {
    env: {
      ORBWEAVER_SPIDER_SEEDS: seed.pk, ORBWEAVER_SPIDER_BOOTSTRAP_RELAYS: bootstrap.url, ORBWEAVER_SPIDER_ALLOW_PRIVATE: '1',
      ORBWEAVER_SPIDER_HOPS: '0', ORBWEAVER_SPIDER_INTERVAL: '1s', ORBWEAVER_SPIDER_PAUSE: '0', ORBWEAVER_SPIDER_IDLE_TIMEOUT: '3s',
    },
  });
  try {
    // the standalone spider runs itself again with a bounded heap (spider.heapMb, default 256 MB)
    const started = await spider.waitForLog((l) => l.msg === 'spider started', 30_000, 'the start');
    assert.notEqual(started.pid, spider.proc.pid, 'the crawl runs in a heap-limited child');
    // the log says the configured figure as configured, and V8's whole limit (young generation added)
    assert.equal(started.oldSpaceMb, 256, 'spider.heapMb, as docs/spider.md says');
    assert.ok(Number(started.heapLimitMb) > 256 && Number(started.heapLimitMb) < 512, `heap limit ${started.heapLimitMb} MB`);
    const doc = readFileSync(join(ROOT, 'docs/spider.md'), 'utf8').replace(/\s+/g, ' ');
    const major = process.versions.node.split('.')[0];
    assert.match(doc, /`oldSpaceMb: 256`, the setting, and `heapLimitMb`/, 'docs/spider.md names the figures the spider logs');
    assert.match(doc, new RegExp(`young generation: [^.]*\\b${started.heapLimitMb} on Node (\\d+ and )?${major}\\b`), `docs/spider.md gives heapLimitMb ${started.heapLimitMb} for Node ${major}`);
    let runs = 0;
    await spider.waitForLog((l) => l.msg === 'spider: run finished' && ++runs >= 1, 30_000, 'the first run');
    await spider.waitForLog(() => spider.logs.filter((l) => l.msg === 'spider: run finished').length >= 2, 30_000, 'a second run one interval later');
    assert.equal(spider.proc.exitCode, null, 'still running between runs');
    assert.equal(await spider.kill('SIGTERM'), 0, spider.stderr());
  } finally {
    await spider.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    await Promise.all([bootstrap.close(), a.close()]);
  }
});

test('the heap-limited spider stops when its parent is killed outright; spider.heapMb 0 and NODE_OPTIONS run it in one process', async () => {
  const dir = tempDir();
  const env = { ORBWEAVER_SPIDER_SEEDS: keypair().pk, ORBWEAVER_SPIDER_INTERVAL: '1h' };
  const alive = (pid: number) => { try { process.kill(pid, 0); return true; } catch { return false; } };
  try {
    const spider = spawnCli(['spider', '--local', '--data', dir], { env });
    const child = Number((await spider.waitForLog((l) => l.msg === 'spider started', 30_000, 'the start')).pid);
    assert.ok(alive(child));
    await spider.kill('SIGKILL');
    const until = Date.now() + 20_000;
    while (alive(child) && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
    assert.equal(alive(child), false, 'the child stopped with its parent');
    for (const extra of [{ ORBWEAVER_SPIDER_HEAP_MB: '0' }, { NODE_OPTIONS: '--max-old-space-size=200' }]) {
      const one = spawnCli(['spider', '--local', '--data', dir], { env: { ...env, ...extra } });
      const s = await one.waitForLog((l) => l.msg === 'spider started', 30_000, 'the start');
      assert.equal(s.pid, one.proc.pid, `no second process with ${JSON.stringify(extra)}`);
      if (extra.NODE_OPTIONS) assert.equal(s.oldSpaceMb, 200, `the operator's limit is kept (whole heap limit ${s.heapLimitMb} MB: old space plus the young generation, which differs per Node line)`);
      else assert.equal(s.oldSpaceMb, null, 'node\'s default');
      assert.equal(await one.kill('SIGTERM'), 0, one.stderr());
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('spider --once with nothing to crawl says so and exits non-zero', () => {
  const dir = tempDir();
  try {
    // no seeds and no admins: a configuration problem, named
    let r = runCli(['spider', '--once', '--local', '--data', dir]);
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /nothing to crawl.*spider\.seeds/s);
    // a seed whose relay list is nowhere: the run finds no relay
    r = runCli(['spider', '--once', '--local', '--data', dir], { env: { ORBWEAVER_SPIDER_SEEDS: keypair().pk } });
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr + r.stdout, /no relay to crawl/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('spider --once refusing private addresses names spider.allowPrivate, in the summary and in the run\'s last word', async () => {
  const dir = tempDir();
  const seed = keypair();
  const bootstrap = await new TestRelay({ flavour: 'plain' }).start();
  // the seed's list names a relay on a host name that is not public
  bootstrap.add(relayList(seed.sk, T0, ['ws://localhost:9/']));
  const env = { ORBWEAVER_SPIDER_SEEDS: seed.pk, ORBWEAVER_SPIDER_BOOTSTRAP_RELAYS: bootstrap.url, ORBWEAVER_SPIDER_CONNECT_TIMEOUT: '2s' };
  try {
    // the bootstrap relay is on loopback: not asked, and the end of the run says why
    let r = await runCliAsync(['spider', '--once', '--local', '--data', dir], { env: { ...env, ORBWEAVER_LOG_FORMAT: 'json' } });
    assert.equal(r.status, 1, r.stderr);
    const hint = 'spider.allowPrivate (ORBWEAVER_SPIDER_ALLOW_PRIVATE) allows it';
    assert.ok(r.stdout.includes(`bootstrap relay ${bootstrap.url} not asked: address 127.0.0.1 is not public; ${hint}`), r.stdout);
    const last = r.stderr.trim().split('\n').map((l) => JSON.parse(l) as { msg: string }).find((l) => l.msg.includes('no relay to crawl'));
    assert.ok(last, r.stderr);
    assert.ok(last.msg.includes(`the bootstrap relays could not be asked (${bootstrap.url}: address 127.0.0.1 is not public; ${hint})`), last.msg);
    assert.equal(bootstrap.connections, 0, 'nothing contacted');

    // allowed, the list is fetched (its relay does not answer); then, not allowed, that relay is refused by name
    r = await runCliAsync(['spider', '--once', '--local', '--data', dir], { env: { ...env, ORBWEAVER_SPIDER_ALLOW_PRIVATE: '1' } });
    assert.equal(r.status, 1, r.stderr);
    r = await runCliAsync(['spider', '--once', '--local', '--data', dir], { env: { ...env, ORBWEAVER_SPIDER_BOOTSTRAP_RELAYS: '' } });
    assert.equal(r.status, 1, r.stderr);
    assert.ok(r.stdout.includes(`refused ws://localhost:9: host localhost is not public; ${hint}`), r.stdout);
    assert.match(r.stderr, /no relay reached: every relay was refused by the address rules \(ws:\/\/localhost:9: host localhost is not public; spider\.allowPrivate/);

    // the directory's table fits 100 columns; the refusal is in the relay's detail
    const table = runCli(['directory', '--data', dir]);
    assert.equal(table.status, 0, table.stderr);
    assert.match(table.stdout, /^ws:\/\/localhost:9 +0 +refused /m);
    for (const line of table.stdout.split('\n')) assert.ok(line.length <= 100, `${line.length} columns: ${line}`);
    const one = runCli(['directory', '--relay', 'ws://localhost:9', '--data', dir]);
    assert.equal(one.status, 0, one.stderr);
    assert.match(one.stdout.replace(/\n +/g, ' '), /last error: +host localhost is not public; spider\.allowPrivate \(ORBWEAVER_SPIDER_ALLOW_PRIVATE\) allows it/);
    for (const line of one.stdout.split('\n')) assert.ok(line.length <= 100, `${line.length} columns: ${line}`);
  } finally {
    await bootstrap.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
