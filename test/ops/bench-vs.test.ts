// The benchmarks' side-by-side mode (bench/lib/compare.ts) as an operator runs it: two real relays,
// `--vs` and `--rounds`, small sizes. It checks what the comparison relies on: both relays measured
// in every round, the order flipped every round, the same answers from both, every ingest round on
// events neither relay has, and the summary of medians and ratios.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, startRelayProcess, tempDir, type RelayProcess } from '../helpers/relay-process.js';

/** bench/relay-limits.env: the limits the benchmarks are run with (one client far above a person's rate). */
function benchLimits(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of readFileSync(join(ROOT, 'bench/relay-limits.env'), 'utf8').split('\n')) {
    const m = /^([A-Z0-9_]+)=(.*)$/.exec(line.trim());
    if (m) env[m[1]!] = m[2]!;
  }
  return env;
}

function bench(args: string[], cacheDir: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [join(ROOT, 'dist/bench/run.js'), ...args], { cwd: ROOT, env: { ...process.env, TMPDIR: cacheDir }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d) => (stdout += d));
    p.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => p.kill('SIGKILL'), 120_000);
    p.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const results = (stdout: string) => stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);

test('--vs measures two relays in alternation, flipping the order every round, and summarises the ratios', async () => {
  const cache = tempDir('orbweaver-bench-cache-');
  const relays: RelayProcess[] = [];
  try {
    for (let i = 0; i < 2; i++) relays.push(await startRelayProcess({ env: benchLimits() }));
    const [a, b] = relays as [RelayProcess, RelayProcess];
    const vs = ['--url', a.url, '--label', 'first', '--vs', b.url, '--vs-label', 'second', '--rounds', '2'];

    // ingest: each round a new data set, stored by both relays in full
    const ing = await bench(['ingest', ...vs, '--count', '300', '--authors', '8', '--connections', '4', '--inflight', '20'], cache);
    assert.equal(ing.code, 0, ing.stderr);
    const ir = results(ing.stdout);
    assert.deepEqual(ir.map((r) => `${r.round}${r.side}`), ['1a', '1b', '2b', '2a']);
    for (const r of ir) {
      assert.equal(r.stored, 300, `round ${r.round} side ${r.side}: every event of the round is new to the relay`);
      assert.equal(r.duplicates, 0);
      assert.equal(r.label, r.side === 'a' ? 'first' : 'second');
      assert.equal(r.url, r.side === 'a' ? a.url : b.url);
    }
    assert.match(ing.stderr, /ingest, events\/s stored: medians of 2 round\(s\); a = first, b = second/);
    assert.match(ing.stderr, /\| ingest +\|[^\n]*\| +[\d.]+x \|/);

    // directory: loads both, then every shape on both relays in each round, same answers
    const dir = await bench(['directory', ...vs, '--authors', '60', '--shapes', 'follows,profiles', '--profile-authors', '10', '--duration', '1', '--warmup', '0'], cache);
    assert.equal(dir.code, 0, dir.stderr);
    const dr = results(dir.stdout);
    assert.deepEqual(dr.map((r) => `${r.round}${r.shape}${r.side}`), ['1followsa', '1followsb', '1profilesa', '1profilesb', '2followsb', '2followsa', '2profilesb', '2profilesa']);
    for (const r of dr) {
      assert.ok((r.queries as number) > 0, `${r.shape} on ${r.side}: queries answered`);
      assert.equal(r.errors, 0);
      assert.equal(r.events_per_query, r.shape === 'follows' ? 1 : 10, `${r.shape} on ${r.side}: the whole answer`);
    }
    assert.match(dir.stderr, /directory, queries\/s: medians of 2 round\(s\); a = first, b = second/);
    assert.match(dir.stderr, /\| follows +\|/);
  } finally {
    for (const r of relays) await r.cleanup();
    rmSync(cache, { recursive: true, force: true });
  }
});

test('--vs must be a relay URL', async () => {
  const cache = tempDir('orbweaver-bench-cache-');
  const r = await bench(['directory', '--url', 'ws://127.0.0.1:1', '--vs', '127.0.0.1:2'], cache);
  rmSync(cache, { recursive: true, force: true });
  assert.equal(r.code, 2);
  assert.match(r.stderr, /--vs takes a relay URL \(ws:\/\/HOST:PORT\), got 127\.0\.0\.1:2/);
});
