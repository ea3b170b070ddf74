// The data directory is the identity: a running relay records its URL and pid in its data
// directory, and `spider --once --data B` / `import --data B` act on the relay that owns B — never
// on whatever relay answers at the configured host:port.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TestRelay, keypair, relayList, sign } from '../fixtures/test-relay.js';
import { runCliAsync } from '../helpers/cli.js';
import { startRelayProcess, tempDir } from '../helpers/relay-process.js';
import { Author, Client } from '../helpers/client.js';
import { liveOwner } from '../../src/app/owner.js';

const T0 = Math.floor(Date.now() / 1000) - 5000;

/** A seed whose list (on a bootstrap relay) names relay `a`, which holds 5 profiles. */
async function graph() {
  const bootstrap = await new TestRelay({ flavour: 'strfry' }).start();
  const a = await new TestRelay({ flavour: 'strfry' }).start();
  const seed = keypair();
  bootstrap.add(relayList(seed.sk, T0, [a.url]));
  const profiles = Array.from({ length: 5 }, (_, i) => sign(keypair().sk, 0, T0 - i));
  a.add(...profiles);
  const env = { ORBWEAVER_SPIDER_SEEDS: seed.pk, ORBWEAVER_SPIDER_BOOTSTRAP_RELAYS: bootstrap.url, ORBWEAVER_SPIDER_ALLOW_PRIVATE: '1', ORBWEAVER_SPIDER_HOPS: '0', ORBWEAVER_SPIDER_PAUSE: '0', ORBWEAVER_SPIDER_IDLE_TIMEOUT: '3s' };
  return { env, ids: profiles.map((e) => e.id), close: () => Promise.all([bootstrap.close(), a.close()]) };
}

async function storedIds(url: string, ids: string[]): Promise<number> {
  const c = await Client.open(url);
  try {
    const { events } = await c.query({ ids });
    return events.length;
  } finally {
    c.close();
  }
}

test('a running relay records its URL and pid in its data directory, refuses a second relay there, and removes the record on a clean stop', async () => {
  const relay = await startRelayProcess();
  try {
    const file = join(relay.dataDir, 'relay.json');
    const rec = JSON.parse(readFileSync(file, 'utf8'));
    assert.equal(rec.pid, relay.proc.pid);
    assert.equal(rec.url, relay.url);
    await assert.rejects(startRelayProcess({ dataDir: relay.dataDir, timeoutMs: 15_000 }), new RegExp(`in use by the relay pid ${relay.proc.pid}`), 'one relay per data directory');
    assert.equal(await relay.stop(), 0);
    assert.equal(existsSync(file), false, 'removed on a clean stop');
  } finally {
    await relay.cleanup();
  }
});

test('spider --once --data B delivers to the relay that owns B, not to the relay at host:port', async () => {
  const g = await graph();
  const a = await startRelayProcess();
  const b = await startRelayProcess();
  try {
    // config names A's port (as a copied config would); the data directory is B's
    const r = await runCliAsync(['spider', '--once', '--data', b.dataDir, '--port', String(a.port)], { env: g.env });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(await storedIds(b.url, g.ids), 5, 'B, the owner of the data directory, got the events');
    assert.equal(await storedIds(a.url, g.ids), 0, 'A got nothing');
  } finally {
    await Promise.all([a.cleanup(), b.cleanup(), g.close()]);
  }
});

test('spider --once --data B with no relay on B ingests in-process, whatever answers at host:port; a stale record is ignored', async () => {
  const g = await graph();
  const a = await startRelayProcess();
  const dirB = tempDir();
  try {
    // a record left by a relay that died (kill -9): its pid is gone
    writeFileSync(join(dirB, 'relay.json'), JSON.stringify({ pid: 2 ** 22 + 12345, url: a.url, httpUrl: a.httpUrl }));
    const r = await runCliAsync(['spider', '--once', '--data', dirB, '--port', String(a.port)], { env: g.env });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(await storedIds(a.url, g.ids), 0, 'A got nothing');
    const exp = await runCliAsync(['export', '--data', dirB, '--filter', JSON.stringify({ ids: g.ids })]);
    assert.equal(exp.status, 0, exp.stderr);
    assert.equal(exp.stdout.trim().split('\n').filter(Boolean).length, 5, 'B holds the events');
  } finally {
    await Promise.all([a.cleanup(), g.close()]);
    rmSync(dirB, { recursive: true, force: true });
  }
});

test('import into a data directory a running relay owns is refused with a clear message', async () => {
  const relay = await startRelayProcess();
  try {
    const ev = new Author().sign({ content: 'imported' });
    const r = await runCliAsync(['import', '--data', relay.dataDir], { input: JSON.stringify(ev) + '\n' });
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, new RegExp(`pid ${relay.proc.pid}`));
    assert.match(r.stderr, /stop it first/);
    assert.equal(await storedIds(relay.url, [ev.id]), 0);
  } finally {
    await relay.cleanup();
  }
});

test('a record naming a dead pid, or the reader\'s own pid (a restarted container: the relay is pid 1 again), counts as absent', () => {
  const dir = tempDir();
  try {
    writeFileSync(join(dir, 'relay.json'), JSON.stringify({ pid: process.pid, url: 'ws://127.0.0.1:1', httpUrl: 'http://127.0.0.1:1', script: process.argv[1] }));
    assert.equal(liveOwner(dir), null);
    writeFileSync(join(dir, 'relay.json'), JSON.stringify({ pid: 2 ** 22 + 12345, url: 'ws://127.0.0.1:1' }));
    assert.equal(liveOwner(dir), null);
    writeFileSync(join(dir, 'relay.json'), JSON.stringify({ pid: process.ppid, url: 'ws://127.0.0.1:1', script: '' }));
    assert.equal(liveOwner(dir)?.pid, process.ppid, 'a live process is an owner');
    writeFileSync(join(dir, 'relay.json'), 'not json');
    assert.equal(liveOwner(dir), null);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
