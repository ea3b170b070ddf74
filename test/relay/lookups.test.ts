// Bulk lookups: a filter that names what it wants (ids; authors with replaceable kinds; addressable
// kinds with #d) is answered whole, past max_limit, where a scan is clamped; a limit the client
// gives still applies, and one REQ returns at most max_limit x max_filters events in all.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startRelayProcess } from '../helpers/relay-process.js';
import { Author, Client } from '../helpers/client.js';

test('lookups by author, id and address are answered whole; scans stay clamped; the REQ has one bound', async () => {
  // max_limit 50 and 4 filters: a scan gets 50, one REQ at most 200 events
  const relay = await startRelayProcess({ env: { ORBWEAVER_LIMITS_MAX_LIMIT: '50', ORBWEAVER_LIMITS_DEFAULT_LIMIT: '50', ORBWEAVER_LIMITS_MAX_FILTERS: '4' } });
  try {
    const info = await (await fetch(relay.httpUrl, { headers: { Accept: 'application/nostr+json' } })).json() as { limitation: Record<string, number> };
    assert.equal(info.limitation.max_limit, 50);
    assert.equal(info.limitation.max_lookup_limit, 200, 'NIP-11 says how far a lookup goes');

    const authors = Array.from({ length: 120 }, () => new Author());
    const pub = await Client.open(relay.url);
    const lists = [];
    const notes = [];
    const articles = [];
    for (const [i, a] of authors.entries()) {
      const rl = a.sign({ kind: 10002, tags: [['r', `wss://relay${i}.example.com`]] });
      const note = a.sign({ kind: 1, content: `note ${i}` });
      const art = a.sign({ kind: 30023, tags: [['d', 'about']], content: `article ${i}` });
      for (const ev of [rl, note, art]) assert.equal((await pub.publish(ev)).ok, true);
      lists.push(rl);
      notes.push(note);
      articles.push(art);
    }
    const pks = authors.map((a) => a.pk);
    const reader = await Client.open(relay.url);
    const ids = (evs: { id: string }[]) => new Set(evs.map((e) => e.id));

    // the relay lists of 120 authors: all of them, not max_limit's 50
    const r1 = await reader.query({ kinds: [10002], authors: pks });
    assert.equal(r1.closed, undefined);
    assert.deepEqual(ids(r1.events), ids(lists), 'every relay list');
    // a limit the client gives still applies
    assert.equal((await reader.query({ kinds: [10002], authors: pks, limit: 7 })).events.length, 7);
    // a kind that is not replaceable makes it a scan: clamped to max_limit
    assert.equal((await reader.query({ kinds: [10002, 1], authors: pks })).events.length, 50, 'a scan is clamped');
    assert.equal((await reader.query({ kinds: [1], authors: pks, limit: 1000 })).events.length, 50, 'a scan limit past max_limit is clamped');
    // ids: all of them
    const r2 = await reader.query({ ids: notes.map((n) => n.id) });
    assert.deepEqual(ids(r2.events), ids(notes), 'every id');
    // addressable kinds with #d: one per author
    const r3 = await reader.query({ kinds: [30023], authors: pks, '#d': ['about'] });
    assert.deepEqual(ids(r3.events), ids(articles), 'every article');
    // without #d an addressable kind is a scan
    assert.equal((await reader.query({ kinds: [30023], authors: pks })).events.length, 50);
    // one REQ: 120 relay lists + 120 notes' ids, 240 > 200: the REQ's bound, newest first across both
    const r4 = await reader.query([{ kinds: [10002], authors: pks }, { ids: notes.map((n) => n.id) }]);
    assert.equal(r4.events.length, 200, 'one REQ returns at most max_limit x max_filters');
    // a scan takes its share first (50), then the lookups in order: 120 relay lists, 30 of the articles
    const r5 = await reader.query([{ kinds: [1] }, { kinds: [10002], authors: pks }, { kinds: [30023], authors: pks, '#d': ['about'] }]);
    assert.equal(r5.events.length, 200);
    assert.deepEqual([1, 10002, 30023].map((k) => r5.events.filter((e) => e.kind === k).length), [50, 120, 30]);
    reader.close();
    pub.close();
  } finally {
    await relay.cleanup();
  }
});
