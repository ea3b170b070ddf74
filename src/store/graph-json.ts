// Which lists and tags the follow graph holds (graph.ts), and a list of a graph kind read out of
// its canonical JSON without parsing its tags. Pure: no I/O, no LMDB, so the signature-check
// threads load it too (ingest/verify-worker.ts).
import { canonicalFields, type NostrEvent } from '../nostr/event.js';
import { isHex64 } from '../nostr/hex.js';

/** The list kinds whose `p` tags are the graph (docs/storage.md, "The follow graph"). */
export const GRAPH_KINDS: readonly number[] = [3, 10000];
const GRAPH_KIND_SET = new Set(GRAPH_KINDS);
export const isGraphKind = (kind: number): boolean => GRAPH_KIND_SET.has(kind);
/** Whether a tag of an event of a graph kind is held by the graph, not the tag+kind index: a `p` naming a pubkey. */
export const isGraphTag = (t: string[]): boolean => t.length >= 2 && t[0] === 'p' && isHex64(t[1]!);

const QUOTE = 0x22;
const COMMA = 0x2c;
const BACKSLASH = 0x5c;
const BRACKET_OPEN = 0x5b;
const BRACKET_CLOSE = 0x5d;

/**
 * The members of a list of a graph kind whose every tag is a graph tag (graph.ts GraphList.only),
 * read out of its canonical JSON: the distinct pubkeys in tag order, joined (64 hex digits each),
 * exactly graphList's members. null for every other event, and for JSON this reader does not
 * follow (a tag string with an escape, another layout): the writer then parses the event whole.
 *
 * A signature-check thread calls it for each valid event (verify-worker.ts), so that the store's
 * writer thread, the relay's limit when publishing the directory, parses no follow list's tags:
 * that parse and graphList's checks were ~15% of the writer (docs/storage.md, "Follow lists read
 * where their signatures are checked").
 */
export function graphOnlyMembers(json: string): string | null {
  const at = canonicalFields(json);
  if (!at || !isGraphKind(Number(json.slice(at.kindAt + 8, at.tagsAt)))) return null;
  let i = at.tagsAt + 8; // after ,"tags":
  if (json.charCodeAt(i++) !== BRACKET_OPEN) return null;
  const members: string[] = [];
  const seen = new Set<string>();
  if (json.charCodeAt(i) === BRACKET_CLOSE) i++;
  else {
    for (;;) {
      // ["p","<64 lowercase hex>" then any strings without an escape, then ]
      if (!json.startsWith('["p","', i)) return null;
      i += 6;
      const v = json.slice(i, i + 64);
      if (!isHex64(v) || json.charCodeAt(i + 64) !== QUOTE) return null;
      i += 65;
      while (json.charCodeAt(i) === COMMA) {
        if (json.charCodeAt(i + 1) !== QUOTE) return null;
        i += 2;
        // to the closing quote; NaN: the JSON ended
        for (let c = json.charCodeAt(i); c !== QUOTE; c = json.charCodeAt(++i)) if (c === BACKSLASH || Number.isNaN(c)) return null;
        i++;
      }
      if (json.charCodeAt(i++) !== BRACKET_CLOSE) return null;
      if (!seen.has(v)) {
        seen.add(v);
        members.push(v);
      }
      const c = json.charCodeAt(i++);
      if (c === BRACKET_CLOSE) break;
      if (c !== COMMA) return null;
    }
  }
  return i === at.contentAt ? members.join('') : null;
}

/** graphOnlyMembers' joined members, one string each. */
export function splitMembers(joined: string): string[] {
  const out: string[] = new Array(joined.length / 64);
  for (let k = 0; k < out.length; k++) out[k] = joined.slice(64 * k, 64 * k + 64);
  return out;
}

/**
 * A list graphOnlyMembers read, parsed with its tags left out: every field as JSON.parse gives it,
 * `tags` empty. Such a list has no tag entries, no expiration and no `d` (all its tags are `p`
 * tags), so its members stand for its tags in the store's writer (txn.ts applyEvent).
 */
export function parseWithoutTags(json: string): NostrEvent {
  const at = canonicalFields(json);
  if (!at) throw new Error('not the canonical JSON of an event');
  return JSON.parse(json.slice(0, at.tagsAt + 8) + '[]' + json.slice(at.contentAt)) as NostrEvent;
}
