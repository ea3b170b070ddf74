// NIP-86 management over HTTP with NIP-98 authorization, against the real relay: refused without
// (or with a bad) Authorization, every list method works, changes apply at once and survive a restart;
// client addresses of refusals go to the admin (listrefusals), never to the public status page.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { rmSync } from 'node:fs';
import { npubEncode } from 'nostr-tools/nip19';
import { startRelayProcess, tempDir, type RelayProcess } from '../helpers/relay-process.js';
import { Author, Client, ids, now } from '../helpers/client.js';

const admin = new Author();
const dataDir = tempDir();
let relay: RelayProcess;
const env = { ORBWEAVER_ADMIN_PUBKEYS: `${new Author().pk},${npubEncode(admin.pk)}` };

before(async () => { relay = await startRelayProcess({ dataDir, env }); });
after(async () => { await relay.cleanup(); rmSync(dataDir, { recursive: true, force: true }); });

interface Rpc { status: number; body: { result?: unknown; error?: string } }

async function rpc(method: string, params: unknown[] = [], opts: { as?: Author | null; url?: string; payload?: string; contentType?: string; created_at?: number } = {}): Promise<Rpc> {
  const body = JSON.stringify({ method, params });
  const url = relay.httpUrl + '/';
  const headers: Record<string, string> = { 'Content-Type': opts.contentType ?? 'application/nostr+json+rpc' };
  const as = opts.as === undefined ? admin : opts.as;
  if (as) {
    const ev = as.sign({ kind: 27235, created_at: opts.created_at ?? now(), tags: [['u', opts.url ?? url], ['method', 'POST'], ['payload', opts.payload ?? createHash('sha256').update(body).digest('hex')]] });
    headers.Authorization = 'Nostr ' + Buffer.from(JSON.stringify(ev)).toString('base64');
  }
  const res = await fetch(url, { method: 'POST', headers, body });
  const text = await res.text();
  let parsed: Rpc['body'] = {};
  try { parsed = JSON.parse(text); } catch { parsed = { error: text }; }
  return { status: res.status, body: parsed };
}

test('without a valid NIP-98 Authorization the management API refuses', async () => {
  let r = await rpc('supportedmethods', [], { as: null });
  assert.equal(r.status, 401);
  assert.match(r.body.error!, /^unauthorized: /);
  r = await rpc('banpubkey', [new Author().pk], { as: new Author() });
  assert.equal(r.status, 401, 'a pubkey that is not an admin');
  assert.match(r.body.error!, /not an admin/);
  r = await rpc('supportedmethods', [], { payload: '00'.repeat(32) });
  assert.equal(r.status, 401, 'payload hash must match the body');
  r = await rpc('supportedmethods', [], { url: 'http://elsewhere.example/' });
  assert.equal(r.status, 401, 'u tag must name this relay');
  r = await rpc('supportedmethods', [], { created_at: now() - 3600 });
  assert.equal(r.status, 401, 'stale authorization');
  r = await rpc('supportedmethods', [], { contentType: 'application/json' });
  assert.equal(r.status, 415);
});

test('with NIP-98: supportedmethods, ban/allow pubkey, ban event, block IP, relay info, spider methods', async () => {
  let r = await rpc('supportedmethods');
  assert.equal(r.status, 200);
  for (const m of ['banpubkey', 'allowpubkey', 'listbannedpubkeys', 'listallowedpubkeys', 'banevent', 'listbannedevents', 'allowkind', 'disallowkind', 'listallowedkinds', 'blockip', 'unblockip', 'listblockedips', 'changerelayname', 'changerelaydescription', 'changerelayicon', 'spidertrigger', 'spiderstatus', 'listrefusals']) {
    assert.ok((r.body.result as string[]).includes(m), m);
  }
  const c = await Client.open(relay.url);
  const spammer = new Author();
  const note = spammer.sign({ content: 'before the ban' });
  assert.equal((await c.publish(note)).ok, true);

  r = await rpc('banpubkey', [spammer.pk, 'spam']);
  assert.deepEqual(r.body, { result: true });
  let p = await c.publish(spammer.sign({ content: 'after the ban' }));
  assert.equal(p.ok, false);
  assert.match(p.message, /^blocked: /);
  r = await rpc('listbannedpubkeys');
  assert.deepEqual(r.body.result, [{ pubkey: spammer.pk, reason: 'spam' }]);

  r = await rpc('banevent', [note.id, 'illegal']);
  assert.deepEqual(r.body, { result: true });
  assert.deepEqual((await c.query({ ids: [note.id] })).events, [], 'the banned event is gone');
  r = await rpc('listbannedevents');
  assert.deepEqual(r.body.result, [{ id: note.id, reason: 'illegal' }]);

  r = await rpc('blockip', ['127.0.0.5/32', 'abuse']);
  assert.deepEqual(r.body, { result: true });
  await assert.rejects(Client.open(relay.url, { localAddress: '127.0.0.5' }), /403/);
  r = await rpc('listblockedips');
  assert.deepEqual(r.body.result, [{ ip: '127.0.0.5/32', reason: 'abuse' }]);
  r = await rpc('blockip', ['not-an-ip']);
  assert.match(r.body.error!, /ip must be/);

  r = await rpc('changerelayname', ['Managed Relay']);
  assert.deepEqual(r.body, { result: true });
  await rpc('changerelaydescription', ['run by NIP-86']);
  await rpc('changerelayicon', ['https://example.com/icon.png']);
  const info = (await (await fetch(relay.httpUrl, { headers: { Accept: 'application/nostr+json' } })).json()) as Record<string, unknown>;
  assert.equal(info.name, 'Managed Relay');
  assert.equal(info.description, 'run by NIP-86');
  assert.equal(info.icon, 'https://example.com/icon.png');

  r = await rpc('spiderstatus');
  assert.match(r.body.error!, /spider is not enabled/);
  r = await rpc('nosuchmethod');
  assert.match(r.body.error!, /unsupported method/);
  r = await rpc('banpubkey', ['nope']);
  assert.match(r.body.error!, /pubkey/);
  c.close();
});

test('client addresses: the public status page, /status.json and /metrics name none; listrefusals gives them to the admin', async () => {
  // a refusal sent to a client on 127.0.0.7: an event from too far in the future
  const c = await Client.open(relay.url, { localAddress: '127.0.0.7' });
  const p = await c.publish(new Author().sign({ content: 'future', created_at: now() + 86400 }));
  assert.match(p.message, /^invalid: /);
  c.close();
  const status = await (await fetch(relay.httpUrl + '/status.json')).text();
  const s = JSON.parse(status) as { refusals: { recent: Array<Record<string, unknown>>; recentAddresses: number } };
  assert.ok(s.refusals.recent.some((x) => /created_at/.test(String(x.message))), 'the refusal is listed');
  assert.ok(s.refusals.recentAddresses >= 1, 'counted by address');
  for (const [what, text] of [['/status.json', status], ['/', await (await fetch(relay.httpUrl + '/')).text()], ['/metrics', await (await fetch(relay.httpUrl + '/metrics')).text()]]) {
    assert.doesNotMatch(text, /127\.0\.0\.7/, `${what} shows no client address`);
  }
  const r = await rpc('listrefusals');
  assert.equal(r.status, 200);
  const mine = (r.body.result as Array<{ ip: string; verb: string; reason: string; message: string; at: number }>).find((x) => x.ip === '127.0.0.7');
  assert.ok(mine, `the admin sees the address: ${JSON.stringify(r.body)}`);
  assert.equal(mine.verb, 'EVENT');
  assert.equal(mine.reason, 'invalid');
  assert.match(mine.message, /created_at/);
  assert.equal((await rpc('listrefusals', [], { as: new Author() })).status, 401, 'and only the admin');
});

test('kind lists: disallowkind refuses a kind; allowkind turns on an allow list', async () => {
  const c = await Client.open(relay.url);
  const a = new Author();
  assert.deepEqual((await rpc('disallowkind', [7])).body, { result: true });
  let p = await c.publish(a.sign({ kind: 7, content: '+' }));
  assert.match(p.message, /^blocked: kind 7/);
  assert.deepEqual((await rpc('allowkind', [30023])).body, { result: true });
  assert.deepEqual((await rpc('listallowedkinds')).body.result, [30023]);
  p = await c.publish(a.sign({ kind: 1 }));
  assert.match(p.message, /^blocked: kind 1 is not on this relay's list/);
  p = await c.publish(a.sign({ kind: 30023, tags: [['d', 'x']] }));
  assert.equal(p.ok, true);
  c.close();
});

test('changes persist in LMDB: after a restart the ban, the blocked IP and the name still apply; allowpubkey lifts the ban', async () => {
  assert.equal(await relay.stop(), 0);
  relay = await startRelayProcess({ dataDir, env });
  const info = (await (await fetch(relay.httpUrl, { headers: { Accept: 'application/nostr+json' } })).json()) as Record<string, unknown>;
  assert.equal(info.name, 'Managed Relay');
  const banned = ((await rpc('listbannedpubkeys')).body.result as Array<{ pubkey: string }>)[0].pubkey;
  await assert.rejects(Client.open(relay.url, { localAddress: '127.0.0.5' }), /403/);
  assert.deepEqual((await rpc('unblockip', ['127.0.0.5/32'])).body, { result: true });
  const c5 = await Client.open(relay.url, { localAddress: '127.0.0.5' });
  c5.close();
  // kinds 30023 only (from the previous test): lift that, then the banned author is allowed back
  assert.deepEqual((await rpc('disallowkind', [30023])).body, { result: true });
  assert.deepEqual((await rpc('listallowedkinds')).body.result, []);
  assert.deepEqual((await rpc('allowpubkey', [banned])).body, { result: true });
  assert.deepEqual((await rpc('listbannedpubkeys')).body.result, []);
  assert.deepEqual((await rpc('listallowedpubkeys')).body.result, [{ pubkey: banned, reason: '' }]);
  const c = await Client.open(relay.url);
  const r = await c.query({ authors: [banned] });
  assert.deepEqual(ids(r.events), []);
  c.close();
});
