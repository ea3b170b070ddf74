// orbweaver import / export / stats as a user runs them: a JSONL file with bad lines is reported
// and the rest stored; export -> import into an empty store gives the same events; SIGTERM while
// clients publish loses no acknowledged event and exits 0.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLI, ROOT, startRelayProcess, tempDir } from '../helpers/relay-process.js';
import { Author, Client, now } from '../helpers/client.js';

function cli(args: string[], input?: string) {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd: ROOT, input, encoding: 'utf8', timeout: 60_000, env: { ...process.env, ORBWEAVER_LOG_LEVEL: 'warn' }, maxBuffer: 256 << 20 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

test('import of a JSONL file with bad lines reports them and stores the rest', () => {
  const dir = tempDir();
  try {
    const a = new Author();
    const good = Array.from({ length: 30 }, (_, i) => a.sign({ created_at: now() - 100 + i, content: `line ${i}` }));
    const forged = { ...a.sign({ content: 'forged' }), content: 'changed' };
    const lines = [
      ...good.slice(0, 10).map((e) => JSON.stringify(e)),
      'this is not json',
      '',
      JSON.stringify(forged),
      JSON.stringify({ kind: 1 }),
      ...good.slice(10, 29).map((e) => JSON.stringify(e)),
      JSON.stringify(['EVENT', good[29]]),
      JSON.stringify(good[0]),
    ];
    const file = join(dir, 'in.jsonl');
    writeFileSync(file, lines.join('\n') + '\n');
    const r = cli(['import', '--data', join(dir, 'db'), '--json', file]);
    assert.equal(r.status, 0, r.stderr);
    const s = JSON.parse(r.stdout);
    assert.equal(s.stored, 30);
    assert.equal(s.duplicate, 1);
    assert.equal(s.rejected, 3);
    assert.equal(s.reasons['invalid: line is not JSON'], 1);
    assert.equal(s.reasons['invalid: event id does not match its content'], 1);
    assert.deepEqual(s.examples.map((e: { line: number }) => e.line), [11, 13, 14]);
    assert.match(r.stderr, /stored +30/);
    assert.match(r.stderr, /rejected +3/);
    // --strict turns rejected lines into exit code 1; nothing new is stored the second time
    const again = cli(['import', '--data', join(dir, 'db'), '--json', '--strict'], readFileSync(file, 'utf8'));
    assert.equal(again.status, 1);
    assert.equal(JSON.parse(again.stdout).duplicate, 31);
    const st = cli(['stats', '--data', join(dir, 'db'), '--json']);
    assert.equal(st.status, 0, st.stderr);
    const stats = JSON.parse(st.stdout);
    assert.equal(stats.events, 30);
    assert.deepEqual(stats.kinds, [{ kind: 1, events: 30 }]);
    assert.deepEqual(stats.topAuthors, [{ pubkey: a.pk, events: 30 }]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

const SCRIPT = ['/usr/bin/script', '/bin/script'].find((p) => existsSync(p));

test('import of a file it cannot read says which and what to give instead, and opens no store', () => {
  const dir = tempDir();
  try {
    for (const [input, why] of [[join(dir, 'missing.jsonl'), 'no such file'], [dir, 'is a directory']] as const) {
      const data = join(dir, 'db');
      const r = cli(['import', '--data', data, input]);
      assert.equal(r.status, 2, r.stderr);
      assert.ok(r.stderr.startsWith(`orbweaver import: `), r.stderr);
      assert.ok(r.stderr.includes(input) && r.stderr.includes(why), r.stderr);
      assert.match(r.stderr, /give the path of a JSONL file/);
      assert.doesNotMatch(r.stderr, /\n +at /, 'no stack trace');
      assert.equal(existsSync(data), false, 'nothing opened');
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('import runs itself with a bounded heap (320 MB, more for a larger window, NODE_OPTIONS wins) from a parent that loads nothing else; SIGTERM stops it whole', async () => {
  const dir = tempDir();
  try {
    const a = new Author();
    const file = join(dir, 'in.jsonl');
    writeFileSync(file, Array.from({ length: 5 }, (_, i) => JSON.stringify(a.sign({ created_at: now() - 10 + i }))).join('\n') + '\n');
    const heapOf = (args: string[], env: Record<string, string> = {}) => {
      const r = spawnSync(process.execPath, [CLI, 'import', '--json', '--data', join(dir, 'db'), ...args, file], { cwd: ROOT, encoding: 'utf8', timeout: 60_000, env: { ...process.env, NODE_OPTIONS: '', ORBWEAVER_LOG_LEVEL: 'warn', ...env } });
      assert.equal(r.status, 0, r.stderr);
      return JSON.parse(r.stdout).oldSpaceMb;
    };
    assert.equal(heapOf([]), 320, 'the default window');
    assert.equal(heapOf(['--window', '30000']), 488, '128 MB + 12 KB per event in flight');
    assert.equal(heapOf([], { NODE_OPTIONS: '--max-old-space-size=300' }), 300, "the operator's limit is kept");

    // The work runs in a child process: a signal to the command an operator started stops both.
    const data = join(dir, 'piped');
    const imp = spawn(process.execPath, [CLI, 'import', '--data', data], { cwd: ROOT, stdio: ['pipe', 'ignore', 'pipe'], env: { ...process.env, NODE_OPTIONS: '', ORBWEAVER_LOG_LEVEL: 'warn' } });
    let err = '';
    imp.stderr.on('data', (d) => { err += d; });
    imp.stdin.write(readFileSync(file));
    const children = () => spawnSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' }).stdout.split('\n')
      .filter((l) => l.includes(`--data ${data}`) && Number(l.trim().split(' ')[0]) !== imp.pid);
    const t0 = Date.now();
    while (children().length === 0 && Date.now() - t0 < 20_000) await new Promise((r) => setTimeout(r, 100));
    assert.equal(children().length, 1, 'one child process does the import');
    // the process that only waits for it loaded neither the store nor its native LMDB binding
    // (cli.ts decides the rerun first): ~8 MB of anonymous memory instead of ~29, all through the import
    if (existsSync(`/proc/${imp.pid}/maps`)) {
      assert.doesNotMatch(readFileSync(`/proc/${imp.pid}/maps`, 'utf8'), /lmdb/, 'the waiting parent did not load LMDB');
    }
    // it stores the five lines while the pipe stays open: wait until a reader sees them (a fixed
    // wait of 1.5 s was too short on a loaded machine)
    const stored = (): number => {
      const r = cli(['stats', '--data', data, '--json']);
      return r.status === 0 ? (JSON.parse(r.stdout) as { events: number }).events : -1;
    };
    const t2 = Date.now();
    while (stored() < 5 && Date.now() - t2 < 60_000) await new Promise((r) => setTimeout(r, 200));
    const exited = new Promise<number | null>((r) => imp.once('exit', (code) => r(code)));
    imp.kill('SIGTERM');
    const code = await exited;
    assert.notEqual(code, 0, err);
    const t1 = Date.now();
    while (children().length > 0 && Date.now() - t1 < 10_000) await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(children(), [], 'the child is gone too');
    const st = cli(['stats', '--data', data, '--json']);
    assert.equal(st.status, 0, st.stderr);
    assert.equal(JSON.parse(st.stdout).events, 5, 'what it took before the signal is stored');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('import progress: plain lines a log can keep into a pipe; a bar redrawn in place on a terminal', { skip: SCRIPT ? false : 'script(1) (util-linux) is not installed: no terminal to test the bar on' }, () => {
  const dir = tempDir();
  try {
    const a = new Author();
    const file = join(dir, 'in.jsonl');
    writeFileSync(file, Array.from({ length: 50 }, (_, i) => JSON.stringify(a.sign({ created_at: now() - 100 + i, content: `line ${i}` }))).join('\n') + '\n');
    // stderr into a pipe (as under a service manager or `2>> import.log`)
    const piped = cli(['import', '--data', join(dir, 'piped'), file]);
    assert.equal(piped.status, 0, piped.stderr);
    assert.match(piped.stderr, /^import: \d+\.\d% of 0\.0 MB read, 1 lines, \d+ stored, \d+ duplicate, 0 rejected, [\d,]+ lines\/s$/m);
    assert.doesNotMatch(piped.stderr, /[\r\x1b]|\[[#.]+\]/, 'no carriage return, no escape sequence, no bar');
    // the time and tag entries it held back are merged at the end, and that shows (its first part at once)
    assert.match(piped.stderr, /^import: merging what it held back: [\d,]+ of [\d,]+ time and tag entries \(\d+\.\d%\)$/m);
    assert.match(piped.stderr, /stored +50/);
    // the same on a terminal (script(1) gives the command a pseudo-terminal)
    const cmd = [process.execPath, CLI, 'import', '--data', join(dir, 'tty'), file].map((x) => `'${x}'`).join(' ');
    const tty = spawnSync(SCRIPT!, ['-qec', cmd, '/dev/null'], { cwd: ROOT, encoding: 'utf8', timeout: 60_000, env: { ...process.env, ORBWEAVER_LOG_LEVEL: 'warn' } });
    assert.equal(tty.status, 0, tty.stdout + tty.stderr);
    assert.match(tty.stdout, /\r\[[#.]{30}\] \d+\.\d% [\d,]+ lines, /, 'a bar');
    assert.match(tty.stdout, /\x1b\[K/, 'redrawn in place');
    assert.match(tty.stdout, /stored +50/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('export -> import round trip gives the same store (filters too)', async () => {
  const dir = tempDir();
  try {
    const relay = await startRelayProcess({ dataDir: join(dir, 'a') });
    const c = await Client.open(relay.url);
    const authors = [new Author(), new Author(), new Author()];
    const t = now() - 1000;
    for (const [i, a] of authors.entries()) {
      await c.publish(a.sign({ kind: 0, created_at: t, content: '{"name":"old"}' }));
      await c.publish(a.sign({ kind: 0, created_at: t + 1, content: `{"name":"a${i}"}` }));
      await c.publish(a.sign({ kind: 30023, created_at: t + 2, tags: [['d', 'post'], ['t', 'x']], content: 'article' }));
      for (let k = 0; k < 20; k++) await c.publish(a.sign({ created_at: t + 10 + k, tags: [['p', authors[(i + 1) % 3].pk]], content: `note ${k} "quoted" \u2603\n` }));
      const gone = a.sign({ created_at: t + 50, content: 'to be deleted' });
      await c.publish(gone);
      await c.publish(a.sign({ kind: 5, created_at: t + 51, tags: [['e', gone.id]] }));
    }
    c.close();
    assert.equal(await relay.stop(), 0);

    const exp = cli(['export', '--data', join(dir, 'a')]);
    assert.equal(exp.status, 0, exp.stderr);
    const lines = exp.stdout.trim().split('\n');
    assert.equal(lines.length, 3 * (1 + 1 + 20 + 1), 'latest kind 0, the article, 20 notes, the deletion; not the old kind 0 nor the deleted note');
    const imp = cli(['import', '--data', join(dir, 'b'), '--json'], exp.stdout);
    assert.equal(imp.status, 0, imp.stderr);
    assert.equal(JSON.parse(imp.stdout).stored, lines.length);
    const exp2 = cli(['export', '--data', join(dir, 'b')]);
    assert.equal(exp2.stdout, exp.stdout, 'same events, same order, byte for byte');

    const f = cli(['export', '--data', join(dir, 'b'), '--filter', JSON.stringify({ kinds: [0, 30023], authors: [authors[0].pk] })]);
    const got = f.stdout.trim().split('\n').map((l) => JSON.parse(l));
    assert.deepEqual(got.map((e) => e.kind).sort(), [0, 30023]);
    const limited = cli(['export', '--data', join(dir, 'b'), '--filter', '{"kinds":[1],"limit":5}']);
    assert.equal(limited.stdout.trim().split('\n').length, 5);
    const bad = cli(['export', '--data', join(dir, 'b'), '--filter', '{"kinds":"x"}']);
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /--filter: kinds/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('SIGTERM during ingest loses no acknowledged event and exits 0; a restart serves them all', async () => {
  const dir = tempDir();
  try {
    const relay = await startRelayProcess({ dataDir: dir });
    const authors = Array.from({ length: 4 }, () => new Author());
    const clients = await Promise.all(authors.map(() => Client.open(relay.url)));
    const acked: string[] = [];
    let stop = false;
    const writers = clients.map(async (c, i) => {
      for (let n = 0; !stop && n < 2000; n++) {
        const batch = Array.from({ length: 25 }, (_, k) => authors[i].sign({ content: `${n}-${k}` }));
        for (const ev of batch) c.send(['EVENT', ev]);
        for (const ev of batch) {
          try {
            const m = await c.next((m) => m[0] === 'OK' && m[1] === ev.id, 15000);
            if (m[2] === true) acked.push(ev.id);
          } catch {
            return; // the relay closed the connection
          }
        }
      }
    });
    for (let i = 0; i < 3000 && acked.length < 500; i++) await new Promise((r) => setTimeout(r, 10));
    assert.ok(acked.length >= 500, 'writes were flowing');
    const code = await relay.stop();
    stop = true;
    await Promise.all(writers);
    assert.equal(code, 0, 'clean exit');
    assert.ok(relay.logs.some((l) => l.msg === 'stopped'));
    for (const c of clients) assert.ok(c.closed, 'connections were closed by the relay');

    const again = await startRelayProcess({ dataDir: dir });
    const c = await Client.open(again.url);
    const missing: string[] = [];
    for (let i = 0; i < acked.length; i += 250) {
      const chunk = acked.slice(i, i + 250);
      const { events } = await c.query({ ids: chunk, limit: chunk.length });
      const have = new Set(events.map((e) => e.id));
      for (const id of chunk) if (!have.has(id)) missing.push(id);
    }
    c.close();
    await again.stop();
    assert.deepEqual(missing, [], `${missing.length} of ${acked.length} acknowledged events lost`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
