// The command's side of record writes (src/remote/deliver.ts homeSink.record): a refusal ends the
// write with the relay's words, and a relay that does not know ORBWEAVER-RECORD (an earlier
// version: it answers with a NOTICE) ends it at once instead of leaving it to the delivery timeout.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WebSocketServer } from 'ws';
import pino from 'pino';
import { homeSink, DeliveryError } from '../../src/remote/deliver.js';

async function relayAnswering(answer: (msg: unknown[]) => unknown[] | null): Promise<{ url: string; close(): Promise<void> }> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((r) => wss.once('listening', () => r()));
  wss.on('connection', (ws) => ws.on('message', (d) => {
    const a = answer(JSON.parse(d.toString()) as unknown[]);
    if (a) ws.send(JSON.stringify(a));
  }));
  const { port } = wss.address() as { port: number };
  return { url: `ws://127.0.0.1:${port}`, close: () => new Promise((r) => wss.close(() => r())) };
}

const sinkFor = (url: string) => homeSink({ url, connectTimeout: 2000, okTimeout: 20_000, window: 10, deliveryTimeout: 60_000, log: pino({ level: 'silent' }) });

test('record writes, the command\'s side: the result, a refusal in the relay\'s words, and a relay that does not know them', async () => {
  const ok = await relayAnswering((m) => m[0] === 'ORBWEAVER-RECORD' ? ['ORBWEAVER-RECORD', m[1], true, { echoed: m[2] }] : null);
  const refusing = await relayAnswering((m) => m[0] === 'ORBWEAVER-RECORD' ? ['ORBWEAVER-RECORD', m[1], false, 'restricted: not the local key'] : null);
  const old = await relayAnswering((m) => ['NOTICE', `invalid: unknown message type ${JSON.stringify(m[0])}`]);
  const sinks = [sinkFor(ok.url), sinkFor(refusing.url), sinkFor(old.url)];
  try {
    assert.deepEqual(await sinks[0]!.record('runs.record', []), { echoed: 'runs.record' });
    await assert.rejects(sinks[1]!.record('runs.record', []), (e: Error) => e instanceof DeliveryError && /refused the record write runs\.record: restricted: not the local key/.test(e.message));
    // without the NOTICE read, this would end after the delivery timeout as "not applied … within"
    await assert.rejects(sinks[2]!.record('runs.record', []), (e: Error) => e instanceof DeliveryError && /unsupported: the relay does not take record writes/.test(e.message));
  } finally {
    for (const s of sinks) await s.close();
    await Promise.all([ok.close(), refusing.close(), old.close()]);
  }
});
