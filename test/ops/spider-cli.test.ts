// `orbweaver spider` as an operator runs it: without --once it keeps crawling every interval until
// SIGTERM; a spider with nothing to crawl says so and `--once` exits non-zero.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { TestRelay, keypair, relayList, sign } from '../fixtures/test-relay.js';
import { runCli, spawnCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/relay-process.js';

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
