// The most trusted people's names, by rank: the postings of the search index come in key order
// ("luke", "luke a…", … "luke dashjr"), so a phase that reads trust.searchWindow of them misses a
// trusted person whose name comes after more than that many other matches. The rank pass lists
// its most trusted pubkeys (ranks.ts RANK_TOP_KEY, trust/pass.ts TOP_LISTED); each reader (the
// main thread and every query thread) keeps, per rank generation, their current profiles'
// searchable names under their first letters, best first. A search then also reads the most
// trusted matches of its first letters (scan.ts), checked against the store like any candidate.
import { nameItems } from '../../nostr/search.js';
import { addrKey, readSerial, serialKey } from '../keys.js';
import { RANK_TOP_KEY, type RankMeta } from '../ranks.js';
import type { Dbs } from '../schema.js';
import type { SearchDbs } from './schema.js';

/** Letters a name is listed under: its first 1..KEY_CHARS (a query's first KEY_CHARS finds it). */
export const KEY_CHARS = 4;

export interface TrustedNames {
  generation: number;
  /** serial of each listed person's profile, best first */
  serials: number[];
  /** the stored (encoded) search doc of each, scored with tierOf before any store read */
  docs: string[];
  /** first letters -> positions in serials, ascending (= most trusted first) */
  byPrefix: Map<string, number[]>;
}

/** The first `n` code points. */
export const lettersOf = (s: string, n: number): string => {
  let out = '';
  let k = 0;
  for (const ch of s) {
    if (k++ >= n) break;
    out += ch;
  }
  return out;
};

const built = new WeakMap<Dbs, TrustedNames>();

/** The names of the current pass's most trusted people (built once per rank generation and reader). */
export function trustedNames(dbs: Dbs, s: SearchDbs, meta: RankMeta): TrustedNames | null {
  const have = built.get(dbs);
  if (have && have.generation === meta.generation) return have;
  const top = dbs.meta.get(RANK_TOP_KEY) as Uint8Array | undefined;
  if (!top || top.length < 32) return null;
  const t: TrustedNames = { generation: meta.generation, serials: [], docs: [], byPrefix: new Map() };
  const list = (key: string, at: number) => {
    const l = t.byPrefix.get(key);
    if (!l) t.byPrefix.set(key, [at]);
    else if (l[l.length - 1] !== at) l.push(at);
  };
  for (let i = 0; i + 32 <= top.length; i += 32) {
    const pubkey = Buffer.from(top.buffer, top.byteOffset + i, 32).toString('hex');
    const a = dbs.addr.getBinary(addrKey(0, pubkey, ''));
    if (!a) continue;
    const serial = readSerial(a);
    const d = s.docs.getBinary(serialKey(serial));
    if (!d) continue;
    const doc = d.toString('utf8');
    const at = t.serials.length;
    t.serials.push(serial);
    t.docs.push(doc);
    // the whole fields and the name terms, each under its first letters
    for (const item of nameItems(doc)) {
      let key = '';
      let k = 0;
      for (const ch of item) {
        if (k++ >= KEY_CHARS) break;
        key += ch;
        list(key, at);
      }
    }
  }
  built.set(dbs, t);
  return t;
}
