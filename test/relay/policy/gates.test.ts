// The small per-address policies Access hands its questions to (src/relay/policy/): who may open a
// connection or an HTTP request (address-gate.ts), the flood gate before a message is decoded
// (input-gate.ts), and the read budget of one scan (scan-guard.ts). The relay's attack tests meet
// them through WebSockets; these pin each one's rule on its own.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { configSchema } from '../../../src/config/schema.js';
import { AccessLists } from '../../../src/policy/lists.js';
import { addressKey } from '../../../src/policy/cidr.js';
import { AddressGate } from '../../../src/relay/policy/address-gate.js';
import { INPUT_REFUSAL, InputGate } from '../../../src/relay/policy/input-gate.js';
import { scanGuard } from '../../../src/relay/policy/scan-guard.js';

test('address gate: the lists decide first; WebSocket connections and HTTP requests share the cap per address (an IPv6 /64 is one)', () => {
  const config = configSchema.parse({ policy: { ipDeny: ['203.0.113.0/24'] }, rateLimits: { maxConnectionsPerIp: 2, httpRequestsPerIp: 1000 } });
  const gate = new AddressGate(config.rateLimits, new AccessLists(config));
  assert.match(gate.connectionRefusal('203.0.113.9')!, /^blocked: /);
  const v6a = '2001:db8:1:2::1';
  const v6b = '2001:db8:1:2:ffff::9'; // the same /64
  assert.equal(addressKey(v6a), addressKey(v6b));
  assert.equal(gate.connectionRefusal(v6a), null);
  gate.opened(addressKey(v6a));
  const refusals: string[] = [];
  const http = gate.httpRequest(v6b, (why) => refusals.push(why));
  assert.ok('release' in http, 'one connection and one request: within the cap of 2');
  assert.match(gate.connectionRefusal(v6b)!, /^rate-limited: more than 2 connections/, 'the request being answered counts');
  const third = gate.httpRequest(v6a, (why) => refusals.push(why));
  assert.ok('refused' in third && third.retryAfter >= 1);
  assert.equal(gate.httpRefused, 1);
  assert.equal(refusals.length, 1);
  http.release();
  http.release(); // twice: released once
  assert.equal(gate.connectionRefusal(v6a), null, 'released: room for one more');
  assert.equal(gate.size, 1);
  gate.closed(addressKey(v6a));
  assert.equal(gate.size, 0, 'nothing open: the address is forgotten');
  const allowOnly = configSchema.parse({ policy: { ipAllow: ['192.0.2.0/24'] } });
  const strict = new AddressGate(allowOnly.rateLimits, new AccessLists(allowOnly));
  assert.equal(strict.connectionRefusal('192.0.2.7'), null);
  assert.match(strict.connectionRefusal('198.51.100.1')!, /^blocked: .*allow list/);
});

test('input gate: messages per address beyond the burst are dropped unread, the connection told once, other addresses untouched', () => {
  const config = configSchema.parse({ rateLimits: { messagesPerIp: 5, bytesPerIp: 1_000_000, burstSeconds: 1 } });
  const gate = new InputGate(config.rateLimits, config.limits.maxMessageLength);
  const sent: string[] = [];
  const noted: string[] = [];
  const conn = { key: '198.51.100.1', ip: '198.51.100.1', send: (t: string) => (sent.push(t), true) };
  let admitted = 0;
  for (let i = 0; i < 20; i++) if (gate.admit(conn, 100, (why) => noted.push(why))) admitted++;
  assert.ok(admitted >= 5 && admitted < 20, `the burst of 5 (and what refills meanwhile) passes: ${admitted}`);
  assert.equal(gate.dropped, 20 - admitted);
  assert.deepEqual(sent, [JSON.stringify(['NOTICE', INPUT_REFUSAL])], 'one NOTICE, not one per dropped message');
  assert.deepEqual(noted, [INPUT_REFUSAL]);
  const other = { key: '198.51.100.2', ip: '198.51.100.2', send: () => true };
  assert.ok(gate.admit(other, 100, () => {}), 'another address has its own bucket');
  const bytes = new InputGate(configSchema.parse({ rateLimits: { messagesPerIp: 1000, bytesPerIp: 1024, burstSeconds: 1 } }).rateLimits, 1024);
  assert.ok(bytes.admit(conn, 900, () => {}));
  assert.ok(!bytes.admit(conn, 900, () => {}), 'bytes are budgeted too');
});

test('scan guard: stops a scan past its budget (checks and charges counted in entries) or when the caller aborts; told once', () => {
  let trips = 0;
  const g = scanGuard({ aborted: false }, { scanBudget: 1000, every: 100, timeoutMs: 60_000 }, () => trips++);
  let checks = 0;
  while (!g.signal.aborted) checks++;
  assert.equal(checks, 10, '1,000 entries at 100 a check');
  assert.equal(g.tripped, 'budget');
  assert.equal(g.signal.aborted, true);
  assert.equal(trips, 1);
  const charged = scanGuard({ aborted: false }, { scanBudget: 1000, every: 100, timeoutMs: 60_000 }, () => {});
  charged.signal.charge!(600);
  assert.equal(charged.signal.budgetLeft, 400);
  let n = 0;
  while (!charged.signal.aborted) n++;
  assert.equal(n, 4, 'planning charged 600 entries: 400 left to read');
  const outer = { aborted: false };
  const o = scanGuard(outer, { scanBudget: 1e9, every: 100, timeoutMs: 60_000 }, () => trips++);
  assert.equal(o.signal.aborted, false);
  outer.aborted = true;
  assert.equal(o.signal.aborted, true);
  assert.equal(o.tripped, null, 'the caller stopped it, not the guard');
});
