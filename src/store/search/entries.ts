// The search index entries of one event. indexer.ts visitEntries calls this for every event it
// indexes or removes, so insert and delete list the same entries and cannot drift apart.
import { docKeys, encodeDoc, searchDoc } from '../../nostr/search.js';
import { serialKey } from '../keys.js';
import type { BinDb } from '../schema.js';
import { postingKey, type SearchDbs } from './schema.js';

type Visit = (db: BinDb, key: Buffer, value?: Buffer) => void;

/** Returns how many entries it visited (the writer bounds a transaction by entries written). */
export function visitSearchEntries(s: SearchDbs, ev: { kind: number; content?: string }, serial: number, visit: Visit): number {
  if (!s.kinds.has(ev.kind) || ev.content === undefined) return 0;
  const doc = searchDoc(ev.kind, ev.content);
  if (!doc) return 0;
  let n = 1;
  docKeys(doc, (cls, key) => {
    visit(s.keys, postingKey(cls, key, serial));
    n++;
  });
  visit(s.docs, serialKey(serial), Buffer.from(encodeDoc(doc), 'utf8'));
  return n;
}
