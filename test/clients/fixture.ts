// What every client-library test (test/clients/*.test.ts) shares: a relay started with the default
// settings, the events a library publishes and reads back, the answers it must get (exact ids in
// NIP-01 order), and a watch on what the library prints. Each library has its own test file, so one
// that hangs or leaves timers behind holds up only itself.
import assert from 'node:assert/strict';
import { inspect } from 'node:util';
import { Author, Client, now } from '../helpers/client.js';
import type { NostrEvent } from '../../src/nostr/event.js';

/** Upper bound of any one wait on a library (a hung library fails the test instead of holding it up). */
export const WAIT_MS = 15_000;

/** Resolves with `p`, or rejects once `ms` passed: bounds a wait, asserts nothing about time. */
export function within<T>(p: Promise<T>, what: string, ms = WAIT_MS): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => { timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms); }),
  ]);
}

/** The events one library publishes: three notes with a topic tag, a profile to search for, one live note. */
export interface Corpus {
  author: Author;
  /** a `t` tag value no other test uses */
  topic: string;
  /** kind 1, oldest first */
  notes: NostrEvent[];
  /** kind 0 whose name holds `word` (search.kinds indexes kind 0 by default) */
  profile: NostrEvent;
  word: string;
  /** kind 1 published while a live subscription is open */
  live(): NostrEvent;
}

export function corpus(label: string): Corpus {
  const author = new Author();
  const rand = Math.random().toString(36).slice(2, 10);
  const topic = `orbweaver-${label}-${rand}`;
  const word = `weaver${rand}`;
  const t = now() - 100;
  const notes = [0, 1, 2].map((i) => author.sign({ kind: 1, created_at: t + i * 10, tags: [['t', topic]], content: `${label} note ${i}` }));
  const profile = author.sign({ kind: 0, created_at: t, content: JSON.stringify({ name: `${label} ${word}`, about: `a test profile of the ${label} client test` }) });
  return {
    author, topic, notes, profile, word,
    live: () => author.sign({ kind: 1, tags: [['t', topic]], content: `${label} live note` }),
  };
}

/** Ids newest first (NIP-01 order: created_at descending, then id ascending). */
export const newestFirst = (evs: Array<{ id: string; created_at: number }>): string[] =>
  [...evs].sort((a, b) => b.created_at - a.created_at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)).map((e) => e.id);

/** Ids in the order given, each once, for results a library does not order. */
export const sortedIds = (evs: Array<{ id: string }>): string[] => evs.map((e) => e.id).sort();

/**
 * What the library prints through console.error/warn while `fn` runs (nostr-fetch printed
 * "unsupported R2C message type: AUTH" for the challenge sent on connect). Printing is recorded,
 * not passed on.
 */
export class ConsoleWatch {
  readonly lines: string[] = [];
  private saved = { error: console.error, warn: console.warn };
  start(): this {
    const record = (level: string) => (...args: unknown[]) => { this.lines.push(`${level}: ${args.map((a) => (typeof a === 'string' ? a : inspect(a, { depth: 2 }))).join(' ')}`); };
    console.error = record('error');
    console.warn = record('warn');
    return this;
  }
  stop(): void {
    console.error = this.saved.error;
    console.warn = this.saved.warn;
  }
  /** Leaves out lines matching `re`: a library's known noise that has nothing to do with the relay (say why where it is called). */
  ignore(re: RegExp): void {
    for (let i = this.lines.length - 1; i >= 0; i--) if (re.test(this.lines[i]!)) this.lines.splice(i, 1);
  }
  assertQuiet(what: string): void {
    assert.deepEqual(this.lines, [], `${what} printed nothing`);
  }
}

/** Fails with the ids that differ, not only the count. */
export function sameIds(actual: string[], expected: string[], what: string): void {
  assert.deepEqual(actual, expected, what);
}

/**
 * Ends this test file's process soon after its last `after` hook. Some libraries leave timers
 * running once their work is done (@welshman/net's NIP-77 diff sleeps its 30 s fallback out, NDK's
 * sync keeps 5-10 s fetch timers): the results are reported by then, and waiting them out would
 * only hold a slot of the test run. Call it last in the file's `after`, once the relay is cleaned up.
 */
export function exitSoon(): void {
  setTimeout(() => process.exit(), 500).unref();
}

/** A DM between two new authors, published by a plain client: what a stranger must not read back */
export async function publishedDm(url: string): Promise<{ alice: Author; bob: Author; dm: NostrEvent }> {
  const alice = new Author();
  const bob = new Author();
  const w = await Client.open(url);
  const dm = alice.sign({ kind: 4, tags: [['p', bob.pk]], content: 'for bob?iv=abc' });
  assert.equal((await w.publish(dm)).ok, true);
  w.close();
  return { alice, bob, dm };
}
