// The data directory's local key: a relay trusts it like a spider worker's, so `orbweaver sync`
// (and spider --once) beside it deliver at full speed however tight its public per-IP limits are,
// while an ordinary client from the same address is still held to them. Without the key the 300
// events below would take 150 s at 2 EVENTs a second, past the command's time limit.
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startRelayProcess, type RelayProcess } from '../helpers/relay-process.js';
import { runCliAsync } from '../helpers/cli.js';
import { Author, Client } from '../helpers/client.js';

const TIGHT = {
  ORBWEAVER_RATE_LIMITS_PER_IP_EVENT: '2',
  ORBWEAVER_RATE_LIMITS_BURST_SECONDS: '2',
  ORBWEAVER_RATE_LIMITS_MESSAGES_PER_IP: '40',
};

let source: RelayProcess;
let home: RelayProcess;
/** kind 1 needs AUTH to publish: an EVENT sent before the local key authenticated is refused and counted */
let onDemand: RelayProcess;
let onConnect: RelayProcess;
const AUTH_TO_WRITE = { ORBWEAVER_AUTH_WRITE_KINDS: '1' };
const alice = new Author();
const events = Array.from({ length: 300 }, (_, i) => alice.sign({ kind: 1, created_at: 1_700_000_000 + i, content: `n${i}` }));

before(async () => {
  // one after another: on a loaded machine four starting at once can each miss the start-up wait
  source = await startRelayProcess();
  home = await startRelayProcess({ env: TIGHT });
  onDemand = await startRelayProcess({ env: AUTH_TO_WRITE });
  onConnect = await startRelayProcess({ env: { ...AUTH_TO_WRITE, ORBWEAVER_AUTH_CHALLENGE: 'connect' } });
  const c = await Client.open(source.url);
  for (const e of events) assert.equal((await c.publish(e)).ok, true);
  c.close();
});
after(async () => {
  await Promise.all([source, home, onDemand, onConnect].map((r) => r?.cleanup()));
});

test('the relay creates <dataDir>/local.key, private to its user', () => {
  const st = statSync(join(home.dataDir, 'local.key'));
  assert.equal(st.mode & 0o077, 0);
});

test('sync beside a relay with tight per-IP limits delivers everything; a plain client is still limited', async () => {
  const r = await runCliAsync(['sync', source.url, '--data', home.dataDir, '--json'], { env: TIGHT, timeoutMs: 60_000 });
  assert.equal(r.status, 0, r.stderr);
  const summary = JSON.parse(r.stdout.trim().split('\n').pop() ?? '') as { down: { statuses: { stored: number } } };
  assert.equal(summary.down.statuses.stored, events.length);

  const c = await Client.open(home.url);
  const { events: got } = await c.query({ authors: [alice.pk], limit: 500 });
  assert.equal(got.length, events.length);
  const bob = new Author();
  const answers = [];
  for (let i = 0; i < 8; i++) answers.push(await c.publish(bob.sign({ kind: 1, content: `b${i}` })));
  c.close();
  assert.ok(answers.some((a) => !a.ok && a.message.startsWith('rate-limited:')), 'the limits still hold for everyone else');
});

interface Refusals { byReason: Array<{ reason: string; byVerb: Record<string, number> }> }

test('sync authenticates with the local key before its first EVENT, whether the relay challenges on demand or on connect', async () => {
  for (const [r, mode] of [[onDemand, 'on-demand'], [onConnect, 'connect']] as const) {
    const out = await runCliAsync(['sync', source.url, '--data', r.dataDir, '--json'], { timeoutMs: 60_000 });
    assert.equal(out.status, 0, out.stderr);
    const summary = JSON.parse(out.stdout.trim().split('\n').pop() ?? '') as { down: { statuses: { stored: number } } };
    assert.equal(summary.down.statuses.stored, events.length, mode);
    const status = (await (await fetch(`${r.httpUrl}/status.json?directory=0`)).json()) as { auth: { challenge: string }; refusals: Refusals; access: Record<string, number> };
    assert.equal(status.auth.challenge, mode);
    // an EVENT that came before the AUTH would have been refused auth-required: (kind 1 needs AUTH here)
    assert.deepEqual(status.refusals.byReason, [], `${mode}: no refusal of any kind`);
    assert.ok(status.access.authSucceeded >= 1, mode);
    assert.equal(status.access.authFailed, 0, mode);
  }
});
