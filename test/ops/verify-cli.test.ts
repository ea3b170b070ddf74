// orbweaver verify as an operator runs it: after an import the store verifies clean (exit 0); an
// option it does not take is refused with the one it meant (exit 2); a data directory a relay runs
// on is refused, with and without --repair (exit 2); a planted difference is reported (exit 1) and
// --repair rebuilds the indexes, after which verify is clean again; a repair that did not finish
// keeps the relay and every writer off the store until a repair does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/relay-process.js';
import { Author, now } from '../helpers/client.js';
import { openStore } from '../../src/store/index.js';
import { REPAIR_META_KEY, storeDbs } from '../../src/store/schema.js';
import { idKey } from '../../src/store/keys.js';

test('verify: clean after an import, unknown options and a running relay refused, a difference found and repaired', async () => {
  const dir = tempDir();
  const data = join(dir, 'db');
  try {
    const [a, b, c] = [new Author(), new Author(), new Author()];
    const t = now() - 1000;
    const events = [
      a.sign({ kind: 0, created_at: t, content: JSON.stringify({ name: 'alice' }) }),
      a.sign({ kind: 3, created_at: t, tags: [['p', b.pk], ['p', c.pk]] }),
      a.sign({ kind: 3, created_at: t + 1, tags: [['p', b.pk]] }),
      b.sign({ kind: 3, created_at: t + 2, tags: [['p', a.pk], ['p', c.pk]] }),
      c.sign({ kind: 10000, created_at: t + 3, tags: [['p', b.pk]] }),
      ...Array.from({ length: 20 }, (_, i) => b.sign({ created_at: t + 10 + i, content: `note ${i}`, tags: [['t', 'test'], ['p', a.pk]] })),
    ];
    const reply = c.sign({ kind: 7, created_at: t + 50, content: '+', tags: [['e', events[5]!.id], ['p', b.pk]] });
    events.push(reply);
    const file = join(dir, 'in.jsonl');
    writeFileSync(file, events.map((e) => JSON.stringify(e)).join('\n') + '\n');
    const imp = runCli(['import', '--data', data, file]);
    assert.equal(imp.status, 0, imp.stderr);

    const v = runCli(['verify', '--data', data]);
    assert.equal(v.status, 0, v.stdout + v.stderr);
    assert.match(v.stdout, /clean: every derived index matches the 25 stored events/);
    assert.match(v.stdout, /^graph +4 +4 +0 +0 +0$/m, v.stdout); // a's current follow list (1), b's (2), c's mute list (1)
    const j = runCli(['verify', '--data', data, '--json']);
    assert.equal(j.status, 0, j.stderr);
    const report = JSON.parse(j.stdout);
    assert.equal(report.clean, true);
    assert.equal(report.events, 25);

    const bad = runCli(['verify', '--data', data, '--jsn']);
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /--jsn/);
    assert.match(bad.stderr, /--json/);
    const missing = runCli(['verify', '--data', join(dir, 'nope')]);
    assert.equal(missing.status, 2);
    assert.match(missing.stderr, /does not exist/);

    // a relay running on the data directory (its record, naming a live process): refused
    const record = join(data, 'relay.json');
    writeFileSync(record, JSON.stringify({ pid: process.pid, url: 'ws://127.0.0.1:1', httpUrl: 'http://127.0.0.1:1', script: '' }));
    for (const args of [['verify'], ['verify', '--repair']]) {
      const r = runCli([...args, '--data', data]);
      assert.equal(r.status, 2, r.stdout + r.stderr);
      assert.match(r.stderr, new RegExp(`the relay pid ${process.pid} \\(ws://127.0.0.1:1\\) is running on ${data}: stop it first`));
      assert.doesNotMatch(r.stderr, /\n +at /, 'no stack trace');
    }
    unlinkSync(record);

    // a difference: the reply's id entry gone
    const store = await openStore({ dir: data });
    store.env.transactionSync(() => storeDbs(store).id.removeSync(idKey(reply.id)));
    await store.close();
    const d = runCli(['verify', '--data', data]);
    assert.equal(d.status, 1, d.stdout + d.stderr);
    assert.match(d.stdout, /^id +24 +25 +1 +0 +0$/m);
    assert.match(d.stdout, new RegExp(`missing ${reply.id} +event ${reply.id.slice(0, 16)}… kind 7`));
    assert.match(d.stdout, /1 difference found .*orbweaver verify --repair/);

    const fix = runCli(['verify', '--data', data, '--repair']);
    assert.equal(fix.status, 0, fix.stdout + fix.stderr);
    assert.match(fix.stderr, /repair: indexed 25 events/);
    assert.match(fix.stdout, /clean: every derived index matches the 25 stored events/);
    const again = runCli(['verify', '--data', data, '--json']);
    assert.equal(again.status, 0, again.stdout);
    assert.equal(JSON.parse(again.stdout).clean, true);

    // a repair killed half way leaves its mark: nothing opens the store for writing until a repair finishes
    const half = await openStore({ dir: data });
    half.env.transactionSync(() => storeDbs(half).meta.putSync(REPAIR_META_KEY, '2026-11-27T10:00:00.000Z'));
    await half.close();
    const relay = runCli(['relay', '--port', '0', '--data', data]);
    assert.equal(relay.status, 1, relay.stderr);
    assert.match(relay.stderr, new RegExp(`the store in ${data} is half rebuilt: orbweaver verify --repair started at 2026-11-27T10:00:00.000Z and did not finish.*run orbweaver verify --repair --data ${data} again`));
    const more = runCli(['import', '--data', data, file]);
    assert.equal(more.status, 2, more.stderr);
    assert.match(more.stderr, /half rebuilt/);
    assert.doesNotMatch(more.stderr, /\n +at /, 'no stack trace');
    const still = runCli(['verify', '--data', data]);
    assert.equal(still.status, 1, still.stdout);
    assert.match(still.stdout, /repairInProgress/);
    const finish = runCli(['verify', '--data', data, '--repair']);
    assert.equal(finish.status, 0, finish.stdout + finish.stderr);
    const after = runCli(['import', '--data', data, file]);
    assert.equal(after.status, 0, after.stderr);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
