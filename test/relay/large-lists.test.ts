// The network's largest follow lists (issue 77): a follow list of 5,000 people is ~350 KB, past
// limits.maxEventBytes (64 KB), maxEventTags (2,000) and maxMessageLength (128 KB). Lists (kinds 3
// and 10000-19999) have limits of their own (maxListEventBytes 1 MiB, maxListEventTags 20,000),
// an EVENT message may carry one, and other events and messages keep theirs. Tried as a client
// would, and through `orbweaver import`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startRelayProcess, tempDir, type RelayProcess } from '../helpers/relay-process.js';
import { runCliAsync } from '../helpers/cli.js';
import { Author, Client, now } from '../helpers/client.js';
import { fakeHex } from '../../bench/lib/events.js';

let relay: RelayProcess;
// defaults, but for the byte rate per address (1 MiB/s, bursts of 2 s): these tests send ~4 MB of
// lists in a second, which a person publishing their one follow list never does
before(async () => { relay = await startRelayProcess({ env: { ORBWEAVER_RATE_LIMITS_BYTES_PER_IP: '0' } }); });
after(async () => { await relay.cleanup(); });

const follows = (n: number, salt: string): string[][] => Array.from({ length: n }, (_, i) => ['p', fakeHex('large-lists', salt, i)]);

test('NIP-11 says the largest message and tag count any event may have (a list\'s)', async () => {
  const info = (await (await fetch(relay.httpUrl, { headers: { Accept: 'application/nostr+json' } })).json()) as { limitation: Record<string, number> };
  assert.equal(info.limitation.max_message_length, 1024 * 1024 + 4096);
  assert.equal(info.limitation.max_event_tags, 20_000);
});

test('a follow list of 5,000 people (~350 KB) is accepted from a client, read back and counted; other events keep their limits', async () => {
  const c = await Client.open(relay.url);
  try {
    const a = new Author();
    const list = a.sign({ kind: 3, created_at: now() - 10, tags: follows(5000, a.pk) });
    assert.ok(JSON.stringify(list).length > 350_000, `${JSON.stringify(list).length} bytes`);
    const ok = await c.publish(list);
    assert.equal(ok.ok, true, ok.message);
    const back = await c.query({ kinds: [3], authors: [a.pk] });
    assert.deepEqual(back.events.map((e) => e.id), [list.id]);
    assert.equal(back.events[0]!.tags.length, 5000);
    // the follow graph holds it: one of the 5,000 has its follower
    const followee = list.tags[4321]![1]!;
    const followers = await c.query({ kinds: [3], '#p': [followee] });
    assert.deepEqual(followers.events.map((e) => e.id), [list.id]);
    // a mute list is a list too
    const mutes = a.sign({ kind: 10000, tags: follows(3000, 'mute') });
    assert.equal((await c.publish(mutes)).ok, true);

    // a note is not a list: 2,000 tags and 64 KB, as before
    const note = await c.publish(a.sign({ kind: 1, tags: Array.from({ length: 2001 }, (_, i) => ['t', String(i)]) }));
    assert.equal(note.ok, false);
    assert.match(note.message, /^invalid: more than 2000 tags/);
    const big = await c.publish(a.sign({ kind: 1, tags: follows(1000, 'note2'), content: 'x'.repeat(60_000) }));
    assert.equal(big.ok, false);
    assert.match(big.message, /^invalid: event is larger than 65536 bytes/);
    // a list past its own limits: tags, bytes, and an EVENT message past a list's size (a NOTICE:
    // refused before it is read)
    const many = await c.publish(a.sign({ kind: 3, tags: Array.from({ length: 20_001 }, (_, i) => ['t', String(i)]) }));
    assert.equal(many.ok, false);
    assert.match(many.message, /^invalid: more than 20000 tags/);
    // 1,050,000 bytes or so: past the list limit, within an EVENT message's
    const large = await c.publish(a.sign({ kind: 3, tags: follows(14_000, 'large'), content: 'x'.repeat(28_000) }));
    assert.equal(large.ok, false);
    assert.match(large.message, /^invalid: list is larger than 1048576 bytes/);
    c.send(['EVENT', a.sign({ kind: 3, tags: follows(15_000, 'huge') })]);
    assert.match((await c.next((m) => m[0] === 'NOTICE', 5000, 'NOTICE'))[1] as string, /^invalid: message larger than 1052672 bytes/);
    assert.equal((await c.publish(a.sign({ kind: 1 }))).ok, true, 'the connection goes on');
  } finally {
    c.close();
  }
});

test('`orbweaver import` takes a follow list of 5,000 people as well', async () => {
  const dir = tempDir();
  const a = new Author();
  const list = a.sign({ kind: 3, created_at: now() - 10, tags: follows(5000, 'import') });
  const file = join(dir, 'lists.jsonl');
  writeFileSync(file, JSON.stringify(list) + '\n');
  const data = join(dir, 'data');
  const imp = await runCliAsync(['import', '--data', data, '--json', file]);
  assert.equal(imp.status, 0, imp.stderr);
  const report = JSON.parse(imp.stdout) as Record<string, number>;
  assert.equal(report.stored, 1, imp.stdout);
  const r = await startRelayProcess({ dataDir: data });
  const c = await Client.open(r.url);
  try {
    assert.deepEqual((await c.query({ kinds: [3], authors: [a.pk] })).events.map((e) => e.id), [list.id]);
  } finally {
    c.close();
    await r.cleanup();
  }
});
