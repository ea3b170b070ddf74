// orbweaver import [file.jsonl]: events, one JSON object per line (strfry's and nak's JSONL; a
// ["EVENT", {...}] line is also taken), each verified and stored through the one ingest path
// (source 'import') with the relay's policies. Progress on stderr, a summary at the end.
// One writing process per store: while a relay owns the data directory (its record there, see
// src/app/owner.ts) the import is refused. Publishing over the network instead would make the
// operator's import a client's EVENT, under AUTH, rate limits and NIP-70, and the outcome would
// differ without a word; stopping the relay for the import keeps one meaning.
import { accessSync, constants, createReadStream, fstatSync, statSync } from 'node:fs';
import { createInterface } from 'node:readline';
import type { Config } from '../config.js';
import { openPipeline } from '../app/pipeline.js';
import { commandLogger } from '../lib/logger.js';
import type { MergeProgress } from '../store/spool.js';
import { describeOwner, liveOwner } from '../app/owner.js';
import { oldSpaceMb } from '../app/heap-limit.js';
import { procStatusBytes } from '../lib/proc-status.js';
import { fmt, rejectUnknown, takeFlag, UsageError } from './common.js';
import { takeSizes } from './import-heap.js';

export interface ImportSummary {
  /** the V8 old-space limit the import ran with, MB (importHeapMb, or the operator's own); null: node's default */
  oldSpaceMb: number | null;
  lines: number;
  stored: number;
  duplicate: number;
  /** older versions of replaceable events, events deleted by a stored kind 5, ephemeral kinds */
  notStored: Record<string, number>;
  /** every line not stored for a reason of its own (invalid ones included) */
  rejected: number;
  /** of those, the malformed lines and events whose id or signature is wrong (`invalid:`) */
  invalid: number;
  /** rejection message -> count */
  reasons: Record<string, number>;
  /** the first few bad lines: line number and reason */
  examples: Array<{ line: number; reason: string }>;
  seconds: number;
}

export const IMPORT_USAGE = `usage: orbweaver import [file.jsonl] [--json] [--strict] [--batch N] [--window N]
  reads events (one JSON per line) from the file or stdin and stores them through the relay's
  ingest path; summary on stderr (--json: also as JSON on stdout); --strict: exit 1 if any line was
  rejected; --batch: most events per write transaction (default 5000); --window: events in flight
  (default 3 x batch, and at most 64 MiB of them). Refused while a relay runs on the data
  directory: stop it first. Runs itself again with a V8 old space of 320 MB (more for a larger
  --window; --max-old-space-size in NODE_OPTIONS wins): the --json summary says which (oldSpaceMb).`;

/** index entries allowed per event of --batch: a follow list of 100 writes ~200 (tag entries and counters) */
const ENTRIES_PER_EVENT = 100;
/** At most this many bytes of JSON in flight besides the --window bound, so a file of large events (up to 64 KiB each) stays bounded too. */
const MAX_INFLIGHT_BYTES = 64 * 1024 * 1024;

/**
 * Refuses an input file that cannot be read, naming it and the fix, before anything is opened: the
 * read stream's own error came as an unhandled 'error' event with a stack trace (a missing file)
 * or after the store was opened (a directory).
 */
function checkInput(file: string): void {
  const fix = 'give the path of a JSONL file (one event per line), or pipe the events on standard input';
  let isDir = false;
  try {
    isDir = statSync(file).isDirectory();
    accessSync(file, constants.R_OK);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const what = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : (e as Error).message;
    throw new UsageError(`cannot read ${file}: ${what}; ${fix}`);
  }
  if (isDir) throw new UsageError(`${file} is a directory; ${fix}`);
}

/**
 * What the import holds back before a merge (store/spool.ts): follow edges of new lists (8 bytes
 * each, and their ids) and time and tag index keys (~10-45 bytes each), ~200 MB of arrays at most.
 * A merge of millions writes dozens of entries into each page it dirties, where the import's own
 * transactions wrote about one (../shared/perf/lmdb-page-cost: ~40 µs a key at 64,000 keys per
 * transaction, 6-10 µs at millions).
 */
const SPOOL = { edges: 4_000_000, indexBytes: 96 * 1024 * 1024 };

/**
 * Where the import's memory is, MB, for ORBWEAVER_LOG_LEVEL=debug: anonymous memory (Linux; the
 * resident set also counts the store's mapped file) less V8's heap and the array buffers is native
 * memory: LMDB's pages, malloc, the verification thread (docs/storage.md, "The staircase of native
 * memory").
 */
function memoryFigures(): Record<string, number> {
  const m = process.memoryUsage();
  const mb = (n: number) => Math.round(n / 2 ** 20);
  const anon = procStatusBytes('RssAnon');
  return { ...(anon !== null ? { anonMb: mb(anon) } : {}), heapMb: mb(m.heapTotal), heapUsedMb: mb(m.heapUsed), arrayBuffersMb: mb(m.arrayBuffers) };
}

export async function importCommand(config: Config, argv: string[]): Promise<number> {
  const args = [...argv];
  const json = takeFlag(args, '--json');
  const strict = takeFlag(args, '--strict');
  if (takeFlag(args, '--help')) { process.stdout.write(IMPORT_USAGE + '\n'); return 0; }
  const { batch, window } = takeSizes(args);
  const file = args.find((a) => !a.startsWith('-'));
  rejectUnknown(args.filter((a) => a !== file), ['--json', '--strict', '--batch', '--window', '--help'], 'import');
  if (file) checkInput(file);
  const owner = liveOwner(config.dataDir);
  if (owner) throw new UsageError(`${describeOwner(owner)} is running on ${config.dataDir}: stop it first (one writing process per store), or import into another data directory`);

  let total = 0;
  try { total = file ? statSync(file).size : fstatSync(0).isFile() ? fstatSync(0).size : 0; } catch { total = 0; }
  const input = file ? createReadStream(file) : process.stdin;

  // Signatures are checked on the relay's verification threads (verifyThreads, default 1), off the
  // import's main thread, where they were a fifth of its time: the first 100,000 directory events
  // take 44 s instead of 55 s, the 600,000 372 s instead of 404 s. (Before the store mapped
  // without read-ahead, the commits kept the other core busy and the thread made a deep import
  // slower: docs/storage.md, "One writer, one meaning".) ORBWEAVER_VERIFY_THREADS=0 checks inline.
  let merging: (p: MergeProgress) => void = () => {};
  const spool = { ...SPOOL, progress: (p: MergeProgress) => merging(p) };
  const logger = commandLogger(config);
  const pipeline = await openPipeline(config, logger, { batch: { maxBatch: batch, maxBatchEntries: batch * ENTRIES_PER_EVENT, maxBatchMs: 0 }, spool });
  const { ingest } = pipeline;

  const s: ImportSummary = { oldSpaceMb: oldSpaceMb(), lines: 0, stored: 0, duplicate: 0, notStored: {}, rejected: 0, invalid: 0, reasons: {}, examples: [], seconds: 0 };
  const t0 = Date.now();
  let bytes = 0;
  // On a terminal: one status line redrawn in place (with a bar when the input's size is known).
  // Into a pipe or a file (a log): a plain line every 5 s, no bar, no carriage returns, no escapes;
  // the summary is the last word.
  const tty = process.stderr.isTTY === true;
  let lastPrint = 0;
  const progress = (final = false) => {
    const now = Date.now();
    if (final ? !tty : now - lastPrint < (tty ? 200 : 5000)) return;
    lastPrint = now;
    const secs = Math.max(0.001, (now - t0) / 1000);
    const share = total > 0 ? Math.min(1, bytes / total) : null;
    const figures = `${fmt(s.lines)} lines, ${fmt(s.stored)} stored, ${fmt(s.duplicate)} duplicate, ${fmt(s.rejected)} rejected, ${fmt(Math.round(s.lines / secs))} lines/s`;
    if (tty) {
      const bar = share === null ? '' : `[${'#'.repeat(Math.round(share * 30)).padEnd(30, '.')}] ${(share * 100).toFixed(1)}% `;
      process.stderr.write(`\r${bar}${figures}\x1b[K${final ? '\n' : ''}`);
    } else {
      const read = share === null ? `${(bytes / 1e6).toFixed(1)} MB read` : `${(share * 100).toFixed(1)}% of ${(total / 1e6).toFixed(1)} MB read`;
      process.stderr.write(`import: ${read}, ${figures}\n`);
    }
    if (logger.isLevelEnabled('debug')) logger.debug({ lines: s.lines, ...memoryFigures() }, 'import memory');
  };

  // The follow edges held back are merged once, after the last line (docs/storage.md, "One merge
  // at the end"): minutes at millions of events, so that shows too, on the same cadence (its
  // first part at once).
  let mergeShown = false;
  merging = (m) => {
    const now = Date.now();
    if (mergeShown && now - lastPrint < (tty ? 200 : 5000)) return;
    mergeShown = true;
    lastPrint = now;
    const part = (n: number, of: number, what: string) => (of > 0 ? [`${fmt(n)} of ${fmt(of)} ${what} (${((n / of) * 100).toFixed(1)}%)`] : []);
    const figures = `merging what it held back: ${[...part(m.edges, m.ofEdges, 'follow edges'), ...part(m.entries, m.ofEntries, 'time and tag entries')].join(', ')}`;
    process.stderr.write(tty ? `\r${figures}\x1b[K` : `import: ${figures}\n`);
    if (logger.isLevelEnabled('debug')) logger.debug({ edges: m.edges, entries: m.entries, ...memoryFigures() }, 'import memory');
  };

  const reject = (lineNo: number, reason: string) => {
    s.rejected++;
    if (reason.startsWith('invalid:')) s.invalid++;
    s.reasons[reason] = (s.reasons[reason] ?? 0) + 1;
    // the first 20 lines rejected, in line order: answers can come back out of order (a line
    // refused before it is written answers before earlier lines waiting for their transaction),
    // so keep the 20 lowest line numbers seen
    s.examples.push({ line: lineNo, reason });
    s.examples.sort((a, b) => a.line - b.line);
    if (s.examples.length > 20) s.examples.pop();
  };

  const inflight = new Set<Promise<void>>();
  let inflightBytes = 0;
  const rl = createInterface({ input, crlfDelay: Infinity });
  try {
    let lineNo = 0;
    for await (const line of rl) {
      lineNo++;
      bytes += Buffer.byteLength(line) + 1;
      const text = line.trim();
      if (text === '') continue;
      s.lines++;
      let raw: unknown;
      try {
        raw = JSON.parse(text);
      } catch {
        reject(lineNo, 'invalid: line is not JSON');
        continue;
      }
      if (Array.isArray(raw) && raw[0] === 'EVENT') raw = raw[raw.length - 1];
      const n = lineNo;
      const size = text.length;
      inflightBytes += size;
      const p: Promise<void> = ingest(raw, { source: 'import' }).then((r) => {
        if (r.status === 'stored') s.stored++;
        else if (r.status === 'duplicate') s.duplicate++;
        else if (r.ok || r.status === 'replaced' || r.status === 'deleted') s.notStored[r.status] = (s.notStored[r.status] ?? 0) + 1;
        else reject(n, r.message.slice(0, 160));
      }, (e) => reject(n, `error: ${(e as Error).message}`)).finally(() => {
        inflight.delete(p);
        inflightBytes -= size;
      });
      inflight.add(p);
      while (inflight.size >= window || inflightBytes > MAX_INFLIGHT_BYTES) await Promise.race(inflight);
      progress();
    }
    await Promise.all(inflight);
  } finally {
    await Promise.all(inflight);
    await pipeline.close();
  }
  s.seconds = (Date.now() - t0) / 1000;
  progress(true);
  const out: string[] = [`import: ${fmt(s.lines)} lines in ${s.seconds.toFixed(1)} s`, `  stored     ${fmt(s.stored)}`, `  duplicate  ${fmt(s.duplicate)}`];
  for (const [k, v] of Object.entries(s.notStored)) out.push(`  ${k.padEnd(10)} ${fmt(v)} (not stored)`);
  out.push(`  rejected   ${fmt(s.rejected)}${s.invalid ? ` (${fmt(s.invalid)} invalid: malformed, or a wrong id or signature)` : ''}`);
  for (const [k, v] of Object.entries(s.reasons).sort((a, b) => b[1] - a[1])) out.push(`    ${fmt(v).padStart(8)}  ${k}`);
  if (s.examples.length) {
    out.push('  first rejected lines:');
    for (const e of s.examples.slice(0, 10)) out.push(`    line ${e.line}: ${e.reason}`);
  }
  process.stderr.write(out.join('\n') + '\n');
  if (json) process.stdout.write(JSON.stringify(s) + '\n');
  return strict && s.rejected > 0 ? 1 : 0;
}
