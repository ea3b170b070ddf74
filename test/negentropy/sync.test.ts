// `orbweaver sync` between real relay processes: both directions end with the same events on both
// sides, a second run transfers nothing, a remote that caps records per NEG-OPEN is reconciled in
// time slices, sync into a data directory with no relay running ingests in-process, --follow
// mirrors new events live; a remote that answers garbage, never answers, floods or does not speak
// NIP-77 is bounded and reported with exit code 2, an unreachable one with exit code 1.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { WebSocketServer } from 'ws';
import { CLI, ROOT, startRelayProcess, startRelayProcesses, tempDir, type RelayProcess } from '../helpers/relay-process.js';
import { Author, Client } from '../helpers/client.js';
import type { NostrEvent } from '../../src/nostr/event.js';
import type { SyncSummary } from '../../src/sync/sync.js';

const BASE = 1_700_000_000;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  summary: SyncSummary;
}

/** Starts `orbweaver sync ... --json`; its output is collected in `out` as it comes. */
function startSync(args: string[], env: Record<string, string> = {}) {
  const p = spawn(process.execPath, [CLI, 'sync', ...args, '--json'], { cwd: ROOT, env: { ...process.env, ORBWEAVER_LOG_LEVEL: 'warn', ...env } });
  const out = { stdout: '', stderr: '' };
  p.stdout.on('data', (d) => (out.stdout += d));
  p.stderr.on('data', (d) => (out.stderr += d));
  const exited = new Promise<number | null>((r) => p.on('exit', r));
  return { p, out, exited };
}

/** Runs `orbweaver sync ... --json` to its end (bounded). */
function runSync(args: string[], env: Record<string, string> = {}, timeoutMs = 30_000): Promise<Run> {
  const { p, out, exited } = startSync(args, env);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      p.kill('SIGKILL');
      reject(new Error(`sync did not end within ${timeoutMs} ms:\n${out.stderr}`));
    }, timeoutMs);
    void exited.then((code) => {
      clearTimeout(timer);
      let summary: SyncSummary;
      try {
        summary = JSON.parse(out.stdout.trim().split('\n').pop() ?? '') as SyncSummary;
      } catch {
        return reject(new Error(`no JSON summary (exit ${code}):\n${out.stdout}\n${out.stderr}`));
      }
      resolve({ code, stdout: out.stdout, stderr: out.stderr, summary });
    });
  });
}

async function allIds(url: string, filter: object = {}): Promise<string[]> {
  const c = await Client.open(url);
  const ids: string[] = [];
  // page backwards: the relay caps one REQ at limits.maxLimit
  let until: number | undefined;
  for (;;) {
    const { events } = await c.query({ ...filter, limit: 500, ...(until !== undefined ? { until } : {}) });
    const fresh = events.filter((e) => !ids.includes(e.id));
    ids.push(...fresh.map((e) => e.id));
    if (fresh.length === 0) break;
    until = Math.min(...events.map((e) => e.created_at));
  }
  c.close();
  return ids.sort();
}

async function publish(url: string, evs: NostrEvent[]): Promise<void> {
  const c = await Client.open(url);
  for (const e of evs) assert.equal((await c.publish(e)).ok, true);
  c.close();
}

const makeEvents = (a: Author, n: number, tag: string, spread = n): NostrEvent[] =>
  Array.from({ length: n }, (_, i) => a.sign({ kind: i % 4 === 0 ? 7 : 1, created_at: BASE + (i % spread), content: `${tag}${i}` }));

describe('sync between two relays', () => {
  let a: RelayProcess;
  let b: RelayProcess;
  const alice = new Author();
  const onlyA = makeEvents(alice, 120, 'a', 30);
  const onlyB = makeEvents(alice, 80, 'b', 30);
  const both = makeEvents(alice, 100, 'c', 1); // 100 events in one second on both sides

  before(async () => {
    [a, b] = await startRelayProcesses({}, {});
    await Promise.all([publish(a.url, [...onlyA, ...both]), publish(b.url, [...onlyB, ...both])]);
  });
  after(async () => {
    await a?.cleanup();
    await b?.cleanup();
  });

  test('--dir down with a filter: B takes exactly A\'s matching events it lacked, A is unchanged', async () => {
    const before = await allIds(a.url);
    // run beside B: the fetched events are published to B (its live subscribers see them)
    const r = await runSync([a.url, '--filter', '{"kinds":[7]}', '--data', b.dataDir, '--port', String(b.port)]);
    assert.equal(r.code, 0, r.stderr);
    const want7 = onlyA.filter((e) => e.kind === 7);
    assert.equal(r.summary.reconcile.need, want7.length);
    assert.equal(r.summary.down.statuses.stored, want7.length);
    assert.equal(r.summary.reconcile.have, onlyB.filter((e) => e.kind === 7).length, 'what A lacks is counted');
    assert.equal(r.summary.up.offered, 0, 'down only: nothing is published');
    assert.deepEqual(await allIds(b.url, { kinds: [7] }), [...new Set([...onlyA, ...onlyB, ...both].filter((e) => e.kind === 7).map((e) => e.id))].sort());
    assert.deepEqual(await allIds(a.url), before);
  });

  test('--dir both: afterwards both relays hold the union; a second run transfers nothing', async () => {
    const r = await runSync([a.url, '--dir', 'both', '--data', b.dataDir, '--port', String(b.port)]);
    assert.equal(r.code, 0, r.stderr);
    const union = [...new Set([...onlyA, ...onlyB, ...both].map((e) => e.id))].sort();
    assert.deepEqual(await allIds(a.url), union);
    assert.deepEqual(await allIds(b.url), union);
    assert.equal(r.summary.up.statuses.stored, onlyB.length);
    const again = await runSync([a.url, '--dir', 'both', '--data', b.dataDir, '--port', String(b.port)]);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(again.summary.reconcile.need + again.summary.reconcile.have, 0);
    assert.equal(again.summary.reconcile.rounds, 1);
    assert.ok(again.summary.reconcile.bytesDown < 100, 'an in-sync filter costs a few bytes');
  });

  test('--dir up from a data directory with no relay running, and sync down into one', async () => {
    const dir = tempDir();
    const c = await startRelayProcess();
    try {
      // nothing listens on port 1: the events are ingested in this process
      const down = await runSync([a.url, '--data', dir, '--port', '1']);
      assert.equal(down.code, 0, down.stderr);
      assert.match(down.stderr, /ingesting in this process/);
      assert.equal(down.summary.down.statuses.stored, (await allIds(a.url)).length);
      const up = await runSync([c.url, '--dir', 'up', '--data', dir, '--port', '1']);
      assert.equal(up.code, 0, up.stderr);
      assert.deepEqual(await allIds(c.url), await allIds(a.url));
    } finally {
      await c.cleanup();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

test('a remote that refuses big sets (NEG-ERR blocked:) is reconciled in time slices', async () => {
  const small = await startRelayProcess({ env: { ORBWEAVER_NEGENTROPY_MAX_RECORDS: '25' } });
  const dir = tempDir();
  try {
    const evs = makeEvents(new Author(), 80, 's', 80);
    await publish(small.url, evs);
    const r = await runSync([small.url, '--data', dir, '--port', '1']);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(r.summary.reconcile.splits >= 2, `split ${r.summary.reconcile.splits} times`);
    assert.equal(r.summary.down.statuses.stored, 80);
    // more than 25 events in one second cannot be split: reported, exit 2
    const crowded = makeEvents(new Author(), 30, 'x', 1);
    await publish(small.url, crowded);
    const r2 = await runSync([small.url, '--data', dir, '--port', '1', '--filter', `{"since":${BASE},"until":${BASE}}`]);
    assert.equal(r2.code, 2);
    assert.match(r2.summary.error!.message, /^blocked: .*cannot split/);
  } finally {
    await small.cleanup();
    rmSync(dir, { recursive: true, force: true });
  }
});

/** A TCP forwarder to a relay whose connections can be cut (a network failure, the relay unchanged). */
async function cuttableProxy(port: number): Promise<{ url: string; cut(): void; close(): void }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((c) => {
    const r = net.connect(port, '127.0.0.1');
    sockets.add(c).add(r);
    c.pipe(r);
    r.pipe(c);
    const end = () => { c.destroy(); r.destroy(); sockets.delete(c); sockets.delete(r); };
    c.on('error', end).on('close', end);
    r.on('error', end).on('close', end);
  });
  await new Promise<void>((res) => server.listen(0, '127.0.0.1', res));
  return {
    url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}`,
    cut: () => { for (const x of sockets) x.destroy(); },
    close: () => { for (const x of sockets) x.destroy(); server.close(); },
  };
}

test('--follow mirrors new events live, catches up after the connection drops, stops cleanly on SIGTERM', async () => {
  const [a, b] = await startRelayProcesses({}, {});
  const proxy = await cuttableProxy(a.port);
  const { p, out, exited } = startSync([proxy.url, '--follow', '--data', b.dataDir, '--port', String(b.port)]);
  const watcher = await Client.open(b.url);
  try {
    for (let i = 0; i < 100 && !/following/.test(out.stderr); i++) await new Promise((r) => setTimeout(r, 100));
    assert.match(out.stderr, /following/);
    watcher.send(['REQ', 'live', { kinds: [1] }]);
    await watcher.next((m) => m[0] === 'EOSE');
    const ev = new Author().sign({ content: 'fresh' });
    await publish(a.url, [ev]);
    const got = await watcher.next((m) => m[0] === 'EVENT' && (m[2] as NostrEvent).id === ev.id, 10_000, 'the new event on the mirror');
    assert.equal((got[2] as NostrEvent).content, 'fresh');
    // the connection drops; an event published meanwhile arrives through the new reconciliation
    proxy.cut();
    const later = new Author().sign({ content: 'while disconnected' });
    await publish(a.url, [later]);
    await watcher.next((m) => m[0] === 'EVENT' && (m[2] as NostrEvent).id === later.id, 15_000, 'the event published while disconnected');
    assert.match(out.stderr, /connection lost; reconnecting/);
    p.kill('SIGTERM');
    assert.equal(await exited, 0, out.stderr);
    const summary = JSON.parse(out.stdout.trim()) as SyncSummary;
    assert.ok(summary.followed >= 1);
  } finally {
    watcher.close();
    p.kill('SIGKILL');
    proxy.close();
    await a.cleanup();
    await b.cleanup();
  }
});

describe('misbehaving remotes are bounded and reported', () => {
  type Behaviour = (send: (m: unknown[] | string) => void, msg: unknown[]) => void;
  let behaviour: Behaviour = () => {};
  let server: http.Server;
  let url = '';
  const dir = tempDir();
  before(async () => {
    server = http.createServer();
    const wss = new WebSocketServer({ server });
    wss.on('connection', (ws) => {
      ws.on('message', (data) => {
        let msg: unknown[];
        try { msg = JSON.parse(data.toString()); } catch { return; }
        behaviour((m) => ws.send(typeof m === 'string' ? m : JSON.stringify(m)), msg);
      });
      ws.on('error', () => {});
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => {
    server.closeAllConnections();
    server.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const env = { ORBWEAVER_NEGENTROPY_SYNC_TIMEOUT: '1s' };
  const sync = () => runSync([url, '--data', dir, '--port', '1'], env);

  test('garbage answers to NEG-OPEN: exit 2, kind protocol', async () => {
    for (const answer of ['zz', '6101']) {
      behaviour = (send, m) => { if (m[0] === 'NEG-OPEN') send(['NEG-MSG', m[1], answer]); };
      const r = await sync();
      assert.equal(r.code, 2, `answer ${answer}`);
      assert.equal(r.summary.error?.kind, 'protocol', `answer ${answer}: ${r.summary.error?.message}`);
    }
  });

  test('no answer at all: exit 2 after negentropy.syncTimeout, kind timeout', async () => {
    behaviour = () => {};
    const t0 = Date.now();
    const r = await sync();
    assert.equal(r.code, 2);
    assert.equal(r.summary.error?.kind, 'timeout');
    assert.ok(Date.now() - t0 < 15_000);
  });

  test('a relay without NIP-77 (NOTICE) or refusing it (NEG-ERR): exit 2, reported', async () => {
    behaviour = (send, m) => { if (m[0] === 'NEG-OPEN') send(['NOTICE', 'ERROR: bad msg: unknown cmd']); };
    let r = await sync();
    assert.equal(r.code, 2);
    assert.equal(r.summary.error?.kind, 'unsupported');
    behaviour = (send, m) => { if (m[0] === 'NEG-OPEN') send(['NEG-ERR', m[1], 'restricted: not for you']); };
    r = await sync();
    assert.equal(r.code, 2);
    assert.equal(r.summary.error?.kind, 'refused');
    assert.match(r.summary.error!.message, /^restricted: not for you/);
  });

  test('a frame beyond the payload cap closes the connection: exit 2', async () => {
    behaviour = (send, m) => { if (m[0] === 'NEG-OPEN') send(`["NEG-MSG","${m[1]}","${'61'.repeat(3 << 20)}"]`); };
    const r = await sync();
    assert.equal(r.code, 2);
    assert.equal(r.summary.error?.kind, 'closed');
  });

  /** A NEG-MSG offering these ids over the whole range (an IdList): we lack them all. */
  const offer = (ids: string[]) => '61000002' + ids.length.toString(16).padStart(2, '0') + ids.join('');

  test('a remote that drips what we asked for, each just in time, is stopped by the sync deadline: exit 2', async () => {
    const a = new Author();
    const evs = Array.from({ length: 100 }, (_, i) => a.sign({ content: `drip ${i}`, created_at: BASE + i }));
    const timers: NodeJS.Timeout[] = [];
    behaviour = (send, m) => {
      if (m[0] === 'NEG-OPEN') send(['NEG-MSG', m[1], offer(evs.map((e) => e.id))]);
      if (m[0] === 'REQ') {
        // one asked-for event every 400 ms, under the 1 s answer timeout: 40 s for all of them
        let i = 0;
        const t = setInterval(() => { if (i < evs.length) send(['EVENT', m[1], evs[i++]]); }, 400);
        timers.push(t);
      }
    };
    try {
      const r = await runSync([url, '--data', dir, '--port', '1'], { ...env, ORBWEAVER_NEGENTROPY_SYNC_DEADLINE: '3s' });
      assert.equal(r.code, 2, r.stderr);
      assert.equal(r.summary.error?.kind, 'timeout');
      assert.match(r.summary.error!.message, /deadline \(negentropy\.syncDeadline/);
      assert.ok(r.summary.down.received > 0 && r.summary.down.received < evs.length, `received ${r.summary.down.received}`);
    } finally {
      for (const t of timers) clearInterval(t);
    }
  });

  test('a remote that answers our REQ only with events we did not ask for cannot keep it open: exit 2, nothing fetched', async () => {
    const a = new Author();
    const asked = a.sign({ content: 'asked', created_at: BASE });
    const timers: NodeJS.Timeout[] = [];
    behaviour = (send, m) => {
      if (m[0] === 'NEG-OPEN') send(['NEG-MSG', m[1], offer([asked.id])]);
      if (m[0] === 'REQ') {
        // an unrelated event every 300 ms, never the one asked for, never EOSE
        const t = setInterval(() => send(['EVENT', m[1], a.sign({ content: 'unrelated' })]), 300);
        timers.push(t);
      }
    };
    try {
      const r = await sync();
      assert.equal(r.code, 2, r.stderr);
      assert.equal(r.summary.error?.kind, 'incomplete');
      assert.match(r.summary.error!.message, /^1 of 1 events asked for were not fetched/);
      assert.equal(r.summary.down.received, 0);
      assert.ok(r.summary.down.dropped > 0);
    } finally {
      for (const t of timers) clearInterval(t);
    }
  });

  test('garbage or an oversized frame instead of the events asked for: exit 2 with the reason', async () => {
    const a = new Author();
    const evs = Array.from({ length: 100 }, (_, i) => a.sign({ content: `g ${i}`, created_at: BASE + i }));
    for (const bad of ['garbage', 'oversized'] as const) {
      behaviour = (send, m) => {
        if (m[0] === 'NEG-OPEN') send(['NEG-MSG', m[1], offer(evs.map((e) => e.id))]);
        if (m[0] === 'REQ') {
          for (let i = 0; i < 5; i++) send(bad === 'garbage' ? `["EVENT","${String(m[1])}",{"id":` : `["EVENT","${String(m[1])}",{"content":"${'x'.repeat(1_200_000)}"}]`);
          send(['EOSE', m[1]]);
        }
      };
      const r = await sync();
      assert.equal(r.code, 2, `${bad}: ${r.stderr}`);
      assert.equal(r.summary.error?.kind, 'incomplete', bad);
      assert.match(r.summary.error!.message, /^100 of 100 events asked for were not fetched/);
      assert.match(r.summary.error!.message, bad === 'garbage' ? /malformed/ : /over the size limit/);
      assert.match(r.stderr, /FAILED \(incomplete\)/);
    }
  });

  test('--follow goes on following after a first sync that missed events the remote no longer sends (exit 2 at the end)', async () => {
    const a = new Author();
    const kept = a.sign({ content: 'kept', created_at: BASE + 1 });
    const gone = a.sign({ content: 'deleted meanwhile', created_at: BASE + 2 });
    const fresh = a.sign({ content: 'published while we follow' });
    behaviour = (send, m) => {
      if (m[0] === 'NEG-OPEN') send(['NEG-MSG', m[1], offer([kept.id, gone.id])]);
      if (m[0] === 'REQ') {
        const f = m[2] as { ids?: string[] };
        if (f.ids) {
          if (f.ids.includes(kept.id)) send(['EVENT', m[1], kept]);
          send(['EOSE', m[1]]);
        } else {
          send(['EOSE', m[1]]);
          setTimeout(() => send(['EVENT', m[1], fresh]), 300);
        }
      }
    };
    const home = await startRelayProcess();
    const { p, out, exited } = startSync([url, '--follow', '--data', home.dataDir, '--port', String(home.port)], env);
    const watcher = await Client.open(home.url);
    try {
      watcher.send(['REQ', 'w', { ids: [fresh.id] }]);
      await watcher.next((m) => m[0] === 'EVENT' && (m[2] as NostrEvent).id === fresh.id, 20_000, 'the live event on the home relay');
      assert.match(out.stderr, /first sync incomplete \(1 of 2 events asked for were not fetched.*\); following .* anyway/);
      p.kill('SIGTERM');
      assert.equal(await exited, 2, 'the first sync decides the exit code');
      const summary = JSON.parse(out.stdout.trim()) as SyncSummary;
      assert.equal(summary.error?.kind, 'incomplete');
      assert.ok(summary.followed >= 1);
    } finally {
      watcher.close();
      p.kill('SIGKILL');
      await home.cleanup();
    }
  });

  test('events we did not ask for are dropped; an unreachable remote exits 1', async () => {
    const a = new Author();
    const offered = a.sign({ content: 'offered' });
    const intruder = a.sign({ content: 'not asked for' });
    behaviour = (send, m) => {
      if (m[0] === 'NEG-OPEN') send(['NEG-MSG', m[1], '61000002' + '01' + offered.id]);
      if (m[0] === 'REQ') {
        send(['EVENT', m[1], intruder]);
        send(['EVENT', m[1], offered]);
        send(['EOSE', m[1]]);
      }
    };
    const r = await sync();
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.summary.down.statuses.stored, 1);
    assert.equal(r.summary.down.dropped, 1);
    const unreachable = await runSync(['ws://127.0.0.1:1', '--data', dir, '--port', '1'], env);
    assert.equal(unreachable.code, 1);
    assert.equal(unreachable.summary.reached, false);
  });
});
