// NIP-62 as a write rule (src/policy/vanish.ts, nostr/vanish.ts): which requests to vanish this
// relay takes, by the names it answers to, and that the rules about who the author is do not hold
// a request back while every other kind stays under them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../src/config.js';
import { writeRules } from '../../src/policy/index.js';
import { configuredRelayUrls, RelayNames } from '../../src/policy/vanish.js';
import { firstRefusal } from '../../src/ingest/hooks.js';
import type { IngestContext } from '../../src/ingest/types.js';
import { vanishScope } from '../../src/nostr/vanish.js';
import { ev, hex, withStore } from '../store/helpers.js';

const now = () => Math.floor(Date.now() / 1000);

test('a request names all relays (ALL_RELAYS, in uppercase), this one, others, or none', () => {
  const own = (u: string) => u === 'wss://here.example';
  const scope = (...relays: string[]) => vanishScope({ tags: [['p', hex()], ...relays.map((r) => ['relay', r])] }, own);
  assert.equal(scope('ALL_RELAYS'), 'all');
  assert.equal(scope('wss://there.example', 'ALL_RELAYS'), 'all');
  assert.equal(scope('wss://there.example', 'wss://here.example'), 'this');
  assert.equal(scope('wss://there.example'), 'elsewhere');
  assert.equal(scope('all_relays'), 'elsewhere', 'NIP-62 says uppercase');
  assert.equal(scope(), 'none');
});

test('this relay\'s names: publicUrl, selfUrls, relayHosts and the listen address, whatever the scheme, case or trailing slash', () => {
  const config = loadConfig({ env: {}, flags: { host: '0.0.0.0', port: 7001, publicUrl: 'wss://Relay.Example/', auth: { relayHosts: ['other.example:8443'] }, spider: { selfUrls: ['wss://alias.example/nostr'] } } });
  const names = new RelayNames(configuredRelayUrls(config));
  for (const u of ['wss://relay.example', 'ws://relay.example', 'WSS://RELAY.EXAMPLE/', 'wss://alias.example/nostr/', 'wss://other.example:8443', 'ws://127.0.0.1:7001', 'ws://localhost:7001']) assert.ok(names.has(u), u);
  for (const u of ['wss://relay.example/other', 'wss://alias.example', 'ws://127.0.0.1:7002', 'wss://elsewhere.example', 'not a url']) assert.ok(!names.has(u), u);
  names.add(['ws://10.1.2.3:7001']);
  assert.ok(names.has('wss://10.1.2.3:7001'));
});

test('the write rules: requests naming other relays or none are refused; a restricted relay takes a request from anyone', () =>
  withStore(async (store) => {
    const config = loadConfig({
      env: {},
      flags: { host: '127.0.0.1', port: 7001, publicUrl: 'wss://relay.example', policy: { pubkeyAllow: [hex()], kindAllow: [1], minPow: 8 }, auth: { required: 'write' } },
    });
    const rules = writeRules(config, store);
    const ctx: IngestContext = { source: 'client', ip: '192.0.2.1' };
    const refusal = (kind: number, tags: string[][]) => {
      const event = ev({ kind, created_at: now(), tags });
      return firstRefusal(rules.rejectEvent, { event, json: JSON.stringify(event) }, ctx);
    };
    assert.equal(refusal(62, [['relay', 'wss://relay.example']]), null);
    assert.equal(refusal(62, [['relay', 'ALL_RELAYS']]), null);
    assert.equal(refusal(62, [['relay', 'ws://127.0.0.1:7001']]), null);
    assert.match(refusal(62, [['relay', 'wss://elsewhere.example']])!, /^blocked: this request to vanish \(NIP-62\) names other relays/);
    assert.match(refusal(62, [])!, /^invalid: a request to vanish \(NIP-62\) must name this relay or ALL_RELAYS/);
    // every other kind still meets the author rules (the first refusal: the allow list)
    assert.match(refusal(1, [])!, /^blocked: this relay only accepts events from pubkeys on its allow list/);
    // the listen address of a relay on port 0 is added once known (app.ts)
    rules.relayNames.add(['ws://127.0.0.1:39999']);
    assert.equal(refusal(62, [['relay', 'ws://127.0.0.1:39999']]), null);
  }));
