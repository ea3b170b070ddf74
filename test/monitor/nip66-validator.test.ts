// The NIP-66 validator the monitor's tests run every published event through (nip66-validator.ts)
// against the NIP's own examples (nostr-protocol/nips db5fe3de) and against events that break one
// rule each: so a pass means "valid per the text", not "accepts anything".
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { finalizeEvent, generateSecretKey, getPublicKey } from 'nostr-tools/pure';
import { isNormalRelayUrl, nip66Problems, type SignedEvent } from './nip66-validator.js';

const sk = generateSecretKey();
const pk = getPublicKey(sk);
const sign = (kind: number, tags: string[][], content = '') => finalizeEvent({ kind, created_at: 1_700_000_000, tags, content }, sk) as SignedEvent;

// the 30166 example of NIP-66, as printed (with its `l` tag, which the tag list no longer has)
const EXAMPLE_30166 = [['d', 'wss://some.relay/'], ['n', 'clearnet'], ['N', '40'], ['N', '33'], ['R', '!payment'], ['R', 'auth'], ['g', 'ww8p1r4t8'], ['l', 'en', 'ISO-639-1'], ['t', 'nsfw'], ['rtt-open', '234']];
// the 10166 example (its missing comma restored)
const EXAMPLE_10166 = [['timeout', 'open', '5000'], ['timeout', 'read', '3000'], ['timeout', 'write', '3000'], ['timeout', 'nip11', '3000'], ['frequency', '3600'], ['c', 'ws'], ['c', 'nip11'], ['c', 'ssl'], ['c', 'dns'], ['c', 'geo'], ['g', 'ww8p1r4t8']];

test('the NIP\'s examples: the 10166 is valid; the 30166 only for its `l` tag, which NIP-66 dropped', () => {
  assert.deepEqual(nip66Problems(sign(10166, EXAMPLE_10166)), []);
  assert.deepEqual(nip66Problems(sign(30166, EXAMPLE_30166, '{"name":"some relay"}')), ['l tag: removed from NIP-66 (b516adb)']);
  assert.deepEqual(nip66Problems(sign(30166, EXAMPLE_30166.filter((t) => t[0] !== 'l'))), []);
  assert.deepEqual(nip66Problems(sign(30166, [['d', pk]])), [], 'a relay without a URL is named by its pubkey');
  // the prose's timeout form (ms at index 1, the check at 2, or no check: all of them)
  assert.deepEqual(nip66Problems(sign(10166, [['frequency', '60'], ['timeout', '2000', 'open'], ['timeout', '2000']])), []);
});

test('each rule of the text, broken once', () => {
  const base = EXAMPLE_30166.filter((t) => t[0] !== 'l');
  const without = (name: string) => base.filter((t) => t[0] !== name);
  const cases: Array<[string, string[][], string, RegExp]> = [
    ['no d', without('d'), '', /0 d tags/],
    ['two d', [...base, ['d', 'wss://other.relay/']], '', /2 d tags/],
    ['d not normalised: no "/" for the empty path', [...without('d'), ['d', 'wss://some.relay']], '', /normalised/],
    ['d not normalised: upper case host', [...without('d'), ['d', 'wss://Some.Relay/']], '', /normalised/],
    ['d not normalised: default port', [...without('d'), ['d', 'wss://some.relay:443/']], '', /normalised/],
    ['d not a relay URL', [...without('d'), ['d', 'https://some.relay/']], '', /normalised/],
    ['rtt as a number with a unit', [...without('rtt-open'), ['rtt-open', '234ms']], '', /whole milliseconds/],
    ['rtt twice', [...base, ['rtt-open', '12']], '', /2 rtt-open tags/],
    ['n not a network', [...without('n'), ['n', 'internet']], '', /not clearnet/],
    ['T not PascalCase', [...base, ['T', 'private-inbox']], '', /PascalCase/],
    ['N not a NIP', [...base, ['N', 'NIP-50']], '', /not a NIP/],
    ['N twice', [...base, ['N', '40']], '', /N "40" twice/],
    ['several values in one tag', [...base, ['t', 'cats', 'dogs']], '', /t tag with 2 values/],
    ['R both ways', [...base, ['R', 'payment']], '', /both payment and !payment/],
    ['t upper case', [...base, ['t', 'Bitcoin']], '', /lowercase topic/],
    ['k not a kind', [...base, ['k', 'notes']], '', /not a kind/],
    ['k both ways', [...base, ['k', '1'], ['k', '!1']], '', /both 1 and !1/],
    ['g not a geohash', [...without('g'), ['g', 'ww8p1r4t8a']], '', /geohash/],
    ['a single letter NIP-66 does not define', [...base, ['s', 'strfry']], '', /s tag: not a NIP-66 tag/],
    ['content not a NIP-11 document', base, '[1,2]', /content/],
  ];
  for (const [what, tags, content, problem] of cases) {
    const p = nip66Problems(sign(30166, tags, content));
    assert.ok(p.some((x) => problem.test(x)), `${what}: ${JSON.stringify(p)}`);
  }
  assert.deepEqual(nip66Problems(sign(30166, [...base, ['ssl', 'valid'], ['ssl-expires', '1800000000'], ['net-asn', '64500']])), [], 'longer names are room for extensions');
  const ann: Array<[string[][], RegExp]> = [
    [EXAMPLE_10166.filter((t) => t[0] !== 'frequency'), /0 frequency tags/],
    [[...EXAMPLE_10166, ['timeout', 'open', 'soon']], /timeout/],
    [[...EXAMPLE_10166, ['c', 'NIP11']], /lowercase check/],
    [[...EXAMPLE_10166, ['N', '1']], /not a NIP-66 announcement tag/],
  ];
  for (const [tags, problem] of ann) assert.ok(nip66Problems(sign(10166, tags)).some((x) => problem.test(x)), JSON.stringify(tags));
  // the envelope: a tampered event does not verify
  const ev = sign(10166, EXAMPLE_10166);
  assert.deepEqual(nip66Problems({ ...ev, content: 'changed' }), ['id or signature does not verify']);
  // the companions of the announcement
  assert.deepEqual(nip66Problems(sign(0, [], '{"name":"m"}')), []);
  assert.ok(nip66Problems(sign(0, [], 'monitor')).length > 0);
  assert.ok(nip66Problems(sign(10002, [['r', 'https://x.example']])).length > 0);
  assert.ok(nip66Problems(sign(5, [['a', `30166:${'0'.repeat(64)}:wss://x/`]])).some((x) => /another author/.test(x)));
  assert.ok(nip66Problems(sign(1, [])).some((x) => /kind 1/.test(x)));
  assert.deepEqual(['wss://relay.example/', 'ws://127.0.0.1:7000/', 'wss://r.example/path', 'wss://relay.example', 'wss://r.example/#x'].map(isNormalRelayUrl), [true, true, true, false, false]);
});
