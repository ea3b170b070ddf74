// NIP-01 behaviour of the real relay process over real WebSockets: the paths the conformance
// suite does not walk (limits, refusals, live delivery rules, HTTP endpoints).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startRelayProcess, type RelayProcess } from '../helpers/relay-process.js';
import { Author, Client, now, sleep } from '../helpers/client.js';

let relay: RelayProcess;
before(async () => {
  relay = await startRelayProcess({ env: { ORBWEAVER_LIMITS_MAX_SUBSCRIPTIONS: '3', ORBWEAVER_LIMITS_MAX_FILTERS: '2', ORBWEAVER_LIMITS_MAX_LIMIT: '5' } });
});
after(async () => { await relay.cleanup(); });

test('the start-up log line names the version, address, data dir and the native uWS binary', () => {
  const line = relay.logs.find((l) => l.msg === 'orbweaver relay listening')!;
  assert.equal(line.uwsNative, true, 'native uWebSockets.js binary must be in use');
  assert.equal(line.dataDir, relay.dataDir);
  assert.match(String(line.version), /^\d+\.\d+\.\d+/);
  assert.ok(['libsecp256k1', 'native', 'wasm'].includes(String(line.verifier)));
});

test('NIP-11 states the configured limits; status page, healthz and metrics answer', async () => {
  const info = (await (await fetch(relay.httpUrl, { headers: { Accept: "application/nostr+json" } })).json()) as { limitation: Record<string, number>; supported_nips: number[]; software: string };
  assert.equal(info.limitation.max_subscriptions, 3);
  assert.equal(info.limitation.max_limit, 5);
  assert.equal(info.limitation.max_subid_length, 64);
  for (const nip of [1, 9, 11, 40, 45]) assert.ok(info.supported_nips.includes(nip));
  assert.match(info.software, /^https:\/\//, 'NIP-11: the URL of the relay software');
  const page = await fetch(relay.httpUrl + '/');
  assert.match(page.headers.get('content-type')!, /text\/html/);
  assert.match(await page.text(), /orbweaver/);
  const health = await fetch(relay.httpUrl + '/healthz');
  assert.equal(health.status, 200);
  const metrics = await (await fetch(relay.httpUrl + '/metrics')).text();
  assert.match(metrics, /^orbweaver_connections \d+$/m);
  assert.match(metrics, /orbweaver_write_seconds_bucket/);
  const pre = await fetch(relay.httpUrl + '/', { method: 'OPTIONS' });
  assert.equal(pre.headers.get('access-control-allow-origin'), '*');
  assert.equal((await fetch(relay.httpUrl + '/nothing')).status, 404);
});

test('a limit above max_limit is clamped, not refused', async () => {
  const c = await Client.open(relay.url);
  const a = new Author();
  for (let i = 0; i < 8; i++) assert.equal((await c.publish(a.sign({ created_at: now() - 100 + i }))).ok, true);
  const r = await c.query({ authors: [a.pk], limit: 1000 });
  assert.equal(r.closed, undefined);
  assert.equal(r.events.length, 5);
  c.close();
});

test('too many subscriptions, too many filters and bad filters get CLOSED with a prefix', async () => {
  const c = await Client.open(relay.url);
  for (const s of ['s1', 's2', 's3']) await c.query({ kinds: [1], limit: 0 }, s, false);
  let r = await c.query({ kinds: [1] }, 's4');
  assert.match(r.closed!, /^rate-limited: too many open subscriptions/);
  r = await c.query({ kinds: [1], limit: 0 }, 's1', false); // replacing an open id is fine
  assert.equal(r.closed, undefined);
  c.send(['CLOSE', 's2']);
  r = await c.query([{ kinds: [1] }, { kinds: [2] }, { kinds: [3] }], 'f');
  assert.match(r.closed!, /^invalid: .*filters/);
  r = await c.query({ kinds: 'x' }, 'g');
  assert.match(r.closed!, /^invalid: kinds/);
  // a subscription id over max_subid_length: answered under that id, so a client waiting on it hears
  const long = 'x'.repeat(65);
  c.send(['REQ', long, {}]);
  assert.ok(await c.arrives((m) => m[0] === 'CLOSED' && m[1] === long && /^invalid: subscription id longer than 64/.test(m[2] as string), 3000), 'REQ: CLOSED for that id');
  c.send(['COUNT', long + 'c', {}]);
  assert.ok(await c.arrives((m) => m[0] === 'CLOSED' && m[1] === long + 'c' && /^invalid: subscription id/.test(m[2] as string), 3000), 'COUNT: CLOSED for that id');
  c.send(['NEG-OPEN', long + 'n', {}, '61']);
  assert.ok(await c.arrives((m) => m[0] === 'NEG-ERR' && m[1] === long + 'n' && /^invalid: subscription id/.test(m[2] as string), 3000), 'NEG-OPEN: NEG-ERR for that id');
  c.send(['CLOSE', long]);
  assert.ok(await c.arrives((m) => m[0] === 'NOTICE' && /^invalid: subscription id/.test(m[1] as string), 3000), 'CLOSE of such an id: a NOTICE');
  const cnt = await c.count({ ids: ['nothex'] });
  assert.equal(cnt[0], 'CLOSED');
  assert.match(cnt[2] as string, /^invalid: /);
  c.close();
});

test('events from the future, oversized content and malformed events are refused with invalid:', async () => {
  const c = await Client.open(relay.url);
  const a = new Author();
  let r = await c.publish(a.sign({ created_at: now() + 3600 }));
  assert.equal(r.ok, false);
  assert.match(r.message, /^invalid: created_at/);
  r = await c.publish(a.sign({ content: 'x'.repeat(70000) }));
  assert.equal(r.ok, false);
  assert.match(r.message, /^invalid: /);
  const ev = a.sign({});
  c.send(['EVENT', { ...ev, kind: -1 }]);
  const m = await c.next((m) => m[0] === 'OK' && m[1] === ev.id, 3000);
  assert.equal(m[2], false);
  assert.match(m[3] as string, /^invalid: kind/);
  c.send('["EVENT"');
  assert.ok(await c.arrives((m) => m[0] === 'NOTICE' && /^invalid: /.test(m[1] as string), 3000));
  assert.equal((await c.publish(a.sign({ content: 'still fine' }))).ok, true);
  c.close();
});

test('a message above max_message_length gets a NOTICE, the connection stays usable', async () => {
  const c = await Client.open(relay.url);
  c.send(JSON.stringify(['REQ', 'big', { '#t': ['x'.repeat(140000)] }]));
  assert.ok(await c.arrives((m) => m[0] === 'NOTICE' && /^invalid: message larger/.test(m[1] as string), 3000));
  const a = new Author();
  assert.equal((await c.publish(a.sign({}))).ok, true);
  c.close();
});

test('a replaced version, a duplicate and a blocked event are never broadcast', async () => {
  const a = new Author();
  const listener = await Client.open(relay.url);
  const sender = await Client.open(relay.url);
  await listener.query({ authors: [a.pk] }, 'live', false);
  const t = now() - 50;
  const newer = a.sign({ kind: 0, created_at: t + 10, content: 'newer' });
  const older = a.sign({ kind: 0, created_at: t, content: 'older' });
  assert.equal((await sender.publish(newer)).ok, true);
  await sender.publish(older);
  await sender.publish(newer);
  const note = a.sign({ content: 'to delete' });
  await sender.publish(a.sign({ kind: 5, tags: [['e', note.id]] }));
  await sender.publish(note);
  await sleep(300);
  const got = listener.inbox.filter((m) => m[0] === 'EVENT' && m[1] === 'live').map((m) => (m[2] as { id: string }).id);
  assert.equal(got.filter((id) => id === newer.id).length, 1, 'newer delivered once');
  assert.ok(!got.includes(older.id), 'older version not delivered');
  assert.ok(!got.includes(note.id), 'blocked event not delivered');
  listener.close();
  sender.close();
});
