// Relay URL normalisation and address safety (pure, plus the loopback resolver for "localhost").
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { normalizeRelayUrl, isSpecialAddress, resolveTarget, syntacticRefusal, UnsafeUrlError } from '../../src/remote/url.js';
import { relaysInList, nextHop } from '../../src/spider/discovery/relay-lists.js';
import { parsePubkey } from '../../src/nostr/keys.js';
import { statusFromOk } from '../../src/ingest/sink.js';

test('relay URLs are normalised to one spelling', () => {
  assert.equal(normalizeRelayUrl('WSS://Relay.Example.COM/'), 'wss://relay.example.com');
  assert.equal(normalizeRelayUrl('wss://relay.example.com:443'), 'wss://relay.example.com');
  assert.equal(normalizeRelayUrl('ws://relay.example.com:80/'), 'ws://relay.example.com');
  assert.equal(normalizeRelayUrl('wss://relay.example.com:7777/nostr/?x=1#frag'), 'wss://relay.example.com:7777/nostr');
  assert.equal(normalizeRelayUrl(' wss://relay.example.com. '), 'wss://relay.example.com');
  assert.equal(normalizeRelayUrl('wss://[2001:DB8::1]:8080'), 'wss://[2001:db8::1]:8080');
  for (const bad of ['https://relay.example.com', 'relay.example.com', 'wss://user:pw@relay.example.com', 'wss://', 'wss://a b.com', `wss://${'a'.repeat(300)}.com`, 42, 'wss://exa_mple..com'])
    assert.equal(normalizeRelayUrl(bad), null, String(bad));
});

test('special addresses are recognised; IPv6 is public only inside global unicast 2000::/3, never with IPv4 inside', () => {
  for (const ip of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '224.0.0.1', '255.255.255.255',
    '::1', '::', 'fe80::1', 'fd00::1', 'ff02::1', '2001:db8::1', '3fff::1',
    // every form that embeds an IPv4 address, private or public: ::/96, ::ffff:0:0/96, ::ffff:0:0:0/96, NAT64, 6to4, Teredo
    '::127.0.0.1', '::7f00:1', '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:0:127.0.0.1', '::ffff:0:7f00:1', '::ffff:8.8.8.8', '::8.8.8.8',
    '64:ff9b::a00:1', '64:ff9b::8.8.8.8', '64:ff9b:1::7f00:1', '2002:a00:1::', '2002:808:808::1', '2001:0:4136:e378:8000:63bf:3fff:fdd2'])
    assert.equal(isSpecialAddress(ip), true, ip);
  for (const ip of ['1.1.1.1', '93.184.216.34', '2606:4700:4700::1111', '2a00:1450:4001:82b::200e'])
    assert.equal(isSpecialAddress(ip), false, ip);
});

test('IPv4-embedded IPv6 literals in relay URLs and in DNS answers are refused', async () => {
  for (const url of ['ws://[::127.0.0.1]:7000', 'ws://[::ffff:0:127.0.0.1]:7000', 'wss://[::ffff:127.0.0.1]', 'wss://[64:ff9b::7f00:1]', 'wss://[2002:7f00:1::1]'].map(normalizeRelayUrl)) {
    assert.ok(url, 'a well-formed URL');
    assert.match(syntacticRefusal(url, false) ?? '', /not public/, url);
    await assert.rejects(resolveTarget(url, false), UnsafeUrlError, url);
  }
  const mapped = async () => [{ address: '::ffff:7f00:1', family: 6 }];
  await assert.rejects(resolveTarget('wss://relay.example.com', false, mapped), /not public/);
});

test('private targets are refused unless allowed, also after DNS resolution, and the address is pinned', async () => {
  assert.match(syntacticRefusal('ws://127.0.0.1:7000', false) ?? '', /not public/);
  assert.match(syntacticRefusal('wss://localhost', false) ?? '', /not public/);
  assert.equal(syntacticRefusal('ws://127.0.0.1:7000', true), null);
  await assert.rejects(resolveTarget('ws://10.0.0.1', false), UnsafeUrlError);
  // A public-looking name whose DNS answer is private (rebinding) is refused.
  const rebinding = async () => [{ address: '8.8.8.8', family: 4 }, { address: '192.168.0.10', family: 4 }];
  await assert.rejects(resolveTarget('wss://relay.example.com', false, rebinding), /not public/);
  const ok = await resolveTarget('wss://relay.example.com/x', false, async () => [{ address: '93.184.216.34', family: 4 }]);
  assert.deepEqual([ok.address, ok.hostname, ok.port, ok.path, ok.secure], ['93.184.216.34', 'relay.example.com', 443, '/x', true]);
});

test('relay lists: r tags normalised and de-duplicated, absurd lists ignored; next hop most-named first', () => {
  const ev = { tags: [['r', 'wss://A.com/'], ['r', 'wss://a.com'], ['r', 'https://x.com'], ['p', 'wss://b.com'], ['r', 'wss://b.com', 'read']] };
  assert.deepEqual(relaysInList(ev, 10), ['wss://a.com', 'wss://b.com']);
  assert.equal(relaysInList(ev, 3), null);
  const links = new Map<string, Record<string, number>>([['wss://r1.com', { 'wss://x.com': 1, 'wss://y.com': 3 }], ['wss://r2.com', { 'wss://x.com': 1, 'wss://r1.com': 9 }]]);
  const next = nextHop(links, new Set(['wss://r1.com', 'wss://r2.com']), 10);
  assert.deepEqual(next.map((c) => [c.url, c.mentions]), [['wss://y.com', 3], ['wss://x.com', 2]]);
  assert.equal(nextHop(links, new Set(), 1).length, 1);
});

test('seed pubkeys: hex or npub; remote OK answers map to ingest statuses', () => {
  const hex = 'a'.repeat(64);
  assert.equal(parsePubkey(hex.toUpperCase()), hex);
  assert.equal(parsePubkey('npub180cvv07tjdrrgpa0j7j7tmnyl2yr6yr7l8j4s3evf6u64th6gkwsyjh6w6'), '3bf0c63fcb93463407af97a5e5ee64fa883d107ef9e558472c4eb9aaaefa459d');
  assert.equal(parsePubkey('nope'), null);
  assert.equal(statusFromOk(true, ''), 'stored');
  assert.equal(statusFromOk(true, 'duplicate: already have this event'), 'duplicate');
  assert.equal(statusFromOk(false, 'blocked: a newer version is stored'), 'replaced');
  assert.equal(statusFromOk(false, 'blocked: this event was deleted'), 'deleted');
  assert.equal(statusFromOk(false, 'invalid: bad signature'), 'invalid');
  assert.equal(statusFromOk(false, 'blocked: pubkey is banned'), 'rejected');
});
