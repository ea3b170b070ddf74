// import-load: times any relay's bulk import of a JSON-lines file (`orbweaver import`, `strfry
// import`, ...). This process feeds the file to the command's stdin itself, so the rate per N lines
// is known whatever the command prints: the pipe holds 64 KiB, and an importer takes lines only as
// fast as it stores them (plus what it keeps in flight, a constant lead). One JSON line on stdout:
// wall seconds, the seconds at which every N lines had been taken, the command's peak anonymous
// memory (it and its children, sampled from /proc every 100 ms), the bytes the machine's disks wrote meanwhile
// (/sys/block, after a sync: page cache write-back included, which a process's own counters miss)
// and the data directory's size on disk afterwards.
//
//   node dist/bench/import-load.js --file /tmp/dir600k.jsonl --data /tmp/ow600k \
//     --cmd 'node dist/src/cli.js import --data /tmp/ow600k'
//   node dist/bench/import-load.js --file /tmp/dir600k.jsonl --data /tmp/strfry-db \
//     --cmd 'strfry --config /tmp/strfry.conf import'
import { execFileSync, spawn } from 'node:child_process';
import { createReadStream, existsSync, readdirSync, readFileSync } from 'node:fs';
import { once } from 'node:events';
import { formatHelp, num, parseArgs, UsageError, type OptSpec, type Opts } from './lib/args.js';
import { emit, log, machine } from './lib/report.js';

const USAGE = `usage: import-load --file FILE --cmd 'COMMAND' [--every 100000] [--data DIR] [--label S]
  feeds FILE to COMMAND's stdin (run by sh -c), and reports wall time, seconds per --every lines,
  the command's peak RssAnon, bytes written to the machine's disks and DIR's size on disk`;

/** Sectors written by the machine's disks (whole devices, not partitions, loop or RAM disks), in bytes. */
function diskBytesWritten(): number {
  let sectors = 0;
  for (const dev of readdirSync('/sys/block')) {
    if (/^(loop|ram|zram|dm-|md)/.test(dev)) continue;
    const f = `/sys/block/${dev}/stat`;
    if (existsSync(f)) sectors += Number(readFileSync(f, 'utf8').trim().split(/\s+/)[6] ?? 0);
  }
  return sectors * 512;
}

/** The process and its descendants, from every /proc/N/stat's parent pid. */
function tree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(name));
      children.set(ppid, list);
    } catch { /* gone meanwhile */ }
  }
  const out: number[] = [];
  for (let todo = [root]; todo.length > 0;) {
    const pid = todo.pop()!;
    out.push(pid);
    todo.push(...(children.get(pid) ?? []));
  }
  return out;
}

/** RssAnon of the process tree in bytes (0 for processes gone meanwhile). */
function rssAnon(root: number): number {
  let kb = 0;
  for (const pid of tree(root)) {
    try {
      const m = /RssAnon:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      if (m) kb += Number(m[1]);
    } catch { /* gone */ }
  }
  return kb * 1024;
}

/** Bytes the directory's files occupy on disk (sparse files count their allocated blocks only). */
function duBytes(dir: string): number {
  return Number(execFileSync('du', ['-s', '--block-size=1', dir], { encoding: 'utf8' }).split('\t')[0]);
}

const OPTIONS: OptSpec[] = [
  { name: 'file', type: 'string', help: 'the JSON-lines file to import (required)' },
  { name: 'cmd', type: 'string', help: "the import command, run by sh -c, which reads the file on stdin, e.g. 'strfry import' (required)" },
  { name: 'every', type: 'int', default: 100_000, help: 'lines per mark (seconds_per_every)' },
  { name: 'data', type: 'string', help: "the command's data directory, measured after it ends" },
  { name: 'label', type: 'string', help: 'copied into the result' },
];

async function main(argv: string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) { process.stdout.write(`${USAGE}\n${formatHelp(OPTIONS, '  ')}\n`); return 0; }
  let o: Opts;
  try {
    o = parseArgs(argv, OPTIONS);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(`${e.message}\n${USAGE}\n`);
    return 2;
  }
  const v = { file: o.file as string | undefined, cmd: o.cmd as string | undefined, data: o.data as string | undefined, label: o.label as string | undefined };
  const every = num(o, 'every');
  const problem = !v.file ? '--file is required (the JSON-lines file to import)'
    : !existsSync(v.file) ? `--file ${v.file}: no such file`
    : !v.cmd ? "--cmd is required (the import command, which reads the file on stdin, e.g. 'strfry import')"
    : every < 1 ? '--every must be a positive integer (lines per mark)'
    : v.data !== undefined && !existsSync(v.data) ? `--data ${v.data}: no such directory (the command's data directory, measured after it ends)`
    : null;
  if (problem) { process.stderr.write(`${problem}\n${USAGE}\n`); return 2; }

  execFileSync('sync');
  const disk0 = diskBytesWritten();
  const t0 = performance.now();
  const child = spawn('sh', ['-c', v.cmd!], { stdio: ['pipe', 'ignore', 'pipe'] });
  let stderrTail = '';
  child.stderr.on('data', (d: Buffer) => { stderrTail = (stderrTail + d.toString()).slice(-4000); });
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  let peakAnon = 0;
  // every 100 ms: a /proc scan costs about a millisecond, and a short import is still seen
  const sampler = setInterval(() => { peakAnon = Math.max(peakAnon, rssAnon(child.pid!)); }, 100);

  // Feed the file line by line, noting when every `every` lines had been taken. A command that
  // stops reading early (it failed) ends the feed: EPIPE is its answer, not ours.
  const marks: number[] = [];
  let lines = 0;
  let fed = true;
  child.stdin.on('error', () => { fed = false; });
  const input = createReadStream(v.file!, { highWaterMark: 1 << 16 });
  let carry = 0;
  let lastByte = 10;
  for await (const chunk of input as AsyncIterable<Buffer>) {
    lastByte = chunk[chunk.length - 1] ?? lastByte;
    if (!fed || child.exitCode !== null) { fed = false; break; }
    // count whole lines in this chunk; a mark is taken once the chunk holding its line is taken
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) {
      lines++;
      if (lines % every === 0) carry++;
    }
    if (!child.stdin.write(chunk)) await Promise.race([once(child.stdin, 'drain'), exited]);
    for (; carry > 0; carry--) marks.push(Math.round((performance.now() - t0) / 100) / 10);
  }
  input.destroy();
  if (fed && lastByte !== 10) lines++; // a last line without its newline
  child.stdin.end();
  const [code, signal] = await exited;
  clearInterval(sampler);
  const wall = (performance.now() - t0) / 1000;
  if (code !== 0 || !fed) {
    process.stderr.write(`import-load: the command ${signal ? `was killed by ${signal}` : `exited with ${code}`}${fed ? '' : ' before taking the whole file'}: ${v.cmd}\n${stderrTail}\n`);
    return 1;
  }
  execFileSync('sync');
  const written = diskBytesWritten() - disk0;
  const perMark = marks.map((t, i) => Math.round((t - (i > 0 ? marks[i - 1]! : 0)) * 10) / 10);
  emit({
    bench: 'import-load', label: v.label ?? null, cmd: v.cmd, file: v.file, lines, wall_s: Math.round(wall * 10) / 10,
    lines_per_s: Math.round(lines / wall), every, seconds_per_every: perMark,
    peak_rss_anon_mb: Math.round(peakAnon / 1e6), disk_written_gb: Math.round(written / 1e8) / 10,
    data_mb: v.data ? Math.round(duBytes(v.data) / 1e6) : null, machine: machine(),
  });
  log(`${lines} lines in ${wall.toFixed(1)} s (${Math.round(lines / wall)}/s); seconds per ${every}: ${perMark.join(', ') || '-'}`);
  return 0;
}

process.exitCode = await main(process.argv.slice(2));
