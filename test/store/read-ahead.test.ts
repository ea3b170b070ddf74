// store.readAhead reaches the kernel: the running relay's mapping of data.mdb carries the random-
// access hint (VmFlags "rr", LMDB's MDB_NORDAHEAD) by default and not when the operator turns
// read-ahead on. Read from /proc/PID/smaps of the real relay process (Linux only).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { startRelayProcess } from '../helpers/relay-process.js';
import { runCli } from '../helpers/cli.js';

/** The VmFlags of the process's mapping of `<dataDir>/data.mdb`. */
function dataMapFlags(pid: number, dataDir: string): string[] {
  const lines = readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n');
  const start = lines.findIndex((l) => l.endsWith(`${dataDir}/data.mdb`));
  assert.ok(start >= 0, 'data.mdb is mapped by the relay');
  const flags = lines.slice(start + 1).find((l) => l.startsWith('VmFlags:'));
  assert.ok(flags, 'the mapping has VmFlags');
  return flags.slice('VmFlags:'.length).trim().split(/\s+/);
}

const linux = existsSync('/proc/self/smaps');

test('by default the store is mapped without read-ahead (random-access hint)', { skip: !linux && 'no /proc/PID/smaps' }, async () => {
  const relay = await startRelayProcess();
  try {
    assert.ok(dataMapFlags(relay.proc.pid!, relay.dataDir).includes('rr'));
  } finally {
    await relay.cleanup();
  }
});

test('store.readAhead=true maps the store with the kernel read-ahead', { skip: !linux && 'no /proc/PID/smaps' }, async () => {
  const relay = await startRelayProcess({ env: { ORBWEAVER_STORE_READ_AHEAD: 'true' } });
  try {
    const flags = dataMapFlags(relay.proc.pid!, relay.dataDir);
    assert.ok(!flags.includes('rr'), `no random-access hint: ${flags.join(' ')}`);
  } finally {
    await relay.cleanup();
  }
});

test('a store.readAhead that is not a boolean is refused, naming the key', () => {
  const r = runCli(['config'], { env: { ORBWEAVER_STORE_READ_AHEAD: 'maybe' } });
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /store\.readAhead|ORBWEAVER_STORE_READ_AHEAD/);
});
