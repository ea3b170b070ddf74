// The one bounded remote read (src/remote/read.ts) against a small in-process relay that answers
// each REQ as a test says: every way a read ends (flood, bytes, deadline, idle, hostile, EOSE), what
// keeps a read alive (an accepted event, not a refused one), and that unchecked events wait for
// admission a window at a time while the socket is paused. Outcomes only: which end, how many
// events were read, what was kept; never durations.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WebSocketServer, type WebSocket } from 'ws';
import { RelayClient } from '../../src/remote/client.js';
import { resolveTarget } from '../../src/remote/url.js';
import { Dropped, readEvents, WINDOW_EVENTS, HOSTILE_MIN, type ReadRequest } from '../../src/remote/read.js';

type Answer = (ws: WebSocket, subId: string) => void;

async function relay(answer: Answer): Promise<{ client: RelayClient; close(): Promise<void> }> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((r) => wss.once('listening', () => r()));
  wss.on('connection', (ws) => ws.on('message', (d) => {
    const m = JSON.parse(d.toString()) as unknown[];
    if (m[0] === 'REQ') answer(ws, m[1] as string);
  }));
  const { port } = wss.address() as { port: number };
  const client = await RelayClient.connect(await resolveTarget(`ws://127.0.0.1:${port}`, true), { connectTimeout: 2000, maxFrame: 70_000, maxPayload: 1 << 20 });
  return {
    client,
    close: async () => {
      client.close(0);
      for (const c of wss.clients) c.terminate();
      await new Promise<void>((r) => wss.close(() => r()));
    },
  };
}

const ev = (i: number, content = '') => ({ id: i.toString(16).padStart(64, '0'), pubkey: 'a'.repeat(64), created_at: 1_700_000_000 - i, kind: 1, tags: [], content, sig: 'b'.repeat(128) });
const frame = (sub: string, e: unknown) => JSON.stringify(['EVENT', sub, e]);

/** A read that takes every event as is, admitting nothing (no admit: kept as checked). */
const plain = (o: Partial<ReadRequest<unknown, unknown>> = {}): ReadRequest<unknown, unknown> => ({
  filters: [{ kinds: [1] }], maxEvents: 1000, maxBytes: 1 << 20, deadline: 10_000, idleTimeout: 10_000, check: (raw) => raw, ...o,
});

test('read bounds: more events than the limit is a flood; more bytes than allowed is a cut; EOSE ends it with everything kept', async () => {
  const r = await relay((ws, sub) => {
    for (let i = 0; i < 30; i++) ws.send(frame(sub, ev(i, 'x'.repeat(1000))));
    ws.send(JSON.stringify(['EOSE', sub]));
  });
  try {
    const flood = await readEvents(r.client, plain({ maxEvents: 10 }));
    assert.equal(flood.end, 'flood');
    assert.equal(flood.kept.length, 10, 'the limit, not one more');
    const bytes = await readEvents(r.client, plain({ maxBytes: 5_000 }));
    assert.equal(bytes.end, 'bytes');
    assert.ok(bytes.kept.length < 5, `cut at its bytes (${bytes.kept.length} kept)`);
    const whole = await readEvents(r.client, plain());
    assert.equal(whole.end, 'eose');
    assert.equal(whole.kept.length, 30);
  } finally { await r.close(); }
});

test('read bounds: a drip of accepted events is cut by the deadline; refused or repeated ones keep nothing alive', async () => {
  const timers = new Set<NodeJS.Timeout>();
  let mode: 'fresh' | 'repeat' = 'fresh';
  const r = await relay((ws, sub) => {
    let i = 0;
    const t = setInterval(() => {
      if (ws.readyState !== ws.OPEN) return clearInterval(t);
      ws.send(frame(sub, ev(mode === 'fresh' ? i++ : 0)));
    }, 20);
    timers.add(t);
  });
  try {
    // every event new: only the deadline ends it (the idle timer is re-armed each time)
    const dripped = await readEvents(r.client, plain({ deadline: 400, idleTimeout: 200 }));
    assert.equal(dripped.end, 'deadline');
    assert.ok(dripped.kept.length > 1, 'it was kept alive by accepted events until the deadline');
    // the same event again and again: one accepted, the repeats do not re-arm the idle timer
    mode = 'repeat';
    const ids = new Set<string>();
    const repeats = await readEvents(r.client, plain({
      deadline: 30_000, idleTimeout: 200,
      check: (raw) => { const id = (raw as { id: string }).id; if (ids.has(id)) return Dropped.of.repeat; ids.add(id); return raw; },
    }));
    assert.equal(repeats.end, 'idle', 'silence as far as progress goes');
    assert.equal(repeats.kept.length, 1);
    assert.ok(repeats.dropped.repeat > 0);
  } finally {
    for (const t of timers) clearInterval(t);
    await r.close();
  }
});

test('read windows: unchecked events wait for admission a window at a time, the socket paused; a remote whose events are mostly refused is cut off as hostile', async () => {
  const r = await relay((ws, sub) => {
    for (let i = 0; i < 5000; i++) ws.send(frame(sub, ev(i, 'y'.repeat(900))));
    ws.send(JSON.stringify(['EOSE', sub]));
  });
  try {
    const batches: number[] = [];
    let admitting = false;
    let overlap = false;
    const ok = await readEvents<unknown, unknown>(r.client, plain({
      maxEvents: 10_000, maxBytes: 64 << 20,
      admit: async (w) => {
        if (admitting) overlap = true;
        admitting = true;
        batches.push(w.length);
        await new Promise((res) => setTimeout(res, 5)); // a slow admission: the remote must wait
        admitting = false;
        return { kept: w.filter((_, i) => i % 2 === 0), invalid: 0 };
      },
    }));
    assert.equal(ok.end, 'eose');
    assert.equal(overlap, false, 'one window admitted at a time');
    assert.equal(batches.reduce((a, b) => a + b, 0), 5000, 'every event admitted once');
    // a window closes at WINDOW_EVENTS; what the paused socket still had in its last chunk (64 KiB:
    // ~65 of these frames) may join the next one, nothing more
    assert.ok(Math.max(...batches) <= WINDOW_EVENTS + 100, `windows of at most ~${WINDOW_EVENTS} (largest ${Math.max(...batches)})`);
    assert.equal(ok.kept.length, batches.reduce((a, b) => a + Math.ceil(b / 2), 0), 'only what admission kept');

    // every signature refused: the first window ends the read
    const forged = await readEvents<unknown, unknown>(r.client, plain({
      maxEvents: 10_000, maxBytes: 64 << 20,
      admit: async (w) => ({ kept: [], invalid: w.length }),
    }));
    assert.equal(forged.end, 'hostile');
    assert.ok(forged.invalid >= HOSTILE_MIN);
    assert.ok(forged.events < 1000, `read no more than a window or two of 5,000 (${forged.events})`);
    assert.deepEqual(forged.kept, []);

    // malformed events (the page checks' lies) end it before any admission
    const malformed = await readEvents<unknown, unknown>(r.client, plain({ check: () => Dropped.of.shape, admit: async () => { throw new Error('not reached'); } }));
    assert.equal(malformed.end, 'hostile');
    assert.equal(malformed.dropped.shape, HOSTILE_MIN);
  } finally { await r.close(); }
});
