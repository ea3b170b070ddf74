// Attack: make the relay verify signatures for nothing. Resending one valid AUTH thousands of
// times used to queue every copy on the shared verify thread (43k checks in 5 s; another client's
// EVENT OK went from 3 ms to 2.3 s). AUTH is now rate-limited per connection and per IP, EVENTs
// and AUTHs in flight are bounded per connection and per IP, and the cheap policy checks run
// before the signature check. Default settings.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startRelayProcess, type RelayProcess } from '../helpers/relay-process.js';
import { Author, Client } from '../helpers/client.js';
import { accessFigures } from './helpers.js';

let relay: RelayProcess;
before(async () => { relay = await startRelayProcess(); });
after(async () => { await relay.cleanup(); });

test('an AUTH flood is refused with rate-limited: before any signature work; others are served', async () => {
  const conns = await Promise.all(Array.from({ length: 4 }, () => Client.open(relay.url)));
  const victim = new Author();
  const before = await accessFigures(relay);
  const t0 = performance.now();
  const answers = await Promise.all(conns.map(async (c) => {
    const ev = victim.sign({ kind: 22242, tags: [['relay', relay.url], ['challenge', await c.challenge()]] });
    const frame = JSON.stringify(['AUTH', ev]);
    // 2,400 in all: under the per-IP message burst (rateLimits.messagesPerIp 2,000/s x 2 s), so each is read
    for (let i = 0; i < 600; i++) c.ws.send(frame);
    const oks: unknown[][] = [];
    while (oks.length < 600) oks.push(await c.next((m) => m[0] === 'OK' && m[1] === ev.id, 10_000, 'OK for AUTH'));
    return oks;
  }));
  const seconds = (performance.now() - t0) / 1000;
  const all = answers.flat();
  const accepted = all.filter((m) => m[2] === true).length;
  const refused = all.filter((m) => m[2] === false);
  assert.equal(all.length, 2400, 'every AUTH answered');
  assert.ok(refused.every((m) => /^rate-limited: /.test(m[3] as string)), String(refused.find((m) => !/^rate-limited: /.test(m[3] as string))?.[3]));
  // per IP 20/s with a 2 s burst: 40 + 20/s, whatever the number of connections
  assert.ok(accepted <= 40 + 20 * seconds + 1, `${accepted} AUTHs verified in ${seconds.toFixed(1)} s`);
  const after = await accessFigures(relay);
  assert.equal(after.authSucceeded - before.authSucceeded, accepted, 'only the accepted ones were checked and counted');

  const other = await Client.open(relay.url);
  assert.equal((await other.publish(new Author().sign({ content: 'served' }))).ok, true);
  for (const c of [...conns, other]) c.close();
});

test('EVENTs in flight are bounded per connection: the excess gets OK false rate-limited:, every EVENT one answer', async () => {
  const c = await Client.open(relay.url);
  const a = new Author();
  const ev = a.sign({ content: 'the same event, many times' });
  const frame = JSON.stringify(['EVENT', ev]);
  let refusedTotal = 0;
  for (let round = 0; round < 3 && refusedTotal === 0; round++) {
    if (round > 0) await new Promise((r) => setTimeout(r, 2000)); // the per-IP message allowance refills
    // 1,500 copies in one write: the relay reads them in large batches, each handled before any
    // signature check can finish, so more than 256 are in flight at once
    const sock = (c.ws as unknown as { _socket: { cork(): void; uncork(): void } })._socket;
    sock.cork();
    for (let i = 0; i < 1500; i++) c.ws.send(frame);
    sock.uncork();
    const oks: unknown[][] = [];
    while (oks.length < 1500) oks.push(await c.next((m) => m[0] === 'OK' && m[1] === ev.id, 10_000, 'OK'));
    const refused = oks.filter((m) => m[2] === false);
    assert.ok(refused.every((m) => /^rate-limited: .*wait for their OK/.test(m[3] as string)), String(refused[0]?.[3]));
    assert.ok(oks.filter((m) => m[2] === true).every((m) => m[3] === '' || /^duplicate: /.test(m[3] as string)));
    refusedTotal += refused.length;
  }
  assert.ok(refusedTotal > 0, 'some copies were refused for being too many in flight');
  // afterwards the connection works as before
  assert.deepEqual(await c.publish(a.sign({ content: 'next' })), { ok: true, message: '' });
  c.close();
});

test('cheap checks come before the signature check: a forged, oversized event is refused for its size', async () => {
  const c = await Client.open(relay.url);
  const ev = new Author().sign({ content: 'x'.repeat(70_000) }); // limits.maxContentLength 65,536
  const forged = { ...ev, sig: '0'.repeat(128) };
  const r = await c.publish(forged);
  assert.equal(r.ok, false);
  assert.match(r.message, /^invalid: (event is larger|content is longer) than/);
  // and a forged event that passes every policy is still refused by the signature check
  const small = new Author().sign({ content: 'forged' });
  const r2 = await c.publish({ ...small, sig: '0'.repeat(128) });
  assert.equal(r2.ok, false);
  assert.match(r2.message, /^invalid: signature/);
  c.close();
});
