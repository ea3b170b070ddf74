// Nothing forged gets in, by any way into the store. A forging remote (the test relay, a plain `ws`
// server that hands out whatever it holds, over REQ, live subscriptions and NIP-77) offers three
// forgeries "by" real authors: one with a bad signature, one whose id is not its hash, and one
// carrying a valid signature of another event. Each path — the in-process sink, `import`, `sync`
// (NIP-77 with its by-id fetch, and --follow), `spider --once` paging and NIP-77, and a Redis worker
// delivering to its home relay — refuses all three, counts them as invalid in its summary, and the
// real authors' events are exactly what they were.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TestRelay } from '../fixtures/test-relay.js';
import { Author, Client } from '../helpers/client.js';
import { runCliAsync, spawnCli } from '../helpers/cli.js';
import { startRelayProcess, tempDir, type RelayProcess } from '../helpers/relay-process.js';
import { openStore } from '../../src/store/index.js';
import { openHome, waitFor } from '../spider/harness.js';
import { loadVerifier } from '../../src/nostr/verify.js';
import { computeId, type NostrEvent } from '../../src/nostr/event.js';
import type { SyncSummary } from '../../src/sync/sync.js';
import type { SpiderSummary } from '../../src/spider/status.js';
import { startRedis, startWorker, type RedisServer } from '../distributed/harness.js';

const T0 = Math.floor(Date.now() / 1000) - 10_000;
const alice = new Author();
const bob = new Author();
const hex = (label: string) => createHash('sha256').update(label).digest('hex');

/** The real authors' events: alice's 50 notes, profile, follow list and relay list; bob's profile. */
function realEvents(relayUrl: string): NostrEvent[] {
  return [
    ...Array.from({ length: 50 }, (_, i) => alice.sign({ kind: 1, created_at: T0 + i, content: `note ${i}` })),
    alice.sign({ kind: 0, created_at: T0, content: '{"name":"alice"}' }),
    alice.sign({ kind: 3, created_at: T0, tags: [['p', bob.pk]] }),
    alice.sign({ kind: 10002, created_at: T0, tags: [['r', relayUrl]] }),
    bob.sign({ kind: 0, created_at: T0, content: '{"name":"bob"}' }),
  ];
}

/** An event "by" `pk` whose id is its hash, and whose signature is `sig` (someone else's, or garbage). */
function withSig(pk: string, at: number, kind: number, tags: string[][], content: string, sig: string): NostrEvent {
  const body = { pubkey: pk, created_at: at, kind, tags, content };
  return { id: computeId(body), ...body, sig };
}

/**
 * The three forgeries, newer than everything real: a bad signature, an id that is not the hash, a
 * valid signature of another event. `kinds` picks what each forges (directory kinds for the spider).
 */
function forgeries(real: NostrEvent[], kinds: [number, number, number], at = T0 + 100): NostrEvent[] {
  const aliceReal = real.find((e) => e.pubkey === alice.pk && e.kind === kinds[2]) ?? real[0];
  const bobReal = real.find((e) => e.pubkey === bob.pk)!;
  const notes = real.filter((e) => e.kind === 1).map((e) => ['e', e.id]);
  const bad = withSig(alice.pk, at, kinds[0], kinds[0] === 5 ? notes : [], kinds[0] === 0 ? '{"name":"alice is gone"}' : '', hex('garbage').repeat(2));
  // an id that is not this event's hash (with a real signature by bob, of another id)
  const idNotHash = { ...withSig(bob.pk, at, kinds[1], [], '{"name":"bob (impersonated)"}', bobReal.sig), id: hex(`not the hash ${at}`) };
  // alice's valid signature of her real event, on a different event
  const otherSig = withSig(alice.pk, at, kinds[2], kinds[2] === 10002 ? [['r', 'wss://attacker.example']] : [], kinds[2] === 0 ? '{"name":"alice (replaced)"}' : 'replaced', aliceReal.sig);
  return [bad, idNotHash, otherSig];
}

/** Every stored event's JSON, sorted: what "nothing changed" is compared with. */
async function contents(dir: string): Promise<string[]> {
  const store = await openStore({ dir, mapSize: 1 << 30, readOnly: true });
  try {
    const out: string[] = [];
    for await (const json of store.iterate({})) out.push(json);
    return out.sort();
  } finally { await store.close(); }
}

/** A data directory holding the real events, imported as an operator would. */
async function seededDir(real: NostrEvent[]): Promise<string> {
  const dir = tempDir('orbweaver-forged-');
  const file = join(dir, 'real.jsonl');
  writeFileSync(file, real.map((e) => JSON.stringify(e)).join('\n') + '\n');
  const r = await runCliAsync(['import', file, '--json'], { env: { ORBWEAVER_DATA_DIR: dir } });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(JSON.parse(r.stdout).stored, real.length);
  rmSync(file);
  return dir;
}

const dirs: string[] = [];
after(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

test('the in-process sink checks what it is handed; a proof is the checked object itself, unchanged', async () => {
  const home = await openHome();
  try {
    const real = realEvents('ws://127.0.0.1:1');
    for (const e of real) assert.equal(await home.sink.put(e), 'stored');
    const before = home.ingestChecks.n;
    for (const f of forgeries(real, [5, 0, 0])) assert.equal(await home.sink.put(f), 'invalid');
    assert.equal(home.ingestChecks.n, before + 3, 'the ingest path checked each forgery itself');
    // an event checked by the spider's verifier is not checked again ...
    const verifier = await loadVerifier('auto');
    const good = alice.sign({ kind: 1, created_at: T0 + 500, content: 'checked once' });
    assert.equal(verifier.check(good), null);
    const n = home.ingestChecks.n;
    assert.equal(await home.sink.put(good), 'stored');
    assert.equal(home.ingestChecks.n, n, 'the proof of the spider\'s check is used');
    // ... but the same object changed after its check proves nothing
    const changed = alice.sign({ kind: 1, created_at: T0 + 501, content: 'original' });
    assert.equal(verifier.check(changed), null);
    changed.content = 'changed after the check';
    assert.equal(await home.sink.put(changed), 'invalid');
    // and a copy of a checked object is not the checked object
    const copy = alice.sign({ kind: 1, created_at: T0 + 502, content: 'copied' });
    assert.equal(verifier.check(copy), null);
    assert.equal(await home.sink.put({ ...copy }), 'stored');
    assert.equal(home.ingestChecks.n, n + 2, 'the changed object and the copy were checked by the ingest path');
    assert.ok(home.store.get(real[0].id), 'the notes the forged deletion named are still there');
  } finally { await home.close(); }
});

test('import: forged lines are refused as invalid and change nothing', async () => {
  const real = realEvents('ws://127.0.0.1:1');
  const dir = await seededDir(real);
  dirs.push(dir);
  const before = await contents(dir);
  const file = join(dir, 'forged.jsonl');
  writeFileSync(file, forgeries(real, [5, 0, 0]).map((e) => JSON.stringify(e)).join('\n') + '\n');
  const r = await runCliAsync(['import', file, '--json'], { env: { ORBWEAVER_DATA_DIR: dir } });
  assert.equal(r.status, 0, r.stderr);
  const s = JSON.parse(r.stdout) as { stored: number; rejected: number; invalid: number; reasons: Record<string, number> };
  assert.equal(s.stored, 0);
  assert.equal(s.invalid, 3, JSON.stringify(s.reasons));
  assert.match(r.stderr, /3 invalid/);
  rmSync(file);
  assert.deepEqual(await contents(dir), before);
});

describe('sync from a forging remote, no relay owning the data directory', () => {
  let forger: TestRelay;
  let real: NostrEvent[];
  before(async () => {
    forger = await new TestRelay({ flavour: 'strfry', neg: 'serve' }).start();
    real = realEvents(forger.url);
    forger.add(...real);
  });
  after(() => forger.close());

  test('NIP-77 and the by-id fetch: the three forgeries are fetched, refused as invalid, nothing changes', async () => {
    const dir = await seededDir(real);
    dirs.push(dir);
    const before = await contents(dir);
    const forged = forgeries(real, [5, 0, 0]);
    const remote = await new TestRelay({ flavour: 'strfry', neg: 'serve' }).start();
    try {
      remote.add(...real, ...forged);
      for (const local of [[], ['--local']]) {
        const r = await runCliAsync(['sync', remote.url, '--json', ...local], { env: { ORBWEAVER_DATA_DIR: dir } });
        const s = JSON.parse(r.stdout.trim().split('\n').pop()!) as SyncSummary;
        assert.equal(s.reconcile.need, 3, r.stderr);
        assert.equal(s.down.received, 3);
        assert.deepEqual(s.down.statuses, { invalid: 3 }, r.stderr);
        assert.match(r.stderr, /invalid 3/);
        assert.deepEqual(await contents(dir), before);
      }
    } finally { await remote.close(); }
  });

  test('--follow: forgeries arriving live are refused as invalid, nothing changes', async () => {
    const dir = await seededDir(real);
    dirs.push(dir);
    const before = await contents(dir);
    let note: NostrEvent | undefined;
    const c = spawnCli(['sync', forger.url, '--follow', '--json'], { env: { ORBWEAVER_DATA_DIR: dir, ORBWEAVER_LOG_LEVEL: 'warn' } });
    try {
      await waitFor(() => c.stderr().includes('caught up; following'), 20_000, 'sync to catch up');
      await waitFor(() => forger.reqs.some((f) => f.since !== undefined), 10_000, 'the live REQ');
      // dated now, so they match the live REQ's `since`; then one real note, which shows when the
      // forgeries before it were decided
      const at = Math.floor(Date.now() / 1000);
      forger.add(...forgeries(real, [5, 0, 0], at));
      note = alice.sign({ kind: 1, created_at: at, content: 'live and real' });
      forger.add(note);
      await waitForAsync(async () => (await contents(dir)).includes(JSON.stringify(note!)), 20_000, 'the real live note to be stored');
    } finally {
      await c.kill('SIGTERM');
    }
    const s = JSON.parse(c.stdout().trim().split('\n').pop()!) as SyncSummary;
    assert.equal(s.followed, 4, c.stderr());
    assert.deepEqual(s.down.statuses, { invalid: 3, stored: 1 }, c.stderr());
    before.push(JSON.stringify(note!));
    before.sort();
    assert.deepEqual(await contents(dir), before);
  });
});

describe('spider --once from a forging remote (directory kinds)', () => {
  const spiderEnv = (dir: string, seedRelay: string, extra: Record<string, string> = {}) => ({
    ORBWEAVER_DATA_DIR: dir, ORBWEAVER_SPIDER_SEEDS: alice.pk, ORBWEAVER_SPIDER_BOOTSTRAP_RELAYS: seedRelay, ORBWEAVER_SPIDER_HOPS: '0',
    ORBWEAVER_SPIDER_ALLOW_PRIVATE: '1', ORBWEAVER_SPIDER_IDLE_TIMEOUT: '2s', ORBWEAVER_SPIDER_PAUSE: '0', ...extra,
  });

  for (const mode of ['paging', 'NIP-77'] as const) {
    test(`${mode}: the forgeries are refused as invalid and the real lists stay`, async () => {
      const forger = await new TestRelay(mode === 'paging' ? { flavour: 'strfry' } : { flavour: 'strfry', neg: 'serve', nip11: { supported_nips: [1, 11, 77] } }).start();
      try {
        const real = realEvents(forger.url);
        // a follow list with a bad signature, a profile whose id is not its hash, a relay list
        // carrying the signature of alice's real one
        forger.add(...real, ...forgeries(real, [3, 0, 10002]));
        const dir = await seededDir(real);
        dirs.push(dir);
        const before = await contents(dir);
        const r = await runCliAsync(['spider', '--once', '--local', '--json'], { env: spiderEnv(dir, forger.url, { ORBWEAVER_SPIDER_NEGENTROPY: mode === 'paging' ? 'off' : 'listed' }), timeoutMs: 60_000 });
        const s = JSON.parse(r.stdout) as SpiderSummary & { events: { nip77Relays?: number } };
        assert.equal(s.relays.reached, 1, r.stderr);
        assert.equal(s.events.invalid, 3, r.stdout);
        assert.equal(s.events.stored, 0);
        if (mode === 'NIP-77') assert.ok((s.events.nip77Relays ?? 0) >= 1, 'the remote was reconciled over NIP-77');
        assert.deepEqual(await contents(dir), before);
      } finally { await forger.close(); }
    });
  }
});

describe('a Redis worker delivering to its home relay', () => {
  let redis: RedisServer;
  let home: RelayProcess;
  let forger: TestRelay;
  before(async () => {
    redis = await startRedis();
    forger = await new TestRelay({ flavour: 'strfry' }).start();
  });
  after(async () => {
    await home?.cleanup();
    await forger.close();
    await redis.stop();
  });

  test('the worker refuses the forgeries as invalid; the home relay holds what it held', async () => {
    const real = realEvents(forger.url);
    forger.add(...real, ...forgeries(real, [3, 0, 10002]));
    const worker = new Author();
    const workerSk = Buffer.from(worker.sk).toString('hex');
    const common = { ORBWEAVER_SPIDER_ALLOW_PRIVATE: '1', ORBWEAVER_SPIDER_IDLE_TIMEOUT: '2s', ORBWEAVER_SPIDER_PAUSE: '0', ORBWEAVER_SPIDER_QUEUE_KEY: 'forged' };
    home = await startRelayProcess({
      env: {
        ...common, ORBWEAVER_SPIDER: '1', ORBWEAVER_SPIDER_SEEDS: alice.pk, ORBWEAVER_SPIDER_BOOTSTRAP_RELAYS: forger.url, ORBWEAVER_SPIDER_HOPS: '0',
        ORBWEAVER_SPIDER_INTERVAL: '24h', ORBWEAVER_SPIDER_REDIS: redis.url, ORBWEAVER_SPIDER_WORK: '0', ORBWEAVER_SPIDER_WORKER_PUBKEYS: worker.pk,
      },
    });
    const c = await Client.open(home.url);
    for (const e of real) assert.equal((await c.publish(e)).ok, true);
    c.close();
    const w = startWorker('w1', redis.url, home.url, { ...common, ORBWEAVER_SPIDER_WORKER_KEY: workerSk });
    try {
      const done = await waitForLog(w.logs, (l) => typeof l.msg === 'string' && (l.msg as string).endsWith(', acked'), 60_000);
      assert.equal(done.invalid, 3, JSON.stringify(done));
      assert.equal(done.stored, 0);
    } finally { await w.kill(); }
    const q = await Client.open(home.url);
    const got = await q.query({ authors: [alice.pk, bob.pk], limit: 500 });
    q.close();
    assert.deepEqual(got.events.map((e) => e.id).sort(), real.map((e) => e.id).sort());
  });
});

async function waitForAsync(cond: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function waitForLog(logs: Array<Record<string, unknown>>, pred: (l: Record<string, unknown>) => boolean, timeoutMs: number): Promise<Record<string, unknown>> {
  let found: Record<string, unknown> | undefined;
  await waitFor(() => (found = logs.find(pred)) !== undefined, timeoutMs, 'the worker\'s log line');
  return found!;
}
