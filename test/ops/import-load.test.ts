// bench/import-load.ts as an operator runs it against an importer: a netgen file fed to the real
// `orbweaver import` on stdin, the result line checked against what the store then holds; a
// command that fails and a missing option get answers that name them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { runCli, runNode } from '../helpers/cli.js';
import { ROOT, tempDir } from '../helpers/relay-process.js';

const run = (script: string, args: string[]) => runNode(join(ROOT, script), args, { timeoutMs: 180_000 });

/** The orbweaver import command as a shell would run it. */
const IMPORT = `'${process.execPath}' '${join(ROOT, 'dist/src/cli.js')}' import`;

/** Runs `fn` on a netgen file of `authors` x 3 events in a temporary directory, removed afterwards. */
function withNetgenFile(authors: number, fn: (file: string, dir: string) => void): void {
  const dir = tempDir('orbweaver-import-load-');
  try {
    const file = join(dir, 'dir.jsonl');
    const gen = run('dist/bench/netgen.js', ['--authors', String(authors), '--out', file]);
    assert.equal(gen.status, 0, gen.stderr);
    fn(file, dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('import-load feeds a file to an import command and reports its rate, memory and size', () =>
  withNetgenFile(100, (file, dir) => {
    const data = join(dir, 'data');
    mkdirSync(data);
    const r = run('dist/bench/import-load.js', ['--file', file, '--cmd', `${IMPORT} --data '${data}'`, '--every', '100', '--data', data, '--label', 'test']);
    assert.equal(r.status, 0, r.stderr);
    const result = JSON.parse(r.stdout.trim().split('\n').pop()!) as Record<string, unknown>;
    assert.equal(result.bench, 'import-load');
    assert.equal(result.label, 'test');
    assert.equal(result.lines, 300, 'netgen writes three events per author');
    assert.equal((result.seconds_per_every as number[]).length, 3, 'one mark per 100 lines');
    assert.ok((result.peak_rss_anon_mb as number) > 0, 'the importer was sampled while it ran');
    assert.ok((result.data_mb as number) > 0);
    // what the command stored is what was fed
    const stats = runCli(['stats', '--json', '--no-scan', '--data', data]);
    assert.equal(stats.status, 0, stats.stderr);
    assert.equal((JSON.parse(stats.stdout) as { events: number }).events, 300);
  }));

test('import-load names a command that fails and a missing option, and counts a last line without its newline', () =>
  withNetgenFile(2, (file) => {
    const r = run('dist/bench/import-load.js', ['--file', file, '--cmd', `${IMPORT} --no-such-flag`]);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /the command exited with \d+/);
    assert.ok(r.stderr.includes('--no-such-flag'), 'the command and its own error are shown');
    assert.equal(r.stdout, '', 'no result line for a failed import');

    // a file whose last line has no newline: every line is still counted
    const trimmed = join(dirname(file), 'trimmed.jsonl');
    writeFileSync(trimmed, readFileSync(file, 'utf8').trimEnd());
    const t = run('dist/bench/import-load.js', ['--file', trimmed, '--cmd', 'cat > /dev/null']);
    assert.equal(t.status, 0, t.stderr);
    assert.equal((JSON.parse(t.stdout) as { lines: number }).lines, 6);

    const u = run('dist/bench/import-load.js', ['--file', file]);
    assert.equal(u.status, 2);
    assert.match(u.stderr, /--cmd is required/);
    const bogus = run('dist/bench/import-load.js', ['--file', file, '--bogus']);
    assert.equal(bogus.status, 2);
    assert.match(bogus.stderr, /unknown option --bogus\nusage: import-load/);
  }));

test('netgen answers --help, an unknown option, a bad number and a missing file with usage and exit 2, not a stack trace', () => {
  const help = run('dist/bench/netgen.js', ['--help']);
  assert.equal(help.status, 0);
  assert.match(help.stdout, /^usage: netgen --out FILE/);
  const cases: Array<[string[], RegExp]> = [
    [['--bogus'], /unknown option --bogus/],
    [[], /nothing to do: give --out FILE/],
    [['--out', '/tmp/never-written.jsonl', '--authors', 'many'], /--authors must be an integer, got many/],
    [['--out', '/tmp/never-written.jsonl', '--authors', '1'], /--authors must be at least 2 \(got 1\)/],
    [['--file', '/no/such/dir.jsonl', '--url', 'ws://127.0.0.1:1'], /--file \/no\/such\/dir\.jsonl: no such file/],
    [['--file', '/no/such/dir.jsonl', '--url', 'http://127.0.0.1:1'], /--url http:\/\/127\.0\.0\.1:1: expected ws:\/\//],
  ];
  for (const [args, message] of cases) {
    const r = run('dist/bench/netgen.js', args);
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, message);
    assert.match(r.stderr, /usage: netgen/);
    assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
  }
});

test('netgen --republish: each author re-publishes newer lists, all before now, at seconds of their own (no round shares one created_at); --republish-only writes the same lists alone', () => {
  const dir = tempDir('orbweaver-netgen-');
  try {
    const base = join(dir, 'base.jsonl');
    const rep = join(dir, 'rep.jsonl');
    const gen = run('dist/bench/netgen.js', ['--authors', '400', '--replacements', '0', '--out', base, '--republish', '1000', '--republish-out', rep]);
    assert.equal(gen.status, 0, gen.stderr);
    const lines = (f: string) => readFileSync(f, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { kind: number; pubkey: string; created_at: number; tags: string[][] });
    const last = new Map<string, number>();
    for (const e of lines(base)) if (e.kind === 3) last.set(e.pubkey, e.created_at);
    const repub = lines(rep);
    assert.equal(repub.length, 1000);
    const now = Math.floor(Date.now() / 1000);
    for (const e of repub) {
      assert.equal(e.kind, 3);
      assert.ok(e.created_at > last.get(e.pubkey)!, 'newer than the author\'s previous list');
      assert.ok(e.created_at < now, 'dated before now');
      last.set(e.pubkey, e.created_at);
    }
    const seconds = new Set(repub.map((e) => e.created_at)).size;
    assert.ok(seconds > 0.95 * repub.length, `${seconds} distinct created_at among ${repub.length} lists`);
    assert.equal(new Set(repub.map((e) => e.pubkey)).size, 100, 'every fourth author re-publishes');
    // --republish-only: the same authors and follows, the base neither signed nor written
    const only = join(dir, 'only.jsonl');
    const gen2 = run('dist/bench/netgen.js', ['--authors', '400', '--replacements', '0', '--republish', '1000', '--republish-out', only, '--republish-only']);
    assert.equal(gen2.status, 0, gen2.stderr);
    assert.deepEqual(lines(only).map((e) => [e.pubkey, e.tags]), repub.map((e) => [e.pubkey, e.tags]));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
