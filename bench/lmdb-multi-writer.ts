// Several processes writing one LMDB environment through lmdb-js, with none of orbweaver's code:
// the reproduction of the lost transactions found on 2026-11-29 (docs/storage.md, "Several
// writer processes"). One process writes without pause; pairs of fresh processes open the same
// environment, each write a few transactions and exit. Every transaction adds one record under a
// serial read from the store inside the transaction, so a transaction that started from a stale
// snapshot shows as a serial written twice, and a lost one as fewer records than acknowledged.
//   node dist/bench/lmdb-multi-writer.js [--writemap] [--store-free-list] [--readers] [--rounds 30] [--per-child 3] [--dir D]
// --readers: the fresh processes write nothing; each opens the environment read-only (MDB_RDONLY),
// reads a count and closes it, --per-child times (the fifteenth session's finding, docs/storage.md
// "Readers write nothing"); --no-close: each leaves its last open to its exit, without closing it.
// --store-free-list opens with the store's free-list bounds (FREE_LIST_OPTIONS, src/store/env.ts)
// instead of lmdb-js's defaults.
// The cause (sixteenth session, docs/storage.md "Readers that reset the writer"): lmdb-js's
// mdb_env_open2 sets the lock file's last transaction id from the meta page each opener read; an
// opener that read it just before a commit sends the writer's next transaction back to the older
// meta page. Built with that assignment removed, this lost nothing in eight runs.
// Prints what was acknowledged and what the store holds; exits 1 when they differ. Run two at once
// (or beside a busy core) to see it: on the 2-vCPU test machine most such runs lost 1-3
// transactions or failed a commit with MDB_BAD_TXN (mdb_page_touch), with and without --writemap.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { open } from 'lmdb';
import { FREE_LIST_OPTIONS } from '../src/store/env.js';

const args = process.argv.slice(2);
const flag = (name: string): boolean => args.includes(name);
const value = (name: string, dflt: string): string => {
  const i = args.indexOf(name);
  return i >= 0 && args[i + 1] ? args[i + 1] : dflt;
};
const role = value('--role', 'main');
const writemap = flag('--writemap');
const storeFreeList = flag('--store-free-list');
const rounds = Number(value('--rounds', '30'));
const perChild = Number(value('--per-child', '3'));
const readers = flag('--readers');
const ownDir = !args.includes('--dir');
const dir = ownDir ? mkdtempSync(join(tmpdir(), 'lmdb-multi-writer-')) : value('--dir', '');
const options = { path: dir, noSubdir: false, useWritemap: writemap, overlappingSync: false, maxDbs: 64, mapSize: 64 * 1024 ** 3, ...(storeFreeList ? FREE_LIST_OPTIONS : {}) } as Parameters<typeof open>[0];

if (role === 'reader') {
  for (let i = 0; i < perChild; i++) {
    const ro = open({ ...options, readOnly: true });
    const db = ro.openDB<Buffer, Buffer>({ name: 'db.0', keyEncoding: 'binary', encoding: 'binary' });
    (db.getStats() as { entryCount: number }).entryCount;
    // --no-close: the last open is left to the process's exit (no mdb_env_close)
    if (!(flag('--no-close') && i === perChild - 1)) await ro.close();
  }
  process.stdout.write('0\n');
  process.exit(0);
}

// the store's shape in small: many named databases, a serial counter, a record and a few index keys per write
const env = open(options);
const dbs = Array.from({ length: 20 }, (_, i) => env.openDB<Buffer, Buffer>({ name: `db.${i}`, keyEncoding: 'binary', encoding: 'binary' }));
const meta = env.openDB<number, string>({ name: 'meta' });

const writeOne = (): Promise<unknown> =>
  env.transaction(() => {
    let next = meta.get('next') ?? 1;
    for (const k of dbs[0].getKeys({ reverse: true, limit: 1 })) next = Math.max(next, k.readUIntBE(0, 5) + 1);
    const serial = Buffer.alloc(5);
    serial.writeUIntBE(next, 0, 5);
    dbs[0].putSync(serial, randomBytes(300));
    dbs[1].putSync(randomBytes(32), serial);
    for (let i = 2; i < 8; i++) dbs[i].putSync(Buffer.concat([randomBytes(8), serial]), Buffer.alloc(0));
    meta.putSync('next', next + 1);
  });

async function writeMany(until: () => boolean): Promise<number> {
  let acked = 0;
  const inFlight: Promise<unknown>[] = [];
  while (!until()) {
    inFlight.push(writeOne().then(() => acked++));
    if (inFlight.length >= 2) await inFlight.shift();
  }
  await Promise.all(inFlight);
  return acked;
}

if (role === 'child') {
  let n = 0;
  const acked = await writeMany(() => n++ >= perChild);
  await env.close();
  process.stdout.write(`${acked}\n`);
  process.exit(0);
}

const self = fileURLToPath(import.meta.url);
const child = (): Promise<number> =>
  new Promise((resolve) => {
    const c = spawn(process.execPath, [self, '--role', readers ? 'reader' : 'child', '--dir', dir, '--per-child', String(perChild), ...(flag('--no-close') ? ['--no-close'] : []), ...(writemap ? ['--writemap'] : []), ...(storeFreeList ? ['--store-free-list'] : [])], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    c.stdout.on('data', (d: Buffer) => (out += d.toString()));
    c.on('exit', () => resolve(Number(out.trim()) || 0));
  });
let stop = false;
let theirs = 0;
const children = (async () => {
  for (let i = 0; i < rounds; i++) for (const n of await Promise.all([child(), child()])) theirs += n;
  stop = true;
})();
const mine = await writeMany(() => stop);
await children;
env.resetReadTxn();
const records = (dbs[0].getStats() as { entryCount: number }).entryCount;
const ids = (dbs[1].getStats() as { entryCount: number }).entryCount;
const acked = mine + theirs;
console.log(`${readers ? 'read-only openers, ' : ''}write map ${writemap}, ${storeFreeList ? "the store's" : "lmdb-js's default"} free-list bounds: acknowledged ${acked} (${mine} here, ${theirs} by ${rounds * 2} other processes); records ${records}, ids ${ids}${ids === acked && records === acked ? '' : `: ${acked - ids} acknowledged transactions lost`}`);
await env.close();
if (ownDir) rmSync(dir, { recursive: true, force: true });
process.exit(ids === acked && records === acked ? 0 : 1);
