// Answers read in pieces (QueryOptions.maxBytes, EventFrames.cut): read piece after piece the way
// the relay's REQ handler does (each piece's `cut.rest` then the filters after it, what an earlier
// piece sent left out), an answer is exactly the whole answer, for every plan (time-ordered scans
// with ties at one created_at, the lookup plans by id and by address, several filters), and no
// piece reads past its bytes by more than one event.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { NostrEvent } from '../../src/nostr/event.js';
import type { Filter } from '../../src/nostr/filter.js';
import { frameCount, frameJson, NO_FRAMING, releaseFrames, type EventFrames } from '../../src/nostr/frames.js';
import { frameId } from '../../src/nostr/frame-heads.js';
import type { EventStore } from '../../src/store/types.js';
import { put, rng, withStore } from './helpers.js';

const DEFAULT = 40;
const MAX = 200;

/** The whole answer's ids, and the answer read in pieces of `maxBytes` (ids in the order sent, the pieces' sizes). */
async function readInPieces(s: EventStore, filters: Filter[], maxBytes: number): Promise<{ ids: string[]; pieces: number[]; largest: number }> {
  const ids: string[] = [];
  const sent = new Set<string>();
  const pieces: number[] = [];
  let largest = 0;
  let fs = filters;
  for (let guard = 0; guard < 10_000; guard++) {
    const fr: EventFrames = await s.queryFrames(fs, { defaultLimit: DEFAULT, maxLimit: MAX, maxBytes }, NO_FRAMING);
    let bytes = 0;
    for (let i = 0; i < frameCount(fr); i++) {
      const json = frameJson(fr, i);
      largest = Math.max(largest, json.length);
      bytes += json.length;
      const id = frameId(fr, i);
      assert.equal(id, (JSON.parse(json) as NostrEvent).id, 'frameId reads the id');
      if (sent.has(id)) continue;
      sent.add(id);
      ids.push(id);
    }
    pieces.push(bytes);
    const cut = fr.cut;
    releaseFrames(fr);
    if (!cut) return { ids, pieces, largest };
    assert.ok(frameCount(fr) > 0, 'a cut piece sent at least one event');
    fs = [cut.rest, ...fs.slice(cut.filter + 1)];
  }
  throw new Error('no end of pieces');
}

test('an answer read in pieces is the whole answer, for every plan and several filters, each piece within its bytes and one event', () =>
  withStore(
    async (s) => {
      const seed = Number(process.env.STORE_SEED ?? 20261207);
      const r = rng(seed);
      const int = (n: number): number => Math.floor(r() * n);
      const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;
      const hexr = (chars: number): string => Array.from({ length: chars }, () => '0123456789abcdef'[int(16)]).join('');
      const authors = Array.from({ length: 30 }, () => hexr(64));
      const kinds = [1, 1, 1, 7, 0, 3, 10002, 30023];
      const all: NostrEvent[] = [];
      let pending: Array<Promise<unknown>> = [];
      for (let i = 0; i < 2500; i++) {
        const kind = pick(kinds);
        const tags: string[][] = [];
        if (int(2)) tags.push(['t', pick(['a', 'b', 'c'])]);
        if (kind === 3 || int(3) === 0) for (let j = 0, n = 1 + int(5); j < n; j++) tags.push(['p', pick(authors)]);
        if (kind === 30023) tags.push(['d', pick(['x', 'y', ''])]);
        const e: NostrEvent = {
          id: hexr(64), pubkey: pick(authors), created_at: 1_000_000 + int(120), // many ties
          kind, tags, content: 'c'.repeat(int(3) === 0 ? int(3000) : int(200)), sig: hexr(128),
        };
        all.push(e);
        pending.push(put(s, e));
        if (pending.length >= 200) { await Promise.all(pending); pending = []; }
      }
      await Promise.all(pending);

      const randomFilter = (): Filter => {
        const c = int(6);
        if (c === 0) return { ids: Array.from({ length: 1 + int(60) }, () => pick(all).id) };
        if (c === 1) return { authors: Array.from({ length: 1 + int(30) }, () => pick(authors)), kinds: pick([[0], [3], [0, 3, 10002], [10002]]) };
        if (c === 2) return { authors: Array.from({ length: 1 + int(10) }, () => pick(authors)), kinds: [30023], tags: [['d', ['x', 'y']]] };
        if (c === 3) return { kinds: [3], tags: [['p', [pick(authors)]]], limit: 1 + int(MAX) };
        const f: Filter = {};
        if (int(2)) f.kinds = [pick(kinds)];
        if (int(3) === 0) f.authors = [pick(authors), pick(authors)];
        if (int(3) === 0) f.tags = [['t', [pick(['a', 'b'])]]];
        if (int(3) === 0) f.until = 1_000_000 + int(120);
        if (int(3) === 0) f.since = 1_000_000 + int(60);
        f.limit = 1 + int(MAX);
        return f;
      };

      let cutAnswers = 0;
      for (let round = 0; round < 150; round++) {
        const filters = Array.from({ length: 1 + int(3) }, randomFilter);
        const whole = (await s.query(filters, { defaultLimit: DEFAULT, maxLimit: MAX })).map((j) => (JSON.parse(j) as NostrEvent).id);
        const maxBytes = pick([1, 500, 2000, 8000, 40_000]);
        const got = await readInPieces(s, filters, maxBytes);
        const ctx = `seed ${seed} round ${round} maxBytes ${maxBytes} ${JSON.stringify(filters)}`;
        assert.deepEqual([...got.ids].sort(), [...whole].sort(), ctx);
        assert.equal(new Set(got.ids).size, got.ids.length, `nothing sent twice: ${ctx}`);
        // every piece stops at the event that reaches maxBytes: within maxBytes and one event
        for (const b of got.pieces) assert.ok(b < maxBytes + 2 * got.largest + 1, `piece of ${b} bytes: ${ctx}`);
        if (got.pieces.length > 1) cutAnswers++;
        // a single filter in one piece keeps the whole answer's order
        if (filters.length === 1 && got.pieces.length === 1) assert.deepEqual(got.ids, whole, `order: ${ctx}`);
      }
      assert.ok(cutAnswers > 50, `answers read in several pieces: ${cutAnswers}`);
    },
    { queryYieldEvery: 64 },
  ));

test('a continuation leaves out what its piece sent at the second it ended, however many events share it', () =>
  withStore(async (s) => {
    const pk = 'a'.repeat(64);
    // 60 events of ~1 KB at one created_at: pieces of 3 KB end inside the run again and again
    const run = Array.from({ length: 60 }, (_, i) => ({ id: i.toString(16).padStart(2, '0') + 'b'.repeat(62), pubkey: pk, created_at: 2_000_000, kind: 1, tags: [], content: 'x'.repeat(1000), sig: 'c'.repeat(128) }));
    for (const e of run) await put(s, e);
    const got = await readInPieces(s, [{ kinds: [1], limit: 50 }], 3000);
    assert.deepEqual(got.ids, run.map((e) => e.id).sort().slice(0, 50), 'the 50 lowest ids of the run, in order');
    assert.ok(got.pieces.length >= 15, `in pieces: ${got.pieces.length}`);
  }));
