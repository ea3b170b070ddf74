// Messages of 16 KiB and more (big follow lists, long notes) reach clients whole, stored answers and
// live events alike. The uWebSockets.js build that runs on Node 20 breaks the byte stream when it
// writes a large frame directly and the kernel takes less than its header (src/relay/ws-send.ts):
// there a large message goes out as one frame through uWS's buffered path to a client that did not
// offer permessage-deflate, and fragmented (every frame under 16 KiB) to one that did. The newer
// build (Node 22, 24) sends single frames to both. A raw socket reads the frames as they are on the
// wire; `ws` (what clients use) reassembles them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { startRelayProcess } from '../helpers/relay-process.js';
import { Author, Client, sleep } from '../helpers/client.js';

interface Frame { fin: boolean; opcode: number; payload: Buffer }

/** A WebSocket client on a plain socket that records every frame the relay sends. */
async function rawClient(port: number, extensions = ''): Promise<{ socket: Socket; frames: Frame[]; head: string; send(text: string): void }> {
  const socket = connect(port, '127.0.0.1');
  const frames: Frame[] = [];
  let buf = Buffer.alloc(0);
  let open = false;
  let head = '';
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.on('connect', () => socket.write(`GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n${extensions ? `Sec-WebSocket-Extensions: ${extensions}\r\n` : ''}\r\n`));
    socket.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      if (!open) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        open = true;
        head = buf.subarray(0, end).toString('latin1');
        buf = buf.subarray(end + 4);
        resolve();
      }
      for (;;) {
        if (buf.length < 2) return;
        let len = buf[1]! & 0x7f;
        let off = 2;
        if (len === 126) { if (buf.length < 4) return; len = buf.readUInt16BE(2); off = 4; }
        else if (len === 127) { if (buf.length < 10) return; len = Number(buf.readBigUInt64BE(2)); off = 10; }
        if (buf.length < off + len) return;
        assert.equal(buf[0]! & 0x70, 0, 'reserved bits clear: the byte stream is intact');
        frames.push({ fin: (buf[0]! & 0x80) !== 0, opcode: buf[0]! & 0x0f, payload: Buffer.from(buf.subarray(off, off + len)) });
        buf = buf.subarray(off + len);
      }
    });
  });
  const send = (text: string) => {
    const p = Buffer.from(text);
    const head = p.length < 126 ? Buffer.from([0x81, 0x80 | p.length]) : Buffer.from([0x81, 0x80 | 126, p.length >> 8, p.length & 0xff]);
    socket.write(Buffer.concat([head, Buffer.alloc(4), p])); // a zero mask leaves the payload as it is
  };
  return { socket, frames, get head() { return head; }, send };
}

/** Text messages reassembled from frames (first frame opcode 1, continuations 0 until fin). */
function messages(frames: Frame[]): string[] {
  const out: string[] = [];
  let parts: Buffer[] | null = null;
  for (const f of frames) {
    if (f.opcode === 1) parts = [f.payload];
    else if (f.opcode === 0) parts!.push(f.payload);
    else continue; // control frames
    if (f.fin) {
      out.push(Buffer.concat(parts!).toString('utf8'));
      parts = null;
    }
  }
  return out;
}

test('events of 16 KiB and more arrive whole, from a stored answer and live, with multi-byte text split safely', async () => {
  const relay = await startRelayProcess({ env: { ORBWEAVER_RATE_LIMITS_BYTES_PER_IP: '0', ORBWEAVER_RATE_LIMITS_PER_IP_EVENT: '0', ORBWEAVER_RATE_LIMITS_PER_CONNECTION_EVENT: '0' } });
  try {
    const listening = relay.logs.find((l) => l.uwsPackage);
    const node20Build = String(listening?.uwsPackage).startsWith('@trufflesuite/uws-js-unofficial@');
    const a = new Author();
    // sizes around the 16 KiB line, with 2-, 3- and 4-byte characters (a 4-byte one is two UTF-16 units)
    const texts = [16_300, 16_400, 20_000, 45_000].map((n, i) => `${i} ` + 'é漢😀x'.repeat(Math.ceil(n / 10)).slice(0, n));
    const pub = await Client.open(relay.url);
    // one reader without extensions, one offering permessage-deflate (which uWS accepts)
    const plain = await rawClient(relay.port);
    const deflate = await rawClient(relay.port, 'permessage-deflate; client_max_window_bits');
    const raws = [plain, deflate];
    assert.match(deflate.head, /sec-websocket-extensions: permessage-deflate/i, 'the relay accepted permessage-deflate');
    assert.doesNotMatch(plain.head, /permessage-deflate/i);
    for (const raw of raws) raw.send(JSON.stringify(['REQ', 'live', { authors: [a.pk] }]));
    await sleep(300);
    const events = texts.map((content, i) => a.sign({ content, created_at: 1_700_000_000 + i }));
    for (const e of events) assert.equal((await pub.publish(e)).ok, true);
    for (const raw of raws) raw.send(JSON.stringify(['REQ', 'stored', { authors: [a.pk] }]));
    const want = 2 * events.length + 2; // live events, stored events, two EOSEs
    for (const [which, raw] of [['plain', plain], ['deflate', deflate]] as const) {
      for (let i = 0; i < 100 && messages(raw.frames).length < want; i++) await sleep(50);
      const got = messages(raw.frames).map((m) => JSON.parse(m) as unknown[]);
      const live = got.filter((m) => m[0] === 'EVENT' && m[1] === 'live').map((m) => m[2]);
      const stored = got.filter((m) => m[0] === 'EVENT' && m[1] === 'stored').map((m) => m[2]);
      assert.deepEqual(live, events, `${which}: live events (sent as strings) whole and in order`);
      assert.deepEqual(stored, [...events].reverse(), `${which}: stored events (sent from the query buffer) whole, newest first`);
      const largest = Math.max(...raw.frames.map((f) => f.payload.length));
      if (node20Build && which === 'deflate') {
        assert.ok(largest < 16 * 1024, `every frame under 16 KiB on the Node 20 build (largest ${largest})`);
        assert.ok(raw.frames.some((f) => f.opcode === 0), 'continuation frames');
      } else assert.ok(largest > 16 * 1024, `${which}: single frames`);
    }
    // and a ws client (what client libraries use) reads the same events
    const c = await Client.open(relay.url);
    const r = await c.query({ authors: [a.pk] });
    assert.deepEqual(r.events, [...events].reverse());
    for (const raw of raws) raw.socket.destroy();
  } finally {
    await relay.cleanup();
  }
});
