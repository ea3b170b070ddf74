// IP addresses and CIDR ranges (src/policy/cidr.ts): IPv4, IPv6 and IPv4-mapped, added and removed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CidrSet, parseIp } from '../../src/policy/cidr.js';

test('IPs and CIDR ranges, IPv4, IPv6 and IPv4-mapped', () => {
  assert.equal(parseIp('1.2.3.4'), parseIp('::ffff:1.2.3.4'));
  assert.equal(parseIp('::1'), 1n);
  assert.equal(parseIp('2001:db8::1'), parseIp('2001:0db8:0:0:0:0:0:1'));
  for (const bad of ['1.2.3', '256.1.1.1', '1::2::3', 'x', '1:2:3:4:5:6:7:8:9', '']) assert.equal(parseIp(bad), null, bad);
  const s = new CidrSet(['10.0.0.0/8', '2001:db8::/32', '127.0.0.2', '::1']);
  assert.ok(s.has('10.200.3.4'));
  assert.ok(s.has('::ffff:10.1.1.1'));
  assert.ok(!s.has('11.0.0.1'));
  assert.ok(s.has('2001:db8:ffff::5'));
  assert.ok(!s.has('2001:db9::5'));
  assert.ok(s.has('127.0.0.2'));
  assert.ok(!s.has('127.0.0.1'));
  assert.ok(s.has('::1'));
  assert.ok(!s.add('10.0.0.0/33'));
  assert.ok(s.remove('127.0.0.2'));
  assert.ok(!s.has('127.0.0.2'));
  assert.ok(new CidrSet(['0.0.0.0/0']).has('8.8.8.8'));
});
