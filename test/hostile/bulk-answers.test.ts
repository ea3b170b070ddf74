// Attack (issue 72): a REQ whose stored answer is larger than what one address may hold unsent.
// A lookup of 1,500 authors' profiles and follow lists (~120 MB here) was read whole and queued at
// once: the address's 64 MiB output cap then closed the connection while the client read, with 0
// bytes delivered and the relay's RSS up by 360 MB; four such REQs from one address took it up by
// 700 MB. The answer is now read in pieces as the client drains it (read.answerPieceBytes, charged
// before each is read): it arrives whole, to a reader that pauses too, and memory stays bounded.
// Default settings; the store is loaded with `orbweaver import` before the relay starts.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Socket } from 'node:net';
import type WebSocket from 'ws';
import { startRelayProcess, tempDir, type RelayProcess } from '../helpers/relay-process.js';
import { runCliAsync } from '../helpers/cli.js';
import { Client, now } from '../helpers/client.js';
import { anonMb, rawSocket, rssMb } from './helpers.js';
import { deriveKey, fakeHex, getSigner } from '../../bench/lib/events.js';

const AUTHORS = 1500;
let relay: RelayProcess;
let authors: string[] = [];
let answerBytes = 0;

before(async () => {
  const signer = await getSigner();
  const t = now() - 3600;
  const lines: string[] = [];
  for (let i = 0; i < AUTHORS; i++) {
    const sk = deriveKey('hostile', 'bulk', i);
    const pk = signer.pubkey(sk);
    authors.push(pk);
    // a profile with a long about and a follow list with a long content (old clients' relay JSON):
    // ~80 KB an author (few p tags: the follow graph's work is not what this test is about)
    const profile = signer.sign({ kind: 0, created_at: t, tags: [], content: JSON.stringify({ name: `bulk${i}`, about: 'a'.repeat(40_000) }) }, sk, pk);
    const follows = signer.sign({ kind: 3, created_at: t, tags: Array.from({ length: 10 }, (_, j) => ['p', fakeHex('bulk', String(i), j)]), content: 'r'.repeat(40_000) }, sk, pk);
    for (const e of [profile, follows]) {
      const line = JSON.stringify(e);
      answerBytes += line.length;
      lines.push(line);
    }
  }
  const dir = tempDir();
  const file = join(dir, 'bulk.jsonl');
  writeFileSync(file, lines.join('\n') + '\n');
  const data = join(dir, 'data');
  const imp = await runCliAsync(['import', '--data', data, file], { timeoutMs: 300_000 });
  assert.equal(imp.status, 0, imp.stderr);
  relay = await startRelayProcess({ dataDir: data });
});
after(async () => { await relay?.cleanup(); });

/**
 * Reads one REQ's answer on `ws` to its EOSE: events and bytes; pauses reading for `pauseMs` after
 * the first 100 events. Ends early on CLOSED, NOTICE, the connection's close, or 60 s without a
 * message (a stalled answer fails the test instead of hanging it).
 */
function readAnswer(ws: WebSocket, subId: string, pauseMs = 0): Promise<{ events: number; bytes: number; ended: string }> {
  return new Promise((resolve) => {
    let events = 0;
    let bytes = 0;
    const head = `["EVENT","${subId}",`;
    let idle: NodeJS.Timeout;
    const arm = () => { clearTimeout(idle); idle = setTimeout(() => finish('stalled'), 60_000 + pauseMs); };
    const finish = (ended: string) => { clearTimeout(idle); ws.off('message', onMessage); ws.off('close', onClose); resolve({ events, bytes, ended }); };
    const onClose = () => finish('closed');
    const onMessage = (data: Buffer) => {
      arm();
      const text = data.toString('utf8');
      if (text.startsWith(head)) {
        events++;
        bytes += data.length;
        if (events === 100 && pauseMs > 0) {
          const sock = (ws as unknown as { _socket: Socket })._socket;
          sock.pause();
          setTimeout(() => sock.resume(), pauseMs);
        }
        return;
      }
      if (text.startsWith(`["EOSE","${subId}"`)) finish('eose');
      else if (text.startsWith('["CLOSED"') || text.startsWith('["NOTICE"')) finish(text.slice(0, 200));
    };
    if (ws.readyState !== ws.OPEN) return finish('closed');
    arm();
    ws.on('message', onMessage);
    ws.on('close', onClose);
    ws.send(JSON.stringify(['REQ', subId, { kinds: [0, 3], authors }]));
  });
}

/** The relay's peak RSS and anonymous memory (MB) while `fn` runs, sampled every 20 ms. */
async function peakRssDuring<T>(fn: () => Promise<T>): Promise<{ result: T; rss0: number; peak: number; anon0: number; anonPeak: number }> {
  const pid = relay.proc.pid!;
  const rss0 = rssMb(pid);
  const anon0 = anonMb(pid);
  let peak = rss0;
  let anonPeak = anon0;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      peak = Math.max(peak, rssMb(pid));
      anonPeak = Math.max(anonPeak, anonMb(pid));
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  try {
    return { result: await fn(), rss0, peak, anon0, anonPeak };
  } finally {
    sampling = false;
    await sampler;
  }
}

test('a 1,500-author lookup of ~120 MB arrives whole to a client that reads, pausing or not, with the relay\'s RSS up by less than 200 MB', async (t) => {
  assert.ok(answerBytes > 110e6, `the answer is ${(answerBytes / 1e6).toFixed(0)} MB`);
  const ws = await rawSocket(relay.url);
  try {
    const { result, rss0, peak, anon0, anonPeak } = await peakRssDuring(async () => [
      await readAnswer(ws, 'bulk-a'),
      // the same again, from a reader that stops for 3 s after 100 events (the pieces wait for it)
      await readAnswer(ws, 'bulk-b', 3000),
    ]);
    for (const r of result) {
      assert.equal(r.ended, 'eose', 'answered to its EOSE, not closed');
      assert.equal(r.events, 2 * AUTHORS, 'every profile and follow list');
      assert.ok(r.bytes > answerBytes, `${(r.bytes / 1e6).toFixed(0)} MB delivered`);
    }
    const memory = `RSS ${rss0.toFixed(0)} -> peak ${peak.toFixed(0)} MB (anonymous ${anon0.toFixed(0)} -> ${anonPeak.toFixed(0)} MB)`;
    t.diagnostic(memory);
    // RSS also counts the store's pages the answer maps (the page cache, ~120 MB here, as for any
    // reader of an mmapped store): the memory the relay holds for the answer is the anonymous part
    assert.ok(anonPeak - anon0 < 200, memory);
    assert.ok(peak - rss0 < 200 + answerBytes / 1e6, memory);
  } finally {
    ws.terminate();
  }
});

test('four such REQs from one address on four connections all arrive whole; memory stays bounded; another client is served meanwhile', async (t) => {
  const socks = await Promise.all([0, 1, 2, 3].map(() => rawSocket(relay.url)));
  const victim = await Client.open(relay.url);
  try {
    const { result, rss0, peak, anon0, anonPeak } = await peakRssDuring(async () => {
      const answers = Promise.all(socks.map((ws, i) => readAnswer(ws, `four-${i}`)));
      const q = await victim.query({ kinds: [0], authors: [authors[7]!] });
      return { answers: await answers, victim: q.events.length };
    });
    for (const r of result.answers) {
      assert.equal(r.ended, 'eose');
      assert.equal(r.events, 2 * AUTHORS);
    }
    assert.equal(result.victim, 1, 'the other client got its answer');
    const memory = `RSS ${rss0.toFixed(0)} -> peak ${peak.toFixed(0)} MB (anonymous ${anon0.toFixed(0)} -> ${anonPeak.toFixed(0)} MB)`;
    t.diagnostic(memory);
    // RSS also counts the store's pages the answer maps (the page cache, ~120 MB here, as for any
    // reader of an mmapped store): the memory the relay holds for the answer is the anonymous part
    assert.ok(anonPeak - anon0 < 200, memory);
    assert.ok(peak - rss0 < 200 + answerBytes / 1e6, memory);
  } finally {
    for (const ws of socks) ws.terminate();
    victim.close();
  }
});
