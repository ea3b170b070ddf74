// bench/import-load.ts as an operator runs it against an importer: a netgen file fed to the real
// `orbweaver import` on stdin, the result line checked against what the store then holds; a
// command that fails and a missing option get answers that name them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, tempDir } from '../helpers/relay-process.js';

function run(script: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [join(ROOT, script), ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d) => (stdout += d));
    p.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => p.kill('SIGKILL'), 180_000);
    p.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

test('import-load feeds a file to an import command and reports its rate, memory and size', async () => {
  const dir = tempDir('orbweaver-import-load-');
  try {
    const file = join(dir, 'dir.jsonl');
    const gen = await run('dist/bench/netgen.js', ['--authors', '100', '--out', file]);
    assert.equal(gen.code, 0, gen.stderr);
    const data = join(dir, 'data');
    mkdirSync(data);
    const cmd = `'${process.execPath}' '${join(ROOT, 'dist/src/cli.js')}' import --data '${data}'`;
    const r = await run('dist/bench/import-load.js', ['--file', file, '--cmd', cmd, '--every', '100', '--data', data, '--label', 'test']);
    assert.equal(r.code, 0, r.stderr);
    const result = JSON.parse(r.stdout.trim().split('\n').pop()!) as Record<string, unknown>;
    assert.equal(result.bench, 'import-load');
    assert.equal(result.label, 'test');
    assert.equal(result.lines, 300, 'netgen writes three events per author');
    assert.equal((result.seconds_per_every as number[]).length, 3, 'one mark per 100 lines');
    assert.ok((result.peak_rss_anon_mb as number) > 0, 'the importer was sampled while it ran');
    assert.ok((result.data_mb as number) > 0);
    // what the command stored is what was fed
    const stats = await run('dist/src/cli.js', ['stats', '--json', '--no-scan', '--data', data]);
    assert.equal(stats.code, 0, stats.stderr);
    assert.equal((JSON.parse(stats.stdout) as { events: number }).events, 300);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('import-load names a command that fails, and a missing option', async () => {
  const dir = tempDir('orbweaver-import-load-');
  try {
    const file = join(dir, 'one.jsonl');
    const gen = await run('dist/bench/netgen.js', ['--authors', '2', '--out', file]);
    assert.equal(gen.code, 0, gen.stderr);
    const cmd = `'${process.execPath}' '${join(ROOT, 'dist/src/cli.js')}' import --no-such-flag`;
    const r = await run('dist/bench/import-load.js', ['--file', file, '--cmd', cmd]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /the command exited with \d+/);
    assert.ok(r.stderr.includes('--no-such-flag'), 'the command and its own error are shown');
    assert.equal(r.stdout, '', 'no result line for a failed import');

    const u = await run('dist/bench/import-load.js', ['--file', file]);
    assert.equal(u.code, 2);
    assert.match(u.stderr, /--cmd is required/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
