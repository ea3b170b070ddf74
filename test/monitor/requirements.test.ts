// The `R` (requirement) and `rtt-*` tags of the kind 30166 events a relay's monitor publishes, for
// relays whose requirements are known because the test set them: this relay with its default
// settings, with auth.required all, challenging on connect without requiring AUTH, refusing the
// monitor's write through its write policy (policy.kindDeny); and two small relays that refuse a
// write with payment-required: and pow:. A requirement is published only where NIP-11 claims it or
// a refusal shows it — an AUTH challenge alone is none.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startRelayProcesses } from '../helpers/relay-process.js';
import { Client, sleep } from '../helpers/client.js';
import { keypair, relayList } from '../fixtures/test-relay.js';
import { FakeRelay } from '../fixtures/fake-relay.js';
import type { NostrEvent } from '../../src/nostr/event.js';
import { normalizeRelayUrl } from '../../src/remote/url.js';
import { assertNip66, type SignedEvent } from './nip66-validator.js';

const now = () => Math.floor(Date.now() / 1000);

test('NIP-66 requirements: each R tag and rtt tag says what the check saw', async () => {
  const payment = await new FakeRelay({ nip11: { limitation: { payment_required: false } }, ok: [false, 'payment-required: 1000 sats a year'] }).start();
  const pow = await new FakeRelay({ nip11: {}, ok: [false, 'pow: difficulty 20 is required'] }).start();
  const [monitor, plain, authAll, challenging, denying] = await startRelayProcesses(
    { env: { ORBWEAVER_SPIDER_MONITOR: '1', ORBWEAVER_SPIDER_ALLOW_PRIVATE: '1', ORBWEAVER_SPIDER_MONITOR_WRITE: '1', ORBWEAVER_SPIDER_MONITOR_INTERVAL: '1s', ORBWEAVER_SPIDER_MONITOR_TIMEOUT: '3s' } },
    {},
    { env: { ORBWEAVER_AUTH_REQUIRED: 'all' } },
    { env: { ORBWEAVER_AUTH_CHALLENGE: 'connect' } },
    { env: { ORBWEAVER_POLICY_KIND_DENY: '10166' } },
  );
  try {
    const cl = await Client.open(monitor.url);
    const targets = [plain.url, authAll.url, challenging.url, denying.url, payment.url, pow.url];
    assert.equal((await cl.publish(relayList(keypair().sk, now(), targets))).ok, true);
    const published = new Map<string, NostrEvent>();
    for (let i = 0; i < 600 && published.size < targets.length; i++) {
      for (const ev of (await cl.query({ kinds: [30166] })).events) published.set(normalizeRelayUrl(ev.tags.find((t) => t[0] === 'd')![1])!, ev);
      if (published.size < targets.length) await sleep(100);
    }
    assert.deepEqual([...published.keys()].sort(), [...targets].sort(), 'every relay was checked and announced');
    assertNip66([...published.values()] as SignedEvent[]);
    const R = (url: string) => published.get(url)!.tags.filter((t) => t[0] === 'R').map((t) => t[1]);
    const rtt = (url: string) => published.get(url)!.tags.filter((t) => t[0].startsWith('rtt-')).map((t) => t[0]).sort();

    // default settings: no auth, no payment, writes open — and the write test was served
    assert.deepEqual(R(plain.url), ['!auth', '!payment', '!writes']);
    assert.deepEqual(rtt(plain.url), ['rtt-open', 'rtt-read', 'rtt-write']);
    // a challenge on every connection, reads and writes served without AUTH: no auth requirement
    assert.deepEqual(R(challenging.url), ['!auth', '!payment', '!writes'], 'a NIP-42 challenge alone is no requirement');
    assert.deepEqual(rtt(challenging.url), ['rtt-open', 'rtt-read', 'rtt-write']);
    // auth.required all: NIP-11 says so and the REQ is refused auth-required:; no read was served
    assert.deepEqual(R(authAll.url), ['auth', '!payment', 'writes']);
    assert.deepEqual(rtt(authAll.url), ['rtt-open'], 'a refused REQ is no rtt-read; writing closed by NIP-11 is not tried');
    // the write policy refuses the monitor's event with blocked: although NIP-11 says writes are open
    assert.deepEqual(R(denying.url), ['!auth', '!payment', 'writes']);
    assert.deepEqual(rtt(denying.url), ['rtt-open', 'rtt-read'], 'a refused write is no rtt-write');
    // a payment-required: refusal wins over a payment_required: false claim; it says nothing of writes
    assert.deepEqual(R(payment.url), ['payment']);
    assert.deepEqual(R(pow.url), ['pow']);
    assert.ok(payment.events.length >= 1, 'the write was tried (once per check; the probes make a check longer, so a second cycle may have begun)');
    cl.close();
  } finally {
    await Promise.all([monitor, plain, authAll, challenging, denying].map((r) => r.cleanup()));
    await Promise.all([payment, pow].map((r) => r.close()));
  }
});
