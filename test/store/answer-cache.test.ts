// Answers kept (store/answer-cache.ts) against the scan they stand for. A store that keeps answers
// takes the network's follow-list habits (re-publications unchanged, a follow swapped, new lists,
// lists deleted by NIP-09 and by an operator's ban, lists that expire, notes that mention the same
// people, an older version arriving late) in rounds; after each round every REQ of a fixed set is
// asked twice through the store and compared with a scan of the same store that keeps nothing.
// The answers must be identical, and the kept ones must have been given (hits) and dropped (the
// store changed under them) many times, or the test proves nothing. Replay with ANSWER_SEED=<seed>.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { NostrEvent } from '../../src/nostr/event.js';
import type { Filter } from '../../src/nostr/filter.js';
import { frameAt, framesToJson, lentFrame, releaseFrames, type EventFrames } from '../../src/nostr/frames.js';
import { eventFraming, eventMessage } from '../../src/nostr/messages.js';
import type { AnswerCache } from '../../src/store/answer-cache.js';
import { lastRemoval, removalsSince, REMOVAL_LOG_KEEP } from '../../src/store/removal-log.js';
import { runQuery } from '../../src/store/query.js';
import { storeDbs } from '../../src/store/schema.js';
import type { EventStore } from '../../src/store/types.js';
import { hex, put, rng, withStore } from './helpers.js';

const SEED = Number(process.env.ANSWER_SEED ?? 20261130);
const T0 = 1_700_000_000;
const NOW = Math.floor(Date.now() / 1000) + 60; // the store refuses an event that has expired by its own clock
const SIG = 'cd'.repeat(64);

const answersOf = (s: EventStore): AnswerCache => (s as unknown as { opts: { answers: AnswerCache } }).opts.answers;

test('kept answers are exactly the scan of the same store, through replacements, deletions, bans and expirations', () =>
  withStore(
    async (s) => {
      const r = rng(SEED);
      const int = (n: number): number => Math.floor(r() * n);
      const followees = Array.from({ length: 12 }, () => hex());
      const authors = Array.from({ length: 260 }, () => hex());
      const lists = new Map<string, Set<string>>();
      const current = new Map<string, NostrEvent>();
      let clock = T0;

      const followList = (author: string, members: Set<string>, extra: string[][] = []): NostrEvent => ({
        id: hex(),
        pubkey: author,
        created_at: ++clock,
        kind: 3,
        // ~40 padding follows make each list ~3 KB: a followers answer is well over the 64 KiB kept
        tags: [...[...members].map((p) => ['p', p]), ...extra],
        content: int(3) === 0 ? '{"wss://r.example":{"read":true,"write":true}}' : '',
        sig: SIG,
      });
      const publish = async (e: NostrEvent): Promise<void> => {
        const res = await put(s, e);
        if (res.status === 'stored' || res.status === 'replaced') current.set(e.pubkey, e);
      };
      for (const a of authors) {
        const m = new Set<string>();
        for (const f of followees) if (r() < 0.6) m.add(f);
        for (let i = 0; i < 40; i++) m.add(hex());
        lists.set(a, m);
        await publish(followList(a, m));
      }

      const queries: Filter[][] = [
        ...followees.slice(0, 6).map((p) => [{ kinds: [3], tags: [['p', [p]]] as Array<[string, string[]]>, limit: 100 }]),
        [{ kinds: [3], tags: [['p', [followees[0]!, followees[1]!]]], limit: 150 }],
        [{ tags: [['p', [followees[2]!]]], limit: 120 }],
        [{ kinds: [3], tags: [['p', [followees[3]!]]], limit: 60 }, { kinds: [3], authors: authors.slice(0, 40), limit: 80 }],
        [{ kinds: [3, 1], tags: [['p', [followees[4]!]]], since: T0 + 100, limit: 90 }],
      ];
      const dbs = storeDbs(s);
      let now = NOW;
      // Lent answers (QueryOptions.lend) are held for a round before they are given back, while
      // the store changes and answers are dropped and kept again: what they hold must not change.
      let held: Array<{ frames: EventFrames; sub: string; want: string[] }> = [];
      const messagesOf = (f: EventFrames, sub: string): string[] => {
        const { prefix } = eventFraming(sub);
        return Array.from({ length: f.ends.length }, (_, i) => Buffer.from(f.lent !== undefined ? lentFrame(f, i, prefix) : frameAt(f, i)).toString('utf8'));
      };
      const check = async (round: number): Promise<void> => {
        const holding: typeof held = [];
        for (const [qi, q] of queries.entries()) {
          for (let twice = 0; twice < 2; twice++) {
            const got = await s.query(q, { defaultLimit: 500, maxLimit: 500, now });
            const want = framesToJson(await runQuery({ dbs, now, yieldEvery: 2000 }, q, 500, 500));
            assert.deepEqual(got.map((j) => (JSON.parse(j) as NostrEvent).id), want.map((j) => (JSON.parse(j) as NostrEvent).id), `round ${round}, query ${JSON.stringify(q)} (seed ${SEED})`);
            assert.deepEqual(got, want);
            // as a REQ asks: frames lent when kept, in the REQ's framing (subscription ids of several lengths)
            const sub = `r${round}q${qi}t${twice}${'x'.repeat(int(40))}`;
            const lent = await s.queryFrames(q, { defaultLimit: 500, maxLimit: 500, now, lend: true }, eventFraming(sub));
            const wantMessages = want.map((j) => eventMessage(sub, j));
            assert.deepEqual(messagesOf(lent, sub), wantMessages, `round ${round}, lent, query ${JSON.stringify(q)} (seed ${SEED})`);
            if (lent.lent !== undefined) lentSeen++;
            if (twice === 0) holding.push({ frames: lent, sub, want: wantMessages });
            else releaseFrames(lent);
          }
        }
        // last round's lent answers, given back only now: unchanged by the dropping and keeping since
        for (const h of held) {
          assert.deepEqual(messagesOf(h.frames, h.sub), h.want, `round ${round}: an answer lent a round ago changed under its REQ (seed ${SEED})`);
          releaseFrames(h.frames);
        }
        held = holding;
      };
      let lentSeen = 0;

      await check(0);
      for (let round = 1; round <= 60; round++) {
        const n = 1 + int(4);
        for (let i = 0; i < n; i++) {
          const a = authors[int(authors.length)]!;
          const m = lists.get(a)!;
          switch (int(9)) {
            case 0: // re-published unchanged
            case 1:
              await publish(followList(a, m));
              break;
            case 2: { // a follow swapped
              const f = followees[int(followees.length)]!;
              if (m.has(f)) m.delete(f);
              else m.add(f);
              await publish(followList(a, m));
              break;
            }
            case 3: { // deleted by its author (NIP-09), then a new list later
              const cur = current.get(a);
              if (cur) {
                await put(s, { id: hex(), pubkey: a, created_at: ++clock, kind: 5, tags: [['e', cur.id]], content: '', sig: SIG });
                current.delete(a);
              }
              break;
            }
            case 4: { // an operator's ban of the current list
              const cur = current.get(a);
              if (cur) {
                await s.remove(cur.id);
                current.delete(a);
              }
              break;
            }
            case 5: // a list that expires soon
              await publish(followList(a, m, [['expiration', String(now + 1 + int(3))]]));
              break;
            case 6: // a note that mentions followees (kind 1: one query asks for it)
              await put(s, { id: hex(), pubkey: a, created_at: ++clock, kind: 1, tags: [['p', followees[int(followees.length)]!]], content: 'gm', sig: SIG });
              break;
            case 7: { // an older version arriving late: refused, nothing changes
              const old = followList(a, m);
              old.created_at = T0 - 1000 - int(1000);
              await put(s, old);
              break;
            }
            default: // time passes (expirations)
              now += int(3);
          }
        }
        await check(round);
      }
      // an answer kept with a list in it that expires, and then only time passes
      const a = authors[0]!;
      await publish(followList(a, new Set([...lists.get(a)!, ...followees]), [['expiration', String(now + 5)]]));
      await check(61);
      const keptBefore = answersOf(s).stats.hits;
      await check(62);
      assert.ok(answersOf(s).stats.hits > keptBefore, 'answers with the expiring list were given');
      now += 10;
      await check(63);
      const st = answersOf(s).stats;
      assert.ok(st.hits >= 200, `kept answers given ${st.hits} times`);
      assert.ok(st.dropped >= 50, `kept answers dropped ${st.dropped} times`);
      assert.ok(st.kept >= 50, `answers kept ${st.kept} times`);
      assert.ok(lastRemoval(dbs.removed) > 0, 'the removal log has records');
      assert.ok(lentSeen >= 200, `kept answers lent ${lentSeen} times`);
      for (const h of held) releaseFrames(h.frames);
      assert.equal(answersOf(s).stats.lent, 0, 'every lent answer was given back');
    },
    { answerCacheBytes: 16 * 1024 ** 2 },
  ));

test('the removal log keeps its newest records, and an answer older than them is not given', () =>
  withStore(
    async (s) => {
      const dbs = storeDbs(s);
      const author = hex();
      const target = hex();
      const filler = Array.from({ length: 30 }, () => hex());
      const followers = Array.from({ length: 60 }, () => hex());
      for (const a of followers) await put(s, { id: hex(), pubkey: a, created_at: T0, kind: 3, tags: [['p', target], ...filler.map((p) => ['p', p])], content: '', sig: SIG });
      const q: Filter[] = [{ kinds: [3], tags: [['p', [target]]], limit: 100 }];
      await s.query(q, { defaultLimit: 500, maxLimit: 500 });
      await s.query(q, { defaultLimit: 500, maxLimit: 500 }); // asked twice: kept
      const cache = answersOf(s);
      assert.equal(cache.stats.kept, 1);
      // more transactions that remove something than the log keeps, none touching the answer
      let t = T0;
      for (let i = 0; i < REMOVAL_LOG_KEEP + 5; i++) await put(s, { id: hex(), pubkey: author, created_at: ++t, kind: 0, tags: [], content: `{"name":"n${i}"}`, sig: SIG });
      assert.ok(lastRemoval(dbs.removed) >= REMOVAL_LOG_KEEP);
      let records = 0;
      for (const _ of dbs.removed!.getKeys()) records++;
      assert.equal(records, REMOVAL_LOG_KEEP);
      const last = lastRemoval(dbs.removed);
      assert.equal(removalsSince(dbs.removed!, 0, last, () => false), 'missing', 'the oldest records are gone');
      let serials = 0;
      assert.equal(removalsSince(dbs.removed!, last - 10, last, () => (serials++, false)), 'complete');
      assert.equal(serials, 10, 'each of the last ten transactions replaced one profile');
      assert.equal(removalsSince(dbs.removed!, last - 10, last, () => true), 'stopped');
      const before = cache.stats.dropped;
      const got = await s.query(q, { defaultLimit: 500, maxLimit: 500 });
      assert.equal(got.length, 60);
      assert.equal(cache.stats.dropped, before + 1, 'an answer older than what the log holds is not given');
    },
    { answerCacheBytes: 16 * 1024 ** 2 },
  ));
