// Interop with strfry, the reference NIP-77 relay: strfry's `sync` command against our relay and
// `orbweaver sync` against strfry, in both directions, with small frame limits on our side and on
// strfry's, over a precomputed strfry tree ({}) and a per-request set ({"kinds":[1]}). strfry is
// built by hand outside the project (see docs/sync.md); ORBWEAVER_STRFRY names its binary, else a
// `strfry` on PATH is used. Without one each test reports itself skipped, with the reason.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { startStrfry, strfrySkip, type Strfry } from '../helpers/strfry.js';
import { CLI, ROOT, startRelayProcess, type RelayProcess } from '../helpers/relay-process.js';
import { Author, Client } from '../helpers/client.js';
import type { NostrEvent } from '../../src/nostr/event.js';

const skip = strfrySkip;

async function ids(url: string, filter: object = {}): Promise<string[]> {
  const c = await Client.open(url, { perMessageDeflate: false });
  const out = new Set<string>();
  let until: number | undefined;
  for (;;) {
    const { events } = await c.query({ ...filter, limit: 500, ...(until !== undefined ? { until } : {}) });
    const before = out.size;
    for (const e of events) out.add(e.id);
    if (out.size === before) break;
    until = Math.min(...events.map((e) => e.created_at));
  }
  c.close();
  return [...out].sort();
}

async function publish(url: string, evs: NostrEvent[]): Promise<void> {
  const c = await Client.open(url, { perMessageDeflate: false });
  for (const e of evs) {
    const r = await c.publish(e);
    assert.equal(r.ok, true, r.message);
  }
  c.close();
}

// recent timestamps: strfry refuses events older than three years by default
const NOW = Math.floor(Date.now() / 1000) - 3600;
const make = (a: Author, n: number, tag: string, spread: number): NostrEvent[] =>
  Array.from({ length: n }, (_, i) => a.sign({ kind: i % 3 === 0 ? 7 : 1, created_at: NOW - (i % spread), content: `${tag}${i}` }));

// the suite runs its before/after only with a binary; each test carries the skip, so the runner's
// summary counts them as skipped (a skipped suite alone counts nothing)
describe('NIP-77 interop with strfry', () => {
  let ours: RelayProcess;
  let sf: Strfry;
  const alice = new Author();
  before(async () => {
    if (skip) return;
    // our relay answers with small frames, so strfry's client has to follow cut messages
    [ours, sf] = await Promise.all([startRelayProcess({ env: { ORBWEAVER_NEGENTROPY_FRAME_SIZE_LIMIT: '4096' } }), startStrfry()]);
  });
  after(async () => {
    await ours?.cleanup();
    await sf?.stop();
  });

  test("strfry's sync against our relay, both directions: both end with the union", { skip }, async () => {
    const onlyOurs = make(alice, 300, 'o', 40); // 300 ids: more than one 4096-byte frame holds
    const onlySf = make(alice, 60, 's', 40);
    const shared = make(alice, 50, 'c', 1); // one crowded second on both sides
    await Promise.all([publish(ours.url, [...onlyOurs, ...shared]), publish(sf.url, [...onlySf, ...shared])]);
    const r = sf.cmd(['sync', ours.url, '--dir', 'both']);
    assert.equal(r.status, 0, r.out);
    assert.match(r.out, new RegExp(`Set reconcile complete\\. Have ${onlySf.length} need ${onlyOurs.length}`));
    const union = [...new Set([...onlyOurs, ...onlySf, ...shared].map((e) => e.id))].sort();
    assert.deepEqual(await ids(ours.url), union);
    assert.deepEqual(await ids(sf.url), union);
    // again: nothing to do
    const again = sf.cmd(['sync', ours.url, '--dir', 'both', '--filter', '{"kinds":[1]}']);
    assert.equal(again.status, 0, again.out);
    assert.match(again.out, /Have 0 need 0/);
  });

  test('orbweaver sync against strfry, both directions, with strfry\'s tree ({}) and a per-request set (kinds 1)', { skip }, async () => {
    const bob = new Author();
    const newOnSf = make(bob, 120, 'S', 30);
    const newOurs = make(bob, 40, 'O', 30);
    await Promise.all([publish(sf.url, newOnSf), publish(ours.url, newOurs)]);
    const run = (args: string[]) => spawnSync(process.execPath, [CLI, 'sync', sf.url, ...args, '--json', '--data', ours.dataDir, '--port', String(ours.port)], { cwd: ROOT, encoding: 'utf8', timeout: 60_000, env: { ...process.env, ORBWEAVER_NEGENTROPY_SYNC_FRAME_SIZE_LIMIT: '4096' } });
    const k1 = run(['--dir', 'both', '--filter', '{"kinds":[1]}']);
    assert.equal(k1.status, 0, k1.stderr);
    const s1 = JSON.parse(k1.stdout.trim());
    assert.equal(s1.reconcile.need, newOnSf.filter((e) => e.kind === 1).length);
    assert.equal(s1.reconcile.have, newOurs.filter((e) => e.kind === 1).length);
    const all = run(['--dir', 'both']);
    assert.equal(all.status, 0, all.stderr);
    const s2 = JSON.parse(all.stdout.trim());
    assert.equal(s2.reconcile.need, newOnSf.filter((e) => e.kind !== 1).length);
    assert.equal(s2.reconcile.have, newOurs.filter((e) => e.kind !== 1).length);
    const [a, b] = await Promise.all([ids(ours.url), ids(sf.url)]);
    assert.deepEqual(a, b);
    assert.ok(a.length >= 570);
    const again = run(['--dir', 'both']);
    assert.equal(JSON.parse(again.stdout.trim()).reconcile.need + JSON.parse(again.stdout.trim()).reconcile.have, 0);
  });
});
