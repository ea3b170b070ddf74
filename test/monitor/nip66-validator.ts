// A validator of the events a NIP-66 monitor publishes, written from the NIP texts at
// nostr-protocol/nips db5fe3de (2026-07-22) and deliberately sharing no code with src/monitor, so
// that a test of the monitor's events against it is a test against the text, not against itself.
//
// Kind 30166 (NIP-66 "Relay Discovery Events"):
// - exactly one `d`: the relay's URL normalised per RFC 3986 section 6 (for ws/wss: scheme and host
//   lower case, no default port, an empty path written "/", no fragment or user info), or a hex
//   pubkey "for relays not accessible via URL";
// - the other tags the NIP lists, each with one value ("Tags with more than one value should be
//   repeated"): rtt-open/rtt-read/rtt-write (milliseconds, a string of digits: "tags shouldn't
//   have integers", 179e421), n (clearnet, tor, i2p, loki), T (PascalCase), N (a NIP), R (a
//   requirement, `!` for false), t (a topic; NIP-24: lowercase), k (a kind, `!` for unaccepted),
//   g (a NIP-52 geohash);
// - no other single-letter tag: the NIP's list names the single letters it gives a meaning (the
//   letters relays index and clients filter by); `l` was in it and was removed (b516adb, 2025-09),
//   though the NIP's example still shows one. Longer names are allowed ("Other tags include": an
//   open list, e.g. BigBrotr's ssl-*), as arrays of strings;
// - content empty or a stringified JSON object (the relay's NIP-11 document).
// Kind 10166 (NIP-66 "Relay Monitor Announcements"): one `frequency` (seconds), `timeout` tags (the
// prose puts the milliseconds at index 1 and the check at index 2, the example the other way round:
// either is taken, one number and one lowercase check name), `c` tags (lowercase), `g` tags.
// Kinds 0, 10002 and 5 the monitor publishes beside them are checked against NIP-01, NIP-65 and
// NIP-09: a JSON object profile, `r` tags with relay URLs, a deletion naming what it deletes.
// Every event is also checked as NIP-01 wants it: shape, id and signature.
import { verifyEvent } from 'nostr-tools/pure';

export interface SignedEvent { id: string; pubkey: string; created_at: number; kind: number; tags: string[][]; content: string; sig: string }

const HEX64 = /^[0-9a-f]{64}$/;
const DIGITS = /^(0|[1-9]\d*)$/;
/** NIP numbers: decimal (the integers of NIP-11's supported_nips) or the repository's two-character names (5A, 7D, B0) */
const NIP = /^(\d{1,3}|[0-9A-F]{2})$/;
const NETWORKS = new Set(['clearnet', 'tor', 'i2p', 'loki']);
const PASCAL = /^[A-Z][A-Za-z0-9]*$/;
/** NIP-66 R: "keys corresponding to requirements per NIP 11's limitations ... including auth, writes, pow, and payment" */
const REQUIREMENT = /^!?[a-z][a-z_]*$/;
const GEOHASH = /^[0-9b-hjkmnp-z]{1,12}$/;
const CHECK = /^[a-z0-9][a-z0-9_-]*$/;
/** the single-letter tags NIP-66 gives 30166 */
const DISCOVERY_LETTERS = new Set(['d', 'n', 'T', 'N', 'R', 't', 'k', 'g']);
const RTT = new Set(['rtt-open', 'rtt-read', 'rtt-write']);

/** A ws/wss URL in RFC 3986 normal form (WHATWG URL serialises ws/wss, "special" schemes, that way). */
export function isNormalRelayUrl(s: string): boolean {
  let u: URL;
  try { u = new URL(s); } catch { return false; }
  return (u.protocol === 'ws:' || u.protocol === 'wss:') && u.href === s && u.hash === '' && u.username === '' && u.password === '';
}

function envelope(ev: SignedEvent, out: string[], verify: boolean): void {
  if (!HEX64.test(ev.id ?? '')) out.push('id is not 64 hex');
  if (!HEX64.test(ev.pubkey ?? '')) out.push('pubkey is not 64 hex');
  if (!/^[0-9a-f]{128}$/.test(ev.sig ?? '')) out.push('sig is not 128 hex');
  if (!Number.isSafeInteger(ev.created_at) || ev.created_at < 0) out.push('created_at is not a unix time');
  if (typeof ev.content !== 'string') out.push('content is not a string');
  if (!Array.isArray(ev.tags) || !ev.tags.every((t) => Array.isArray(t) && t.length >= 1 && t.every((x) => typeof x === 'string'))) out.push('tags are not arrays of strings');
  // a fresh object: nostr-tools caches a verdict on the event it signed or checked (a symbol a spread copies along)
  else if (verify && out.length === 0 && !verifyEvent({ id: ev.id, pubkey: ev.pubkey, created_at: ev.created_at, kind: ev.kind, tags: ev.tags, content: ev.content, sig: ev.sig })) out.push('id or signature does not verify');
}

/** Repeated tags carry one value each; no value twice; no `x` beside `!x`. */
function oneValueEach(tags: string[][], name: string, out: string[], negatable = false): string[] {
  const values = tags.filter((t) => t[0] === name).map((t) => {
    if (t.length !== 2) out.push(`${name} tag with ${t.length - 1} values: ${JSON.stringify(t)}`);
    return t[1] ?? '';
  });
  const seen = new Set<string>();
  for (const v of values) {
    if (seen.has(v)) out.push(`${name} ${JSON.stringify(v)} twice`);
    seen.add(v);
  }
  if (negatable) for (const v of values) if (!v.startsWith('!') && seen.has(`!${v}`)) out.push(`${name} both ${v} and !${v}`);
  return values;
}

function discovery(ev: SignedEvent, out: string[]): void {
  const d = ev.tags.filter((t) => t[0] === 'd');
  if (d.length !== 1) out.push(`${d.length} d tags (exactly one is required)`);
  else if (d[0].length !== 2) out.push(`d tag with ${d[0].length - 1} values`);
  else if (!isNormalRelayUrl(d[0][1]) && !HEX64.test(d[0][1])) out.push(`d ${JSON.stringify(d[0][1])} is neither a normalised (RFC 3986) ws/wss URL nor a hex pubkey`);
  for (const r of RTT) {
    const v = oneValueEach(ev.tags, r, out);
    if (v.length > 1) out.push(`${v.length} ${r} tags`);
    for (const x of v) if (!DIGITS.test(x)) out.push(`${r} ${JSON.stringify(x)} is not whole milliseconds`);
  }
  const n = oneValueEach(ev.tags, 'n', out);
  if (n.length > 1) out.push(`${n.length} n tags`);
  for (const x of n) if (!NETWORKS.has(x)) out.push(`n ${JSON.stringify(x)} is not clearnet, tor, i2p or loki`);
  for (const x of oneValueEach(ev.tags, 'T', out)) if (!PASCAL.test(x)) out.push(`T ${JSON.stringify(x)} is not PascalCase`);
  for (const x of oneValueEach(ev.tags, 'N', out)) if (!NIP.test(x)) out.push(`N ${JSON.stringify(x)} is not a NIP`);
  for (const x of oneValueEach(ev.tags, 'R', out, true)) if (!REQUIREMENT.test(x)) out.push(`R ${JSON.stringify(x)} is not a requirement key`);
  for (const x of oneValueEach(ev.tags, 't', out)) if (x === '' || x !== x.toLowerCase()) out.push(`t ${JSON.stringify(x)} is not a lowercase topic (NIP-24)`);
  for (const x of oneValueEach(ev.tags, 'k', out, true)) {
    const k = x.replace(/^!/, '');
    if (!DIGITS.test(k) || Number(k) > 65535) out.push(`k ${JSON.stringify(x)} is not a kind`);
  }
  for (const x of oneValueEach(ev.tags, 'g', out)) if (!GEOHASH.test(x)) out.push(`g ${JSON.stringify(x)} is not a geohash`);
  for (const t of ev.tags) {
    if (t[0] === 'l') out.push('l tag: removed from NIP-66 (b516adb)');
    else if (t[0].length === 1 && !DISCOVERY_LETTERS.has(t[0])) out.push(`${t[0]} tag: not a NIP-66 tag (single letters are filter keys other NIPs define)`);
  }
  if (ev.content !== '') {
    let doc: unknown;
    try { doc = JSON.parse(ev.content); } catch { doc = undefined; }
    if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) out.push('content is neither empty nor a JSON object (a NIP-11 document)');
  }
}

function announcement(ev: SignedEvent, out: string[]): void {
  const f = oneValueEach(ev.tags, 'frequency', out);
  if (f.length !== 1) out.push(`${f.length} frequency tags`);
  for (const x of f) if (!DIGITS.test(x) || x === '0') out.push(`frequency ${JSON.stringify(x)} is not seconds`);
  for (const t of ev.tags.filter((x) => x[0] === 'timeout')) {
    const [, a, b] = t;
    // the prose: [timeout, <ms>, <check>?]; the example: [timeout, <check>, <ms>]
    const ok = t.length === 2 ? DIGITS.test(a) : t.length === 3 && ((DIGITS.test(a) && CHECK.test(b) && !DIGITS.test(b)) || (CHECK.test(a) && !DIGITS.test(a) && DIGITS.test(b)));
    if (!ok) out.push(`timeout ${JSON.stringify(t)} is not milliseconds with an optional check`);
  }
  for (const x of oneValueEach(ev.tags, 'c', out)) if (!CHECK.test(x)) out.push(`c ${JSON.stringify(x)} is not a lowercase check name`);
  for (const x of oneValueEach(ev.tags, 'g', out)) if (!GEOHASH.test(x)) out.push(`g ${JSON.stringify(x)} is not a geohash`);
  for (const t of ev.tags) if (t[0].length === 1 && t[0] !== 'c' && t[0] !== 'g') out.push(`${t[0]} tag: not a NIP-66 announcement tag`);
}

function profile(ev: SignedEvent, out: string[]): void {
  let c: unknown;
  try { c = JSON.parse(ev.content); } catch { c = undefined; }
  if (typeof c !== 'object' || c === null || Array.isArray(c)) out.push('kind 0 content is not a JSON object');
  else if (typeof (c as { name?: unknown }).name !== 'string') out.push('kind 0 has no name');
}

function relayList(ev: SignedEvent, out: string[]): void {
  const rs = ev.tags.filter((t) => t[0] === 'r');
  if (rs.length === 0) out.push('kind 10002 names no relay');
  for (const t of rs) {
    let ok = t.length === 2 || (t.length === 3 && (t[2] === 'read' || t[2] === 'write'));
    try { ok &&= /^wss?:$/.test(new URL(t[1]).protocol); } catch { ok = false; }
    if (!ok) out.push(`r ${JSON.stringify(t)} is not a relay URL with an optional read/write marker`);
  }
}

function deletion(ev: SignedEvent, out: string[]): void {
  const targets = ev.tags.filter((t) => (t[0] === 'e' && HEX64.test(t[1] ?? '')) || (t[0] === 'a' && /^\d+:[0-9a-f]{64}:/.test(t[1] ?? '')));
  if (targets.length === 0) out.push('kind 5 names nothing to delete');
  for (const t of ev.tags.filter((x) => x[0] === 'a')) if (t[1]?.split(':')[1] !== ev.pubkey) out.push(`kind 5 deletes another author's address ${t[1]}`);
}

/** What is wrong with an event a monitor published, per the texts; empty when nothing. */
export function nip66Problems(ev: SignedEvent, o: { verify?: boolean } = {}): string[] {
  const out: string[] = [];
  envelope(ev, out, o.verify !== false);
  if (!Array.isArray(ev.tags)) return out;
  switch (ev.kind) {
    case 30166: discovery(ev, out); break;
    case 10166: announcement(ev, out); break;
    case 0: profile(ev, out); break;
    case 10002: relayList(ev, out); break;
    case 5: deletion(ev, out); break;
    default: out.push(`kind ${ev.kind}: not one a NIP-66 monitor publishes`);
  }
  return out;
}

/** Throws with every problem of every event that has any. */
export function assertNip66(events: readonly SignedEvent[]): void {
  const bad = events.map((e) => ({ e, p: nip66Problems(e) })).filter((x) => x.p.length > 0);
  if (bad.length) throw new Error(`NIP-66: ${bad.length} of ${events.length} events invalid:\n${bad.map((x) => `  kind ${x.e.kind} ${JSON.stringify(x.e.tags).slice(0, 300)}\n    ${x.p.join('\n    ')}`).join('\n')}`);
}
