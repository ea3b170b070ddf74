// The relay's NIP-11 document against the NIP-11 text at nostr-protocol/nips db5fe3de
// (docs/nip-texts.md): its top-level fields are the text's (or ones this relay documents as its
// own), `self` and `terms_of_service` are served, posting_policy is not (an old setting is served
// as terms_of_service), and the spider knows its own relay by the `self` served.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { npubEncode } from 'nostr-tools/nip19';
import { configSchema } from '../../src/config/schema.js';
import { ownSelfKey, relayInfo } from '../../src/relay/nip11.js';

const OPERATOR = 'a'.repeat(64);
const SELF = 'b'.repeat(64);

// the fields NIP-11 defines at db5fe3de: the top of its document, and its "Extra Fields"
const NIP11_FIELDS = new Set(['name', 'description', 'banner', 'icon', 'pubkey', 'self', 'contact', 'supported_nips', 'software', 'version', 'terms_of_service', 'limitation', 'payments_url', 'fees']);
const NIP11_LIMITATION = new Set(['max_message_length', 'max_subscriptions', 'max_limit', 'max_subid_length', 'max_event_tags', 'max_content_length', 'min_pow_difficulty', 'auth_required', 'payment_required', 'restricted_writes', 'created_at_lower_limit', 'created_at_upper_limit', 'default_limit']);
// ours, kept on purpose (docs/nip-texts.md): enforced limits that clients and spiders still read
const OUR_LIMITATION = new Set(['max_filters', 'max_lookup_limit']);

test('NIP-11: the fields of the current text, self and terms_of_service served, posting_policy gone', () => {
  const full = relayInfo(configSchema.parse({ info: { pubkey: OPERATOR, self: SELF, contact: 'mailto:op@example.com', icon: 'https://example.com/i.png', banner: 'https://example.com/b.png', termsOfService: 'https://example.com/terms' } }));
  for (const k of Object.keys(full)) assert.ok(NIP11_FIELDS.has(k), `top-level field ${k} is not NIP-11's`);
  for (const k of Object.keys(full.limitation as object)) assert.ok(NIP11_LIMITATION.has(k) || OUR_LIMITATION.has(k), `limitation.${k} is neither NIP-11's nor documented as ours`);
  assert.deepEqual([full.pubkey, full.self, full.terms_of_service], [OPERATOR, SELF, 'https://example.com/terms']);
  assert.match(String(full.software), /^https?:\/\//, 'software: a URL to the project\'s homepage (NIP-11 MUST)');
  for (const gone of ['posting_policy', 'privacy_policy', 'relay_countries', 'language_tags', 'tags', 'retention']) assert.equal(gone in full, false, `${gone} is not in NIP-11 any more`);

  // an existing info.postingPolicy is published where NIP-11 now puts that page; termsOfService wins
  assert.equal(relayInfo(configSchema.parse({ info: { postingPolicy: 'https://example.com/policy' } })).terms_of_service, 'https://example.com/policy');
  assert.equal(relayInfo(configSchema.parse({ info: { postingPolicy: 'https://example.com/policy', termsOfService: 'https://example.com/terms' } })).terms_of_service, 'https://example.com/terms');
  // empty settings are left out (NIP-11: any field may be omitted)
  const bare = relayInfo(configSchema.parse({}));
  for (const k of ['pubkey', 'self', 'contact', 'icon', 'banner', 'terms_of_service']) assert.equal(k in bare, false, k);
  // an npub is published as hex (NIP-11: self MUST be a 32-byte hex public key)
  assert.equal(relayInfo(configSchema.parse({ info: { self: npubEncode(SELF) } })).self, SELF);

  // the spider's own relay: by the `self` served, else the operator's key as before
  assert.equal(ownSelfKey(configSchema.parse({ info: { pubkey: OPERATOR, self: SELF } }).info), SELF);
  assert.equal(ownSelfKey(configSchema.parse({ info: { pubkey: OPERATOR } }).info), OPERATOR);
  assert.equal(ownSelfKey(configSchema.parse({}).info), undefined);
});
