// Randomized check against an oracle: nostr-tools' matchFilter over the events the store kept,
// sorted newest first / lower id first, each filter's limit applied, unioned and sorted again.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { matchFilter as oracleMatch, type Filter as NtFilter } from 'nostr-tools/filter';
import type { NostrEvent } from '../../src/nostr/event.js';
import type { Filter } from '../../src/nostr/filter.js';
import { expirationOf } from '../../src/nostr/kinds.js';
import { newestFirst, put, rng, withStore } from './helpers.js';


const NOW = Math.floor(Date.now() / 1000);
const QUERY_NOW = NOW + 1500;

test('randomized queries match a brute-force oracle (results, order, limits, count, iterate)', () =>
  withStore(
    async (s) => {
      const seed = Number(process.env.STORE_SEED ?? 20261103);
      const r = rng(seed);
      const int = (n: number): number => Math.floor(r() * n);
      const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)];
      const hexr = (chars: number): string => Array.from({ length: chars }, () => '0123456789abcdef'[int(16)]).join('');

      // 14 authors; two share their first 8 bytes (the pubkey indexes' key width)
      const authors = Array.from({ length: 14 }, () => hexr(64));
      authors[1] = authors[0].slice(0, 16) + hexr(48);
      const words = ['nostr', 'bitcoin', '', 'ü', 'x'.repeat(32), 'y'.repeat(33), 'https://example.com/a/long/url/value', 'a\ud800'];
      const kinds = [1, 1, 1, 1, 7, 6, 0, 3, 10002, 30023, 30023, 40, 1063, 5];
      const ids: string[] = [];
      const sent: NostrEvent[] = [];
      const live = new Map<string, NostrEvent>();

      const N = 3000;
      let pending: Array<Promise<void>> = [];
      for (let i = 0; i < N; i++) {
        const kind = pick(kinds);
        const tags: string[][] = [];
        const nt = int(5);
        for (let j = 0; j < nt; j++) {
          const c = int(7);
          if (c === 0 && ids.length) tags.push(['e', pick(ids), 'wss://r.example']);
          else if (c === 1) tags.push(['p', pick(authors)]);
          else if (c === 2) tags.push(['t', pick(words)]);
          else if (c === 3) tags.push(['d', pick(['a', 'b', ''])]);
          else if (c === 4) tags.push(['E', pick(['A', 'B'])]);
          else if (c === 5) tags.push(['title', 'long name, not indexed']);
          else tags.push(['t']);
        }
        if (int(10) === 0) tags.push(['expiration', String(NOW + 1000 + int(1000))]);
        const e: NostrEvent = {
          id: hexr(64),
          pubkey: pick(authors),
          created_at: 1_000_000 + int(400), // many ties
          kind,
          tags,
          content: `c${i}`,
          sig: hexr(128),
        };
        // a duplicate now and then
        const ev = int(50) === 0 && sent.length ? sent[int(sent.length)] : e;
        if (ev === e) ids.push(e.id);
        sent.push(ev);
        pending.push(
          put(s, ev).then((res) => {
            if (res.status === 'stored') live.set(ev.id, ev);
            for (const id of res.removed ?? []) live.delete(id);
          }),
        );
        // batches of random sizes, results applied in commit order
        if (pending.length >= 1 + int(200)) {
          await Promise.all(pending);
          pending = [];
        }
      }
      await Promise.all(pending);
      assert.equal(s.stats().events, live.size);

      const keep = [...live.values()];
      const randomFilter = (): Filter => {
        const f: Filter = {};
        if (int(6) === 0) {
          f.ids = Array.from({ length: 1 + int(4) }, () => {
            const id = int(4) === 0 ? hexr(64) : pick(ids);
            return int(2) ? id : id.slice(0, 1 + int(63));
          });
        }
        if (int(3) === 0) {
          f.authors = Array.from({ length: 1 + int(4) }, () => {
            const a = pick(authors);
            const c = int(4);
            return c === 0 ? a.slice(0, 1 + int(15)) : c === 1 ? a.slice(0, 16 + int(48)) : a;
          });
        }
        if (int(2) === 0) f.kinds = [...new Set(Array.from({ length: 1 + int(3) }, () => pick(kinds)))];
        if (int(3) === 0) {
          f.tags = [];
          const names = ['e', 'p', 't', 'd', 'E'];
          for (let k = 0, n = 1 + int(2); k < n; k++) {
            const name = pick(names);
            if (f.tags.some(([x]) => x === name)) continue;
            const vals =
              name === 'e' ? [pick(ids), pick(ids)] : name === 'p' ? [pick(authors)] : name === 't' ? [pick(words), pick(words)] : name === 'd' ? [pick(['a', 'b', ''])] : ['A'];
            f.tags.push([name, [...new Set(vals)]]);
          }
        }
        if (int(3) === 0) f.since = 1_000_000 + int(400);
        if (int(3) === 0) f.until = 1_000_000 + 1 + int(400);
        if (int(4) === 0) f.kinds = int(2) ? [] : f.kinds;
        if (int(3) > 0) f.limit = int(4) === 0 ? 0 : 1 + int(60);
        return f;
      };

      const toOracle = (f: Filter): NtFilter => {
        // nostr-tools matches ids/authors exactly: expand our prefixes to the full values they cover.
        const o: NtFilter = {};
        if (f.ids) o.ids = keep.map((e) => e.id).filter((id) => f.ids!.some((p) => id.startsWith(p)));
        if (f.authors) o.authors = authors.filter((a) => f.authors!.some((p) => a.startsWith(p)));
        if (f.kinds) o.kinds = f.kinds;
        if (f.since !== undefined) o.since = f.since;
        if (f.until !== undefined) o.until = f.until;
        for (const [name, values] of f.tags ?? []) o[`#${name}`] = values;
        return o;
      };
      const DEFAULT = 40;
      const MAX = 50;
      const notExpired = (e: NostrEvent): boolean => {
        const x = expirationOf(e);
        return x === null || x > QUERY_NOW;
      };
      const brute = (f: Filter): NostrEvent[] => {
        if (f.ids?.length === 0 || f.authors?.length === 0 || f.kinds?.length === 0) return [];
        const o = toOracle(f);
        return keep.filter((e) => notExpired(e) && oracleMatch(o, e)).sort(newestFirst);
      };

      for (let round = 0; round < 400; round++) {
        const filters = Array.from({ length: 1 + int(3) }, randomFilter);
        const expected = new Map<string, NostrEvent>();
        for (const f of filters) for (const e of brute(f).slice(0, Math.min(f.limit ?? DEFAULT, MAX))) expected.set(e.id, e);
        const want = [...expected.values()].sort(newestFirst).map((e) => e.id);
        const got = (await s.query(filters, { defaultLimit: DEFAULT, maxLimit: MAX, now: QUERY_NOW })).map((j) => (JSON.parse(j) as NostrEvent).id);
        const ctx = `seed ${seed} round ${round} ${JSON.stringify(filters)}`;
        assert.deepEqual(got, want, ctx);

        const all = new Set<string>();
        for (const f of filters) for (const e of brute(f)) all.add(e.id);
        assert.equal(await s.count(filters, { now: QUERY_NOW }), all.size, `count ${ctx}`);

        if (round % 10 === 0) {
          const it: string[] = [];
          for await (const j of s.iterate(filters[0], { now: QUERY_NOW })) it.push((JSON.parse(j) as NostrEvent).id);
          assert.deepEqual(it, brute(filters[0]).map((e) => e.id), `iterate ${ctx}`);
        }
      }
    },
    { queryYieldEvery: 64 },
  ));
