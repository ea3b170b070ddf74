// Attack: a client connects with `Host: evil.example` and presents an AUTH the victim signed for
// wss://evil.example with our challenge (a page on evil.example asked the victim's signer). The
// relay used to check the relay tag against the Host header, said OK, and served the victim's DMs.
// Now the relay tag (and NIP-98's u tag) must name publicUrl or, without it, the relay's own listen
// address — never what the client claims. NIP-98 headers are accepted once.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { request } from 'node:http';
import { startRelayProcess, type RelayProcess } from '../helpers/relay-process.js';
import { Author, Client, now } from '../helpers/client.js';

const admin = new Author();
let relay: RelayProcess;
before(async () => { relay = await startRelayProcess({ env: { ORBWEAVER_ADMIN_PUBKEYS: admin.pk } }); });
after(async () => { await relay.cleanup(); });

test('NIP-42: an AUTH for the Host the client sent is refused; the listen address is accepted', async () => {
  const victim = new Author();
  const friend = new Author();
  const dm = friend.sign({ kind: 4, tags: [['p', victim.pk]], content: 'secret' });
  const pub = await Client.open(relay.url);
  assert.equal((await pub.publish(dm)).ok, true);

  const c = await Client.open(relay.url, { headers: { Host: 'evil.example' } });
  for (const tag of ['wss://evil.example', 'ws://evil.example', 'wss://evil.example/']) {
    const r = await c.authenticate(victim, tag);
    assert.equal(r.ok, false, `relay tag ${tag}`);
    assert.match(r.message, /^invalid: .*relay tag/);
  }
  // the attacker is not the victim: the DM stays hidden
  const q = await c.query({ kinds: [4], '#p': [victim.pk] });
  assert.match(q.closed ?? '', /^auth-required: /);
  assert.deepEqual((await c.query({ ids: [dm.id] })).events, []);

  // the relay's own address works whatever Host said (and so does localhost for a loopback listener)
  assert.deepEqual(await c.authenticate(victim, relay.url), { ok: true, message: '' });
  assert.deepEqual(await c.authenticate(friend, `ws://localhost:${relay.port}`), { ok: true, message: '' });
  assert.deepEqual((await c.query({ ids: [dm.id] })).events.map((e) => e.id), [dm.id]);
  c.close();
  pub.close();
});

interface Rpc { status: number; body: { result?: unknown; error?: string } }

/** POST a NIP-86 call with a raw Host header; `header` reuses an Authorization value. */
function rpc(method: string, opts: { host?: string; u?: string; header?: string } = {}): Promise<Rpc & { header: string }> {
  const body = JSON.stringify({ method, params: [] });
  const u = opts.u ?? `${relay.httpUrl}/`;
  const header = opts.header ?? 'Nostr ' + Buffer.from(JSON.stringify(admin.sign({ kind: 27235, created_at: now(), tags: [['u', u], ['method', 'POST'], ['payload', createHash('sha256').update(body).digest('hex')]] }))).toString('base64');
  return new Promise((resolve, reject) => {
    const req = request(`${relay.httpUrl}/`, { method: 'POST', headers: { Host: opts.host ?? `127.0.0.1:${relay.port}`, 'Content-Type': 'application/nostr+json+rpc', Authorization: header } }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text), header }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

test('NIP-98: a u tag naming the Host the client sent is refused; a header is accepted once', async () => {
  let r = await rpc('supportedmethods', { host: 'evil.example', u: 'https://evil.example/' });
  assert.equal(r.status, 401);
  assert.match(r.body.error!, /^unauthorized: .*u tag/);
  r = await rpc('supportedmethods', { host: 'evil.example', u: 'http://evil.example/' });
  assert.equal(r.status, 401);
  // signed for the relay's own address: accepted, whatever the Host header
  r = await rpc('supportedmethods', { host: 'evil.example' });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  // the same header again, inside its 60 s window: refused
  const again = await rpc('supportedmethods', { header: r.header });
  assert.equal(again.status, 401);
  assert.match(again.body.error!, /already used/);
});
