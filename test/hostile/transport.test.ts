// Transport-level limits: a message over limits.maxMessageLength (an EVENT: over a list's limit
// and its envelope) gets a NOTICE (uWS reads up to 16 x that, twice the largest EVENT, at least
// 2 MiB, before it would drop the connection without a word), and per-client
// limits count an IPv6 client by its /64 (one host is handed a whole /64).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startRelayProcess } from '../helpers/relay-process.js';
import { Client } from '../helpers/client.js';
import { addressKey } from '../../src/policy/cidr.js';

test('a 1.5 MB message gets a NOTICE and the connection keeps working; a REQ past max_message_length too, an EVENT up to a list\'s limit is read', async () => {
  const relay = await startRelayProcess();
  try {
    const c = await Client.open(relay.url);
    c.send(JSON.stringify(['EVENT', { content: 'x'.repeat(1_500_000) }]));
    const m = await c.next((m) => m[0] === 'NOTICE', 5000, 'NOTICE');
    // an EVENT may carry a list of up to limits.maxListEventBytes (1 MiB) and its envelope
    assert.match(m[1] as string, /^invalid: message larger than 1052672 bytes/);
    assert.equal(c.closed, false);
    // any other message meets limits.maxMessageLength
    c.send(JSON.stringify(['REQ', 'big', { '#t': ['x'.repeat(200_000)] }]));
    assert.match((await c.next((m) => m[0] === 'NOTICE', 5000, 'NOTICE'))[1] as string, /^invalid: message larger than 131072 bytes/);
    // an EVENT of 200 KB is read (and refused for what it is: not a list, past maxEventBytes)
    c.send(JSON.stringify(['EVENT', { id: '0'.repeat(64), pubkey: '1'.repeat(64), created_at: 1, kind: 1, tags: [], content: 'x'.repeat(200_000), sig: '2'.repeat(128) }]));
    const ok = await c.next((m) => m[0] === 'OK', 5000, 'OK');
    assert.equal(ok[2], false);
    assert.match(ok[3] as string, /^invalid: /);
    assert.equal((await c.query({ kinds: [1], limit: 1 })).closed, undefined);
    // beyond 2 MiB uWS drops the connection before reading the message (documented)
    c.send('x'.repeat(3 << 20));
    for (let i = 0; i < 100 && !c.closed; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(c.closed, true);
  } finally {
    await relay.cleanup();
  }
});

test('addressKey: IPv4 (also IPv4-mapped) as itself, IPv6 by its /64', () => {
  assert.equal(addressKey('10.1.2.3'), '10.1.2.3');
  assert.equal(addressKey('::ffff:10.1.2.3'), '10.1.2.3');
  assert.equal(addressKey('::ffff:a01:203'), '10.1.2.3');
  assert.equal(addressKey('2001:db8:1:2::1'), '2001:db8:1:2::/64');
  assert.equal(addressKey('2001:0db8:0001:0002:ffff:1:2:3'), '2001:db8:1:2::/64');
  assert.equal(addressKey('[2001:db8:1:3::9]'), '2001:db8:1:3::/64');
  assert.equal(addressKey('::1'), '0:0:0:0::/64');
  assert.equal(addressKey('not an ip'), 'not an ip');
});

test('connections per IP count an IPv6 /64 as one client (client address from a trusted proxy header)', async () => {
  const relay = await startRelayProcess({ env: { ORBWEAVER_TRUSTED_PROXY_HEADER: 'x-forwarded-for' } });
  const from = (ip: string) => Client.open(relay.url, { headers: { 'X-Forwarded-For': ip } });
  const open: Client[] = [];
  try {
    // rateLimits.maxConnectionsPerIp = 128, each from another address of one /64
    for (let i = 1; i <= 128; i++) open.push(await from(`2001:db8:1:2::${i.toString(16)}`));
    await assert.rejects(from('2001:db8:1:2:ffff:ffff:ffff:ffff'), /429/);
    open.push(await from('2001:db8:1:3::1')); // the next /64 is another client
  } finally {
    for (const c of open) c.close();
    await relay.cleanup();
  }
});

test('a message flood from one address is dropped unread past rateLimits.messagesPerIp, with one NOTICE a second', async () => {
  const relay = await startRelayProcess();
  try {
    const c = await Client.open(relay.url);
    const other = await Client.open(relay.url, { localAddress: '127.0.0.2' });
    for (let i = 0; i < 20_000; i++) c.send('["CLOSE","x"]'); // 2,000/s with a 2 s burst
    const m = await c.next((m) => m[0] === 'NOTICE', 5000, 'NOTICE');
    assert.match(m[1] as string, /^rate-limited: too many messages/);
    // another address is not affected
    assert.equal((await other.query({ kinds: [1], limit: 1 })).closed, undefined);
    const dropped = (await (await fetch(relay.httpUrl + '/status.json')).json()) as { access: { messagesDropped: number } };
    assert.ok(dropped.access.messagesDropped >= 20_000 - 4_000 - 2_000 * 5, `dropped ${dropped.access.messagesDropped}`);
    // once the allowance refills the connection works again
    await new Promise((r) => setTimeout(r, 2100));
    assert.equal((await c.query({ kinds: [1], limit: 1 })).closed, undefined);
    c.close();
    other.close();
  } finally {
    await relay.cleanup();
  }
});
