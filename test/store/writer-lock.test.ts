// The store's writer lock (src/store/writer-lock.ts) on its own: who is the holder, what is stale,
// and that a lock another opener re-made after it was judged stale is not removed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { acquireWriterLock, removeStale, WRITER_LOCK_FILE, type LockRecord } from '../../src/store/writer-lock.js';
import { StoreBusyError } from '../../src/store/errors.js';
import { tempDir } from '../helpers/relay-process.js';

const startOf = (pid: number): string => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]!;
};
/** A pid whose process has exited. */
const deadPid = (): number => spawnSync(process.execPath, ['-e', '0']).pid!;

test('writer lock: a dead holder\'s lock and a half-written one are taken over; the release removes ours', async () => {
  const dir = tempDir();
  const file = join(dir, WRITER_LOCK_FILE);
  writeFileSync(file, JSON.stringify({ pid: deadPid(), started: '1', command: 'gone' }));
  const release = await acquireWriterLock(dir);
  assert.equal((JSON.parse(readFileSync(file, 'utf8')) as LockRecord).pid, process.pid);
  // a second store of this process shares it
  const again = await acquireWriterLock(dir);
  again();
  assert.ok(existsSync(file), 'the second open\'s release leaves the lock to the first');
  release();
  assert.equal(existsSync(file), false);

  writeFileSync(file, '{"pid":'); // a process that died while writing it
  const r2 = await acquireWriterLock(dir);
  assert.equal((JSON.parse(readFileSync(file, 'utf8')) as LockRecord).pid, process.pid);
  r2();
});

test('writer lock: a live holder is waited for, then refused by name; a reused pid is not the holder', async () => {
  const dir = tempDir();
  const file = join(dir, WRITER_LOCK_FILE);
  const holder = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)'], { stdio: 'ignore' });
  try {
    await new Promise((r) => setTimeout(r, 100));
    writeFileSync(file, JSON.stringify({ pid: holder.pid, started: startOf(holder.pid!), command: 'node holder' }));
    await assert.rejects(acquireWriterLock(dir, 300), (e: Error) => e instanceof StoreBusyError && e.message.includes(`pid ${holder.pid} (node holder)`) && e.message.includes('still after 0.3 s'));
    // the same pid with another start time is another program that got the pid: stale
    writeFileSync(file, JSON.stringify({ pid: holder.pid, started: '1', command: 'node holder' }));
    const release = await acquireWriterLock(dir, 300);
    assert.equal((JSON.parse(readFileSync(file, 'utf8')) as LockRecord).pid, process.pid);
    release();
  } finally {
    holder.kill('SIGKILL');
  }
});

test('writer lock: a lock judged stale is not removed once another opener has made its own', () => {
  const dir = tempDir();
  const file = join(dir, WRITER_LOCK_FILE);
  const stale: LockRecord = { pid: deadPid(), started: '1', command: 'gone' };
  // another opener took the stale lock over and made its own after this one read the stale record
  const theirs: LockRecord = { pid: process.pid, started: startOf(process.pid), command: 'the other opener' };
  writeFileSync(file, JSON.stringify(theirs));
  removeStale(file, stale);
  assert.equal((JSON.parse(readFileSync(file, 'utf8')) as LockRecord).command, 'the other opener');
  // still the stale record: removed
  writeFileSync(file, JSON.stringify(stale));
  removeStale(file, stale);
  assert.equal(existsSync(file), false);
});
